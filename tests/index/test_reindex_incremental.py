"""The full-text refresh adds only what is new: messages ingested since the last refresh and
WorkItem docs whose text changed, in one writer commit, and ends where a full rebuild ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looma_git.api import index as api_index
from looma_git.api import ledger as api_ledger
from looma_git.gitrepo import RepoPaths, find_repo
from looma_git.index import storedb
from looma_git.index.event_writer import CursorRow, EventRow, SessionUpsert, write_batch
from looma_git.index.fulltext import FullTextIndex
from looma_git.ledger.ops import OpDraft


def _events(paths: RepoPaths, texts: list[str], session: str, now: int) -> None:
    conn = storedb.connect(paths)
    try:
        storedb.ensure_schema(conn)
        rows = [EventRow(f"ev-{session}-{i}", "claude-code", session, i,
                         f"2026-06-01T10:00:{i:02d}Z", "user" if i % 2 == 0 else "assistant",
                         None, "main", text, "{}", "1", None, f"sig{i}")
                for i, text in enumerate(texts)]
        write_batch(conn, rows, [SessionUpsert("claude-code", session, None, None, "main",
                                               f"/x/{session}.jsonl", None, False)],
                    CursorRow(f"claude-code:/x/{session}.jsonl", "claude-code",
                              f"/x/{session}.jsonl", 1, "", "", "", None, None), [], now)
    finally:
        conn.close()


def _create(paths: RepoPaths, title: str) -> str:
    op = api_ledger.append(paths, [OpDraft("workitem.create", {"type": "workitem", "id": None},
                                           {"title": title, "kind": "feature",
                                            "files": ["a.py"], "confidence": 0.7})],
                           actor="system")[0]
    return "wi_" + op.id[:10]


@pytest.fixture
def added(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Doc ids each FullTextIndex.apply call added (the real method still runs)."""
    calls: list[list[str]] = []
    real = FullTextIndex.apply

    def spy(self: FullTextIndex, delete_ids: Any, docs: Any, **kw: Any) -> int:
        seen: list[str] = []
        calls.append(seen)

        def track() -> Any:
            for d in docs:
                seen.append(d.doc_id)
                yield d
        return real(self, delete_ids, track(), **kw)

    monkeypatch.setattr(FullTextIndex, "apply", spy)
    return calls


def test_refresh_adds_only_new_messages_and_changed_workitems(repo: Path,
                                                              added: list[list[str]]) -> None:
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    a = _create(paths, "Implement OAuth Login")
    b = _create(paths, "Fix Session Timeout")
    _events(paths, [f"oauth callback step {i}" for i in range(6)], "s1", now=100)
    first = api_index.reindex(paths, full=True, memory_budget_s=0)
    assert first.messages == 6 and sorted(added[-1]) == sorted([a, b, *(f"ev-s1-{i}" for i in
                                                                         range(6))])
    assert len(added) == 1  # one writer commit for items and messages together

    assert api_index.reindex(paths, full=False, memory_budget_s=0).messages == 0
    assert added[-1] == []  # nothing new: nothing re-added

    _events(paths, ["tokenbucket burst refill"], "s2", now=200)
    api_ledger.append(paths, [OpDraft("workitem.update", {"type": "workitem", "id": b},
                                      {"summary": "refresh token races"})], actor="system")
    rep = api_index.reindex(paths, full=False, memory_budget_s=0)
    assert rep.messages == 1 and sorted(added[-1]) == sorted([b, "ev-s2-0"])

    ft = FullTextIndex(api_index.fulltext_dir(paths))
    assert ft.count() == 2 + 7
    assert [h.doc_id for h in ft.search("tokenbucket")] == ["ev-s2-0"]
    assert [h.doc_id for h in ft.search("races")] == [b]
    # Same hits (scores differ: BM25 statistics count deleted docs until segments merge).
    incremental = sorted(h.doc_id for h in ft.search("oauth token", limit=50))

    api_index.reindex(paths, full=True, memory_budget_s=0)  # the full rebuild ends the same
    ft = FullTextIndex(api_index.fulltext_dir(paths))
    assert ft.count() == 2 + 7
    assert sorted(h.doc_id for h in ft.search("oauth token", limit=50)) == incremental


