"""Helpers for sync tests: a bare remote, clones that share through it, ops and snapshots."""

from __future__ import annotations

from pathlib import Path

from looma_git.api import ledger, sync
from looma_git.gitrepo import RepoPaths, find_repo
from looma_git.ledger.ops import OpDraft
from looma_git.ledger.projections import note_texts, projection_files
from tests.helpers import git, make_repo


def make_remote(tmp: Path, commits: int = 3) -> Path:
    """A bare remote holding `commits` commits on main (no looma refs yet)."""
    bare = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", str(bare))
    seed = make_repo(tmp / "seed", commits=commits)
    git(seed, "remote", "add", "origin", str(bare))
    git(seed, "push", "-q", "origin", "main")
    return bare


def make_clone(tmp: Path, bare: Path, name: str, *, share: bool = True) -> RepoPaths:
    """`git clone` + `looma init` (+ `looma share enable`) through the api."""
    git(tmp, "clone", "-q", str(bare), name)
    paths = find_repo(tmp / name)
    ledger.init_repo(paths)
    if share:
        sync.share_enable(paths, "origin")
    return paths


def create(paths: RepoPaths, title: str, actor: str = "system", **payload: object) -> str:
    op = ledger.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                                       {"title": title, **payload})], actor=actor)[0]
    return "wi_" + op.id[:10]


def rename(paths: RepoPaths, wid: str, title: str) -> str:
    return ledger.append(paths, [OpDraft("workitem.rename", {"type": "workitem", "id": wid},
                                         {"title": title})], actor="user")[0].id


def link(paths: RepoPaths, sha: str, wid: str, actor: str = "system") -> str:
    return ledger.append(paths, [OpDraft("commit.link", {"type": "commit", "id": sha},
                                         {"workitem": wid, "confidence": 0.9, "by": "hook"})],
                         actor=actor)[0].id


def wt(paths: RepoPaths) -> Path:
    """The work tree of a clone (clones in these tests always have one)."""
    assert paths.worktree is not None
    return paths.worktree


def sha(paths: RepoPaths, name: str) -> str:
    """A ref that must exist."""
    value = ref(paths, name)
    assert value is not None, name
    return value


def ref(paths: RepoPaths, name: str) -> str | None:
    out = git(paths.common_dir, "rev-parse", "-q", "--verify", name, check=False)
    return out or None


def tree(paths: RepoPaths, name: str) -> str | None:
    return ref(paths, f"{name}^{{tree}}")


def op_ids(paths: RepoPaths) -> set[str]:
    """Op ids in the ledger tree, read back with the git binary."""
    out = git(paths.common_dir, "ls-tree", "-r", "--name-only", "refs/looma/ledger", "ops/")
    return {line.rsplit("/", 1)[-1].removesuffix(".yaml") for line in out.splitlines() if line}


def snapshot(paths: RepoPaths) -> dict[str, object]:
    """Everything that must be identical on converged clones."""
    state = ledger.load_state(paths)
    return {
        "projections": projection_files(state),
        "notes": note_texts(state),
        "conflicts": sorted((c.target, c.ops, c.kind, c.winner) for c in state.conflicts),
        "ledger_tree": tree(paths, "refs/looma/ledger"),
        "notes_tree": tree(paths, "refs/notes/looma"),
    }
