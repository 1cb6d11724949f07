"""Rows staged by a reader process are stored exactly as the same rows written directly."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from looma_git.gitrepo import find_repo
from looma_git.index import event_stage, storedb
from looma_git.index.event_writer import (
    CursorRow,
    EventRow,
    SessionUpsert,
    WriteResult,
    withdrawn_of,
    write_batch,
)
from looma_git.index.written import keyed_at_read


def row(eid: str, text: str, session: str = "s1", extra: dict[str, str] | None = None,
        tools: int = 1, wrote: str = "") -> EventRow:
    """An event; with `wrote`, its first tool an edit of é.py and x.py that wrote those lines
    (its record kept inline, so the keys of what it wrote are found without a transcript)."""
    raw = json.dumps({"input": {"file_path": "/x/é.py", "new_string": wrote}}) if wrote else ""
    return EventRow(event_id=eid, agent="codex", session_id=session, seq=len(text),
                    ts="2026-03-02T10:00:00Z", role="assistant", model=None, branch="main",
                    text=text, raw_json=raw,
                    schema_version="1", extra=json.dumps(extra) if extra else None,
                    content_sig=eid + text + wrote,
                    raw_ref=None if wrote else '{"path":"f","spans":[[0,1]]}',
                    tools=tuple((i, "exec", "edit" if wrote and not i else "shell",
                                 f"pytest {i}", i - 1 if i else None, i % 2, None)
                                for i in range(tools)),
                    files=((0, "/x/é.py", "é.py", "edit"), (0, "/x/x.py", "x.py", "edit"))
                    if tools else ())


# Batches as successive sources send them: duplicates inside one, an edit that supersedes an
# earlier event, a re-read whose ids are partly stored (with one changed), a retraction.
# Some events edit (their written lines are staged too): one superseded later, one re-stored
# with other lines in a batch partly stored before, one that wrote no line that counts.
BATCHES = [
    [row("a", "one"), row("b", "two", tools=3, wrote="first_written = 1\nsecond_one = 2"),
     row("a", "one again"), row("c", "", tools=0)],
    [row("d", "four", session="s2"), row("e", "five", extra={"supersedes": "b"}),
     row("i", "nine", wrote="x = 1")],
    [row("d", "four", session="s2"), row("f", "six", wrote="value_of_six = 6"),
     row("c", "now said", tools=2, wrote="the_c_line_now = 3\nand_another_c = 4")],
    [row("g", "", extra={"retracts": "f,a"}, tools=0), row("h", "\x00nul \U0001f600")],
]


def _store(path: Path) -> sqlite3.Connection:
    conn = storedb.connect(find_repo(path))
    storedb.ensure_schema(conn)
    return conn


def _dump(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    out = {}
    for table in ("events", "tool_calls", "tool_files", "sessions", "cursors", "written_lines",
                  "written_seen"):
        out[table] = [tuple((type(v).__name__, v) for v in r)
                      for r in conn.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid")]
    return out


def _write(conn: sqlite3.Connection, staged: bool, own_transaction: bool = True
           ) -> list[WriteResult]:
    if staged:
        event_stage.attach(conn)
    if not own_transaction:  # one transaction over all batches, as the engine groups sources
        conn.execute("BEGIN IMMEDIATE")
    out = []
    for k, rows in enumerate(BATCHES):
        sess = [SessionUpsert("codex", s, "/x", None, "main", "f", None, False)
                for s in sorted({r.session_id for r in rows})]
        cur = CursorRow(f"codex:{k}", "codex", "f", k, "", "", "", None, None)
        keys = keyed_at_read(rows)
        st = event_stage.stage(rows, withdrawn_of(rows), keys) if staged else None
        out.append(write_batch(conn, [] if staged else rows, sess, cur, [], 5,
                               own_transaction=own_transaction, staged=st,
                               written=None if staged else keys))
    if not own_transaction:
        conn.execute("COMMIT")
    return out


@pytest.mark.parametrize("own_transaction", [True, False])
def test_staged_batches_store_the_same_rows_in_the_same_order(repo: Path,
                                                              own_transaction: bool) -> None:
    direct = _store(repo)
    plain = _write(direct, staged=False)
    expected = _dump(direct)
    direct.close()
    for suffix in ("", "-wal", "-shm"):
        (find_repo(repo).state_dir / f"store.db{suffix}").unlink(missing_ok=True)
    conn = _store(repo)
    res = _write(conn, staged=True, own_transaction=own_transaction)
    assert _dump(conn) == expected
    assert [(r.added, r.updated, r.sessions_with_new) for r in res] == \
        [(r.added, r.updated, r.sessions_with_new) for r in plain]
    # The batches exercise both ways: all new (copied by SQLite) and partly stored.
    assert [r.added for r in plain] == [3, 3, 1, 2] and plain[2].updated == 1
    lines = {e: n for e, n in conn.execute(
        "SELECT event_id, count(*) FROM written_lines GROUP BY event_id")}
    assert lines == {"c": 4}  # b superseded, f retracted, i's line too short to count
    assert [tuple(r) for r in conn.execute("SELECT event_id, n FROM written_seen ORDER BY 1")] \
        == [("c", 2), ("i", 0)]
    conn.close()


def test_staged_rows_read_back_as_write_batch_takes_them() -> None:
    conn = sqlite3.connect(":memory:")
    event_stage.attach(conn)
    rows = BATCHES[0]
    st = event_stage.stage(rows, withdrawn_of(rows))
    event_stage.load(conn, st)
    by_id = {r.event_id: tuple(r) for r in rows}
    assert event_stage.rows_of(conn) == list(by_id.values())
    assert (st.rows, st.n, st.sessions, st.withdrawn) == (4, 3, {("codex", "s1")}, ())
