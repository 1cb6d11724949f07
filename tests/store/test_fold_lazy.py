"""The fold cache's memories (store/fold_lazy.py): a link append after a fresh load leaves
every other WorkItem's memories pickled, and every way of reading them gives the full fold."""

from __future__ import annotations

import pickle
from pathlib import Path

from looma_git.api import ledger as api
from looma_git.ledger.ops import OpDraft
from looma_git.store import fold_cache, fold_lazy, ledger_ref
from tests.helpers import git
from tests.ledger.test_fold_cache import _fresh, _same
from tests.store.ledger_helpers import create, init
from tests.store.test_notes import fast_commits, link


def _promote(paths, wid: str, text: str, kind: str = "decision") -> None:
    api.append(paths, [OpDraft("memory.promote", {"type": "memory"},
                               {"text": text, "kind": kind, "workitem": wid,
                                "said_at": "2026-01-02T10:00:00Z"})], actor="system")


def _seen(i: int) -> dict[str, object]:  # an observation: the fold derives the WorkItem
    return {"observe": {"sessions": [{
        "agent": "claude-code", "id": f"s{i}", "first": "2026-01-02T10:00:00Z",
        "last": "2026-01-02T11:00:00Z", "files": {f"f{i}.py": 2},
        "prompt": f"please add feature number {i} to the search page"}]}}


def _cached_memories(paths):
    return ledger_ref._FOLDS[str(paths.common_dir)][1].state.memories


def test_a_link_append_opens_only_its_workitems_memories(repo: Path) -> None:
    paths = init(repo)
    shas = fast_commits(repo, 3)
    a = create(paths, "Add search", files=["search.py"], **_seen(1))
    b = create(paths, "Fix retries", files=["retry.py"], **_seen(2))
    _promote(paths, a, "Use the trie for prefixes.")
    _promote(paths, b, "Retry at most three times.")
    _promote(paths, b, "Finish the backoff cap.", kind="todo")
    fold_cache.save(paths.state_dir, ledger_ref._ENTRIES[str(paths.common_dir)])
    _fresh()  # a drain: the stored fold, then one commit.link
    link(paths, [shas[0]], a, files=["search.py"], subject="add search",
         ts="2026-01-03T12:00:00Z")
    mems = _cached_memories(paths)
    assert isinstance(mems, fold_lazy.LazyMemories) and not mems.filled
    assert set(mems.opened) == {a} and len(mems) == 3
    state = api.load_state(paths)
    assert "Why: Use the trie for prefixes." in state.workitems[a].summary
    # the append recorded a step: the stored groups are kept as read, and a fresh reader's
    # fold (stored entry + step) is the full fold, memories and projections included
    _same(paths)
    assert api.verify(paths).ok
    # a memory op fills the dict first: the objects derive saw are the ones it holds after
    _fresh()
    link(paths, [shas[1]], b, files=["retry.py"])
    mems = _cached_memories(paths)
    seen = {id(m) for m in mems.of_workitems([b])}
    _promote(paths, a, "Keep the old index readable.")
    after = _cached_memories(paths)
    assert after.filled and len(after) == 4
    assert after is mems and seen <= {id(m) for m in after.values()}
    _same(paths)
    assert git(repo, "rev-parse", "refs/looma/ledger") == fold_cache.peek_head(
        paths.state_dir).decode()


def test_every_way_in_fills_in_the_folds_order() -> None:
    from looma_git.ledger.state import MemoryState

    plain = {f"mem_{i}": MemoryState(id=f"mem_{i}", workitem=f"wi_{i % 3}" if i % 4 else None,
                                     text=f"t{i}") for i in (5, 1, 4, 2, 3, 0)}
    data = fold_lazy.dump(plain)

    def fresh() -> fold_lazy.LazyMemories:
        return fold_lazy.load(data)

    assert list(fresh()) == list(plain) and list(fresh().keys()) == list(plain)
    assert fresh() == plain and fresh().get("mem_5") == plain["mem_5"]
    assert "mem_3" in fresh() and len(fresh()) == 6 and bool(fresh())
    assert [m.id for m in fresh().values()] == list(plain)
    assert dict(fresh()) == plain and {**fresh()} == plain
    assert pickle.loads(pickle.dumps(fresh())) == plain
    assert type(pickle.loads(pickle.dumps(fresh()))) is dict
    lazy = fresh()
    assert sorted(m.id for m in lazy.of_workitems(["wi_2"])) == ["mem_2", "mem_5"]
    assert not lazy.filled and fold_lazy.dump(lazy) == data  # never filled: stored as read
    assert fold_lazy.dump(lazy)[1] is lazy.chunks
    lazy["mem_9"] = MemoryState(id="mem_9")
    assert lazy.filled and list(lazy)[-1] == "mem_9" and len(lazy) == 7
    assert sorted(m.id for m in lazy.of_workitems(["wi_2"])) == ["mem_2", "mem_5"]
    assert fold_lazy.load(fold_lazy.dump(lazy)) == lazy
    assert fold_lazy.load(fold_lazy.dump({})) == {}
