"""The readers key what each edit event wrote as they store it (index/written.keyed_at_read):
the same `written_lines` and `written_seen` rows `update_written` makes from the stored events,
so after an ingest it has nothing left to do, on every agent's real transcripts."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from looma_git.index.written import update_written
from tests.helpers import cli
from tests.ingest.test_real_cli import AGENT_OF, CAPTURES, _install

_LINES = "SELECT h, file, session, ts, event_id FROM written_lines ORDER BY 1, 2, 3, 4, 5"
_SEEN = "SELECT event_id, ingested_at, session, n FROM written_seen ORDER BY 1"


def _tables(conn: sqlite3.Connection) -> tuple[list[tuple[object, ...]], ...]:
    return conn.execute(_LINES).fetchall(), conn.execute(_SEEN).fetchall()


def _recomputed(conn: sqlite3.Connection) -> tuple[list[tuple[object, ...]], ...]:
    """The tables as `update_written` alone makes them from the stored events."""
    conn.execute("DELETE FROM written_lines")
    conn.execute("DELETE FROM written_seen")
    conn.execute("DELETE FROM meta WHERE key='written_mark'")
    conn.commit()
    assert update_written(conn) > 0
    return _tables(conn)


@pytest.mark.parametrize("capture", CAPTURES)
def test_the_readers_store_the_written_lines_update_written_would(capture: str, repo: Path,
                                                                  scrubbed_env) -> None:
    agent = AGENT_OF[capture.split("-", 1)[0]]
    _install(capture, Path(os.environ["HOME"]), repo)
    json.loads(cli(repo, "ingest", "--json", "--no-refine", "--agent", agent).stdout)
    conn = sqlite3.connect(repo / ".git" / "looma" / "store.db")
    try:
        read = _tables(conn)
        assert read[0] and read[1]  # every capture edits hello.py
        assert update_written(conn) == 0  # nothing left for the work model
        assert update_written(conn, full=True) == 0
        assert _recomputed(conn) == read
    finally:
        conn.close()


def test_a_re_stored_edit_has_its_lines_replaced_and_a_withdrawn_one_none(
        tmp_path: Path) -> None:
    """An event re-stored with new content (a later run) gets the new version's lines in
    place of the old; a version withdrawn (extra.supersedes) takes its lines with it."""
    from looma_git.index import storedb
    from looma_git.index.event_writer import CursorRow, SessionUpsert, write_batch
    from looma_git.index.written import keyed_at_read
    from looma_git.pipeline.content import line_key

    def row(eid: str, line: str, extra: str | None = None) -> tuple[object, ...]:
        raw = json.dumps({"type": "assistant", "message": {"content": [{
            "type": "tool_use", "name": "Edit",
            "input": {"file_path": "/r/a.py", "old_string": "x", "new_string": line}}]}})
        return (eid, "claude-code", "s1", 0, "2026-03-02T10:00:00Z", "assistant", None, None,
                "", raw, "1", extra, line, None, ((0, "Edit", "edit", None, None, 0, None),),
                ((0, "/r/a.py", "a.py", "edit"),))

    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    storedb.ensure_schema(conn)
    sess = [SessionUpsert("claude-code", "s1", None, None, None, "/x", None, False)]
    cur = CursorRow("src", "claude-code", "/x", 0, "", "", "", None, None)
    first = [row("e1", "first_version_of_the_line = 1"), row("v1", "a_draft_version = 2")]
    write_batch(conn, first, sess, cur, [], 100, written=keyed_at_read(first))
    later = [row("e1", "second_version_of_the_line = 1"),
             row("v2", "the_final_version = 2", json.dumps({"supersedes": "v1"}))]
    write_batch(conn, later, sess, cur, [], 101, written=keyed_at_read(later))
    by_event = {e: {h for (h,) in conn.execute("SELECT h FROM written_lines WHERE event_id=?",
                                               (e,))} for e in ("e1", "v1", "v2")}
    assert by_event == {"e1": {line_key("second_version_of_the_line = 1")}, "v1": set(),
                        "v2": {line_key("the_final_version = 2")}}
    assert update_written(conn) == 0
    stored = _tables(conn)
    assert len(stored[0]) == 2 and len(stored[1]) == 2
    assert _recomputed(conn) == stored
