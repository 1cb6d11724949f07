"""The content index looks only at events stored since its last run (a drain's cost does not
grow with the history), and still catches new, re-stored and same-second events."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from looma_git.index import storedb
from looma_git.index.written import update_written
from looma_git.pipeline.content import line_key


def _edit(conn: sqlite3.Connection, eid: str, new: str, at: int) -> None:
    raw = json.dumps({"type": "assistant", "message": {"content": [{
        "type": "tool_use", "name": "Edit",
        "input": {"file_path": "/r/a.py", "old_string": "x", "new_string": new}}]}})
    conn.execute("INSERT OR IGNORE INTO events(event_id, agent, session_id, ts, raw_json, "
                 "ingested_at) VALUES(?, 'claude-code', 's1', '2026-03-02T10:00:00Z', ?, ?)",
                 (eid, raw, at))
    conn.execute("UPDATE events SET raw_json=?, ingested_at=? WHERE event_id=?", (raw, at, eid))
    conn.execute("INSERT OR IGNORE INTO tool_calls(event_id, idx, name, kind) "
                 "VALUES(?, 0, 'Edit', 'edit')", (eid,))
    conn.execute("INSERT OR IGNORE INTO tool_files(event_id, idx, relpath) VALUES(?, 0, 'a.py')",
                 (eid,))
    conn.commit()


def _keys(conn: sqlite3.Connection, eid: str) -> set[int]:
    return {k for (k,) in conn.execute("SELECT h FROM written_lines WHERE event_id=?", (eid,))}


def test_only_events_stored_since_the_last_run_are_read(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db")
    storedb.ensure_schema(conn)
    _edit(conn, "e1", "first_version_of_the_line = 1", 100)
    _edit(conn, "e2", "another_line_written_here = 2", 100)
    assert update_written(conn) == 2
    assert update_written(conn) == 0  # nothing stored since: nothing looked at
    _edit(conn, "e3", "written_in_the_same_second = 3", 100)  # same ingested_at, new row
    assert update_written(conn) == 1 and _keys(conn, "e3")
    _edit(conn, "e1", "second_version_of_the_line = 1", 101)  # re-stored by a later run
    assert update_written(conn) == 1
    assert _keys(conn, "e1") == {line_key("second_version_of_the_line = 1")}
    # A full pass looks at every edit event, and finds them all current.
    assert update_written(conn, full=True) == 0
    conn.execute("DELETE FROM written_seen WHERE event_id='e2'")
    conn.commit()
    assert update_written(conn) == 0  # the mark says e2 was seen: only a full pass re-reads it
    assert update_written(conn, full=True) == 1 and _keys(conn, "e2")


def _steps_of_an_update_after(tmp_path: Path, same_second: int) -> int:
    """SQLite VM steps (in 100s) of the update that follows `same_second` events stored with
    one ingested_at (a cold ingest stamps all its events so) and one edit stored after."""
    conn = sqlite3.connect(tmp_path / f"steps{same_second}.db")
    storedb.ensure_schema(conn)
    conn.executemany("INSERT INTO events(event_id, agent, session_id, ts, raw_json, "
                     "ingested_at) VALUES(?, 'codex', 's0', '2026-03-02T09:00:00Z', '{}', 100)",
                     [(f"m{i}",) for i in range(same_second)])
    conn.commit()
    _edit(conn, "e1", "first_version_of_the_line = 1", 100)
    assert update_written(conn) == 1
    _edit(conn, "e2", "written_in_the_same_second = 2", 100)
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, 100)
    assert update_written(conn) == 1 and _keys(conn, "e2")
    conn.set_progress_handler(None, 0)
    return steps[0]


def test_the_update_after_a_cold_ingest_seeks_past_its_events(tmp_path: Path) -> None:
    # The old `ingested_at >= ? AND (ingested_at > ? OR rowid > ?)` walked every event of
    # the mark's second: ~10x the steps after 10x the events. Now one index range.
    few, many = _steps_of_an_update_after(tmp_path, 200), _steps_of_an_update_after(tmp_path, 4000)
    assert many <= few * 1.5 + 5, (few, many)


def test_workers_key_the_edit_events_as_one_process_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from looma_git.index import written
    from looma_git.ingest import parallel

    if not parallel.fork_available():
        pytest.skip("needs fork (Linux)")
    tables = []
    for workers in (1, 2):
        conn = sqlite3.connect(tmp_path / f"s{workers}.db")
        storedb.ensure_schema(conn)
        for i in range(40):
            _edit(conn, f"e{i:02d}", f"line_number_{i} = {i} * 7", 100 + i)
        _edit(conn, "e03", "rewritten_line_three = 3", 200)  # re-stored: old keys replaced
        monkeypatch.setattr(parallel, "default_workers", lambda w=workers: w)
        monkeypatch.setattr(written, "_EVENTS", 3)  # 14 batches: the workers' path
        assert update_written(conn, full=True) == 40
        tables.append((conn.execute("SELECT h, file, session, ts, event_id FROM written_lines "
                                    "ORDER BY rowid").fetchall(),
                       conn.execute("SELECT * FROM written_seen ORDER BY event_id").fetchall()))
        conn.close()
    assert tables[0] == tables[1] and len(tables[0][0]) == 40


def test_the_update_is_one_transaction_on_an_autocommit_connection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """store.db connections are in autocommit mode (`isolation_level=None`), where `with conn:`
    begins no transaction: the update must begin one (each row its own transaction cost ~10x
    the CPU on a cold store), so a failure half-way stores nothing."""
    from looma_git.index import written
    from looma_git.ingest import parallel

    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    storedb.ensure_schema(conn)
    for i in range(3):
        _edit(conn, f"e{i}", f"line_number_{i} = {i} * 7", 100 + i)
    monkeypatch.setattr(parallel, "default_workers", lambda: 1)
    monkeypatch.setattr(written, "_EVENTS", 1)
    real, calls = written._keys_of, []

    def failing(*a: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(written, "_keys_of", failing)
    with pytest.raises(RuntimeError):
        update_written(conn, full=True)
    assert not conn.in_transaction
    assert conn.execute("SELECT COUNT(*) FROM written_lines").fetchone()[0] == 0
    monkeypatch.setattr(written, "_keys_of", real)
    assert update_written(conn, full=True) == 3
