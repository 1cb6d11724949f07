"""Message docs written as JSON by SQLite index exactly what a `Doc` of the same row indexes:
the same stored fields (absent ones absent), the same `ts`, the same hits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looma_git.errors import InvalidDataError
from looma_git.gitrepo import find_repo
from looma_git.index import storedb
from looma_git.index.fulltext import Doc, FullTextIndex
from looma_git.index.message_docs import MESSAGE_CHARS, JsonDoc, message_docs
from looma_git.isotime import parse_ts

LONG = "é€😀 wörd " * 700  # multi-byte text past MESSAGE_CHARS: cut at a character, not a byte
ROWS: list[tuple[Any, ...]] = [
    # event_id, agent, session_id, ts, role, text, ingested_at
    ("e1", "claude-code", "s1", "2026-06-25T01:57:55.482Z", "user", "Deploy the sidecars", 5),
    ("e2", "codex", "s2", "2026-06-25T01:57:55Z", "assistant", 'quotes " \\ back\\slash \n\t', 5),
    ("e3", "", "", "2026-06-25T03:57:55+02:00", "user", "no agent, no session: both absent", 5),
    ("e4", None, None, "2026-06-25T01:57:55", "assistant", "NULL agent and session; naive ts", 5),
    ("e5", "codex", "s2", None, "user", "no ts at all \x00\x01\x1f control chars", 5),
    ("e6", "codex", "s2", "yesterday", "user", "a ts no one can read", 5),
    ("e7", "codex", "s2", "2026-02-30T01:57:55Z", "user", "an impossible date", 5),
    ("e8", "codex", "s3", "1960-01-01T00:00:00.999999Z", "assistant", LONG, 5),
    ("e9", "claude-code", "s1", "2026-06-25T01:57:59.999999Z", "user", "日本語 naïve café", 7),
    ("e0", "claude-code", "s1", "2026-06-25T01:58:00Z", "user", "oauth callback", 3),
    ("skip1", "claude-code", "s1", "2026-06-25T01:58:00Z", "tool", "a tool row: no doc", 5),
    ("skip2", "claude-code", "s1", "2026-06-25T01:58:00Z", "user", "", 5),
]


def _store(repo: Path, rows: list[tuple[Any, ...]]) -> Any:
    paths = find_repo(repo)
    conn = storedb.connect(paths)
    storedb.ensure_schema(conn)
    conn.executemany("INSERT INTO events(event_id, agent, session_id, ts, role, text, "
                     "ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    return conn


def _reference(conn: Any, since: int) -> list[Doc]:
    """The Doc each message row made before SQLite wrote its JSON (the query and fields of
    the `_message_docs` that built them; SQLite's `substr` ends a text at a NUL either way)."""
    rows = conn.execute(
        "SELECT event_id, agent, session_id, ts, role, substr(text, 1, ?), ingested_at "
        "FROM events WHERE ingested_at > ? AND role IN ('user','assistant') AND text != '' "
        "ORDER BY ingested_at, event_id", (MESSAGE_CHARS, since)).fetchall()
    return [Doc(doc_id=r[0], doc_type="message", title=r[4], body=r[5] or "",
                ts=int(parse_ts(r[3] or "")), agent=r[1], session=r[2]) for r in rows]


def _stored(ft: FullTextIndex) -> list[dict[str, Any]]:
    import tantivy

    searcher = ft._index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), 100).hits
    return sorted((searcher.doc(a).to_dict() for _, a in hits), key=lambda d: d["doc_id"])


def test_json_docs_index_what_docs_of_the_rows_index(repo: Path, tmp_path: Path) -> None:
    conn = _store(repo, ROWS)
    mark = [0]
    docs = list(message_docs(conn, 0, mark))
    assert mark == [7] and all(isinstance(d, JsonDoc) for d in docs)
    want = _reference(conn, 0)
    assert [d.doc_id for d in docs] == [d.doc_id for d in want]  # same order: same addresses

    by_json, by_doc = FullTextIndex(tmp_path / "json"), FullTextIndex(tmp_path / "doc")
    assert by_json.apply((), docs, replace=False) == by_doc.add_many(want, replace=False) == 10
    stored = _stored(by_json)
    assert stored == _stored(by_doc)
    e3, e8 = stored[3], stored[8]
    assert "agent" not in e3 and "session" not in e3 and e3["ts"] == [1782352675]
    assert len(e8["body"][0]) == MESSAGE_CHARS and e8["ts"] == [int(parse_ts(ROWS[7][3]))]
    assert [d.doc_id for d in want] == ["e0", *(f"e{i}" for i in range(1, 9)), "e9"]
    for query in ("deploy sidecar", "back slash", "naive cafe", "wörd", "oauth", "control"):
        assert [(h.doc_id, h.score, h.snippet, h.ts, h.agent, h.session)
                for h in by_json.search(query)] == \
            [(h.doc_id, h.score, h.snippet, h.ts, h.agent, h.session)
             for h in by_doc.search(query)]
    # only what was ingested after the mark
    assert [d.doc_id for d in message_docs(conn, 5, mark)] == ["e9"] and mark == [7]
    conn.close()


def test_replacing_json_docs_keeps_one_per_id(repo: Path, tmp_path: Path) -> None:
    conn = _store(repo, ROWS[:3])
    ft = FullTextIndex(tmp_path / "ft")
    ft.apply((), message_docs(conn, 0, [0]), replace=False)
    ft.apply((), message_docs(conn, 0, [0]), replace=True)
    assert ft.count() == 3 and [h.doc_id for h in ft.search("sidecars")] == ["e1"]
    conn.close()


def test_an_empty_event_id_fails_the_batch_as_a_doc_did(repo: Path, tmp_path: Path) -> None:
    conn = _store(repo, [("", "codex", "s1", None, "user", "anonymous", 5), *ROWS[:2]])
    ft = FullTextIndex(tmp_path / "ft")
    with pytest.raises(InvalidDataError):
        ft.apply((), message_docs(conn, 0, [0]), replace=False)
    assert ft.count() == 0
    conn.close()
