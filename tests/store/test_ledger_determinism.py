"""The same ops give the same ledger trees whether written in one batch or one at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

from looma_git.api import ledger as api
from looma_git.gitrepo import RepoPaths, find_repo
from looma_git.ledger.canonical import derived_id
from looma_git.ledger.ops import OpDraft
from looma_git.store import ledger_ref
from looma_git.store import repo as store_repo
from tests.helpers import git, make_repo
from tests.store.ledger_helpers import init

CLONE = "c_" + "5" * 16


def _drafts(first_op: str) -> list[tuple[str, OpDraft]]:
    """(actor, draft) pairs touching WorkItems, memories, links, merges and renames."""
    w1 = derived_id("wi_", first_op)
    return [
        ("user", OpDraft("workitem.rename", {"type": "workitem", "id": w1}, {"title": "Renamed"})),
        ("system", OpDraft("workitem.update", {"type": "workitem", "id": w1},
                           {"summary": "s1", "confidence": 0.7, "files": ["b.py", "a.py"]})),
        ("system", OpDraft("memory.promote", {"type": "memory"},
                           {"kind": "decision", "text": "use tantivy", "workitem": w1})),
        ("system", OpDraft("workitem.create", {"type": "workitem"}, {"title": "Second"})),
        ("user", OpDraft("workitem.update", {"type": "workitem", "id": w1},
                         {"summary": "by hand: token ghp_" + "Q" * 36})),
        ("system", OpDraft("commit.link", {"type": "commit", "id": "a" * 40},
                           {"workitem": w1, "confidence": 0.9, "by": "hook"})),
    ]


def _setup(root: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, RepoPaths]:
    repo = make_repo(root / name)
    paths = init(repo)
    (paths.state_dir / "clone-id").write_text(CLONE + "\n")
    return repo, paths


def _forget_process_caches() -> None:
    ledger_ref._FOLDS.clear()
    ledger_ref._TREES.clear()
    ledger_ref._PARSED.clear()
    store_repo._TREE_CACHE.clear()


@pytest.mark.parametrize("cold", [False, True], ids=["warm", "cold"])
def test_batch_and_one_by_one_give_identical_trees(tmp_path: Path, cold: bool,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # a fixed clock: op ids hash their timestamp, and batches may straddle a second
    monkeypatch.setattr(ledger_ref, "utc_now", lambda: "2026-11-29T12:00:00Z")
    repos = {}
    for name in ("batch", "single"):
        repo, paths = _setup(tmp_path, name, monkeypatch)
        first = api.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                                           {"title": "First", "files": ["a.py"]})],
                           actor="system")[0]
        pairs = _drafts(first.id)
        if name == "batch":
            # one batch per actor run, so several drafts share a commit
            api.append(paths, [d for a, d in pairs[:1]], actor="user")
            api.append(paths, [d for a, d in pairs[1:4]], actor="system")
            api.append(paths, [d for a, d in pairs[4:5]], actor="user")
            api.append(paths, [d for a, d in pairs[5:]], actor="system")
        else:
            for actor, draft in pairs:
                if cold:  # as a fresh process would: fold and trees read back from git
                    _forget_process_caches()
                api.append(paths, [draft], actor=actor)
        repos[name] = repo
    for sub in ("ops", "workitems", "memories", ""):
        ids = {git(r, "rev-parse", f"refs/looma/ledger:{sub}") for r in repos.values()}
        assert len(ids) == 1, sub
    for r in repos.values():
        git(r, "fsck", "--strict", "--no-dangling")
        assert "ghp_" not in git(r, "grep", "-h", "by hand", "refs/looma/ledger")
        assert api.verify(find_repo(r)).ok


def test_fresh_process_rewrite_keeps_trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write after the caches are dropped re-renders everything, to the same blobs."""
    repo, paths = _setup(tmp_path, "r", monkeypatch)
    for i in range(3):
        api.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                                   {"title": f"w{i}"}) for _ in range(2)], actor="system")
    before = git(repo, "rev-parse", "refs/looma/ledger:workitems")
    _forget_process_caches()
    w = next(iter(api.load_state(paths).workitems))
    _forget_process_caches()
    api.append(paths, [OpDraft("workitem.update", {"type": "workitem", "id": w},
                               {"summary": "x"})], actor="system")
    after = git(repo, "ls-tree", "refs/looma/ledger:workitems")
    changed = [ln for ln in after.splitlines() if ln not in
               git(repo, "ls-tree", before).splitlines()]
    assert len(changed) == 1 and w in changed[0]
    assert api.verify(paths).ok
