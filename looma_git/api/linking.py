"""Library surface of commit linking: the drainer's step, `link`/`unlink`, `relink`."""

from __future__ import annotations

from dataclasses import dataclass, field

from looma_git.errors import NotFoundError, UsageError
from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.settings import Settings


@dataclass
class LinkReport:
    """What a linking step did."""

    commits: int = 0
    linked: int = 0
    ops: dict[str, int] = field(default_factory=dict)


def link_commits(paths: RepoPaths, shas: list[str], *, by: str = "hook",
                 settings: Settings | None = None) -> LinkReport:
    """Refresh the work model and link exactly these commits (a commit that matches no
    WorkItem gets no link rather than a weak one). With an LLM configured, only its cached
    answers are used, so the hook path never waits on a model and agrees with `reprocess`."""
    from looma_git.api.refine import refine_and_publish

    if not shas:
        return LinkReport()
    report = refine_and_publish(paths, by=by, commits_revs=tuple(shas), no_walk=True,
                                settings=settings, offline=True)
    return LinkReport(commits=len(shas), linked=report.ops.get("commit.link", 0),
                      ops=dict(report.ops))


def _full_sha(paths: RepoPaths, rev: str) -> str:
    from looma_git.store.gitfacts import existing_objects

    worktree = require_worktree(paths)
    import subprocess

    proc = subprocess.run(["git", "rev-parse", "-q", "--verify", rev + "^{commit}"],
                          cwd=worktree, capture_output=True, text=True, check=False)
    sha = proc.stdout.strip()
    if not sha or not existing_objects(worktree, [sha]):
        raise NotFoundError(f"no commit {rev!r} in this repository")
    return sha


def user_link(paths: RepoPaths, rev: str, work_ref: str, *, rationale: str | None = None,
              unlink: bool = False) -> str:
    """A user `commit.link` / `commit.unlink` op; returns the op id."""
    from looma_git.api import ledger
    from looma_git.api.query import resolve_workitem
    from looma_git.ledger.ops import OpDraft
    from looma_git.store.gitfacts import list_commits, patch_ids

    sha = _full_sha(paths, rev)
    item = resolve_workitem(paths, work_ref)
    state = ledger.load_state(paths)
    live = (sha, item.id) in state.links
    if unlink and not live:
        raise UsageError(f"{sha[:10]} is not linked to {item.id}")
    if not unlink and live and state.links[(sha, item.id)].user:
        raise UsageError(f"{sha[:10]} is already linked to {item.id}")
    if unlink:
        draft = OpDraft(op="commit.unlink", target={"type": "commit", "id": sha},
                        payload={"workitem": item.id}, rationale=rationale)
    else:
        info = list_commits(require_worktree(paths), revs=(sha,), no_walk=True)
        files = sorted(set(info[0].files) & set(item.files)) if info else []
        draft = OpDraft(op="commit.link", target={"type": "commit", "id": sha},
                        payload={"workitem": item.id, "title": item.title, "confidence": 1.0,
                                 "by": "user", "files": files,
                                 "patch_id": patch_ids(require_worktree(paths), [sha]).get(sha),
                                 "branch": None, "why": {"user": 1.0}},
                        rationale=rationale)
    ops = ledger.append(paths, [draft], actor="user")
    return str(ops[0].id)