def test_a_workitem_that_disappears_leaves_the_index(repo: Path, added: list[list[str]]) -> None:
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    a = _create(paths, "Implement OAuth Login")
    api_index.reindex(paths, full=True, memory_budget_s=0)
    ft = FullTextIndex(api_index.fulltext_dir(paths))
    assert [h.doc_id for h in ft.search("oauth")] == [a]
    api_ledger.append(paths, [OpDraft("node.false_positive", {"type": "workitem", "id": a},
                                      {})], actor="user")
    api_index.reindex(paths, full=False, memory_budget_s=0)
    assert added[-1] == []
    assert FullTextIndex(api_index.fulltext_dir(paths)).search("oauth") == []


def _indexing_beside(repo: Path, monkeypatch: pytest.MonkeyPatch) -> RepoPaths:
    """An initialised repository where any ingest indexes its messages beside the work model."""
    from looma_git.index import message_index
    from looma_git.ingest import parallel

    if not parallel.fork_available():
        pytest.skip("needs Linux")
    monkeypatch.setattr(message_index, "BESIDE_FROM", 1)
    monkeypatch.setattr(parallel, "default_workers", lambda: 2)
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    return paths


def test_messages_indexed_beside_the_work_model_are_not_indexed_again(
        repo: Path, added: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    from looma_git.index import message_index

    paths = _indexing_beside(repo, monkeypatch)
    _events(paths, [f"oauth callback step {i}" for i in range(6)], "s1", now=100)
    join = message_index.start_beside(paths, 6)  # a process of its own: the spy does not see it
    a = _create(paths, "Implement OAuth Login")  # meanwhile the work model writes the ledger
    assert join() == 6
    rep = api_index.reindex(paths, full=False, memory_budget_s=0)
    assert rep.messages == 0 and added[-1] == [a]  # the WorkItem alone: no rebuild, no repeat
    ft = FullTextIndex(api_index.fulltext_dir(paths))
    assert ft.count() == 1 + 6
    assert sorted(h.doc_id for h in ft.search("oauth", limit=50)) == sorted(
        [a, *(f"ev-s1-{i}" for i in range(6))])
    # Nothing to start below the threshold.
    monkeypatch.setattr(message_index, "BESIDE_FROM", 10**9)
    assert message_index.start_beside(paths, 6)() is None


def test_the_indexing_process_writes_while_its_parent_reads_and_writes(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent holds a read open when it starts the indexer (a pass streaming its windows)
    and writes store.db meanwhile, checkpointing (the settling pass): the indexer, a process
    of its own with its own locks, indexes every message and both stay whole."""
    import time

    from looma_git.index import message_index

    paths = _indexing_beside(repo, monkeypatch)
    _events(paths, [f"oauth callback step {i} " + "x" * 2000 for i in range(3000)], "s1",
            now=100)
    reader = storedb.connect(paths)
    rows = reader.execute("SELECT event_id FROM events")
    assert rows.fetchone() is not None  # a read in progress when the indexer starts
    join = message_index.start_beside(paths, 3000)
    writer = storedb.connect(paths)
    deadline = time.monotonic() + 1.5
    n = 0
    while time.monotonic() < deadline:
        with storedb.transaction(writer):
            storedb.set_meta(writer, "test_counter", str(n))  # and pages to checkpoint:
            storedb.set_meta(writer, "test_blob", str(n) * 100_000)
        n += 1
    assert join() == 3000
    rows.fetchall()
    assert storedb.get_meta(writer, "test_counter") == str(n - 1)
    assert writer.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert int(storedb.get_meta(writer, "index_events_mark") or 0) > 0
    reader.close()
    writer.close()
