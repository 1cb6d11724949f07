"""Superseded and retracted events (Gemini edits and rewinds) leave the store."""

from __future__ import annotations

import json
from pathlib import Path

from looma_git.gitrepo import find_repo
from looma_git.index import storedb
from looma_git.index.event_writer import CursorRow, EventRow, SessionUpsert, write_batch


def row(eid: str, text: str, extra: dict[str, str] | None = None) -> EventRow:
    return EventRow(event_id=eid, agent="gemini-cli", session_id="s1", seq=1, ts=None,
                    role="assistant", model=None, branch=None, text=text, raw_json="{}",
                    schema_version="1", extra=json.dumps(extra) if extra else None,
                    content_sig=eid + text,
                    tools=((0, "run_shell_command", "shell", "pytest", 0, 0, "passed"),),
                    files=((0, "/x/a.py", "a.py", "edit"),))


def test_supersedes_and_retracts_remove_old_versions(repo: Path) -> None:
    paths = find_repo(repo)
    conn = storedb.connect(paths)
    storedb.ensure_schema(conn)
    sess = [SessionUpsert("gemini-cli", "s1", str(repo), None, None, "f", None, False)]
    cur = CursorRow("gemini-cli:f", "gemini-cli", "f", 0, "", "", "", None, None)
    write_batch(conn, [row("v1", "draft"), row("m4", "four"), row("m5", "five")], sess, cur, [],
                1)
    write_batch(conn, [row("v2", "final", {"supersedes": "v1"}),
                       row("rw", "", {"retracts": "m4,m5"})], sess, cur, [], 2)
    ids = {r[0] for r in conn.execute("SELECT event_id FROM events")}
    assert ids == {"v2", "rw"}
    orphans = conn.execute("SELECT COUNT(*) FROM tool_calls WHERE event_id IN ('v1','m4','m5')"
                           ).fetchone()[0]
    files = conn.execute("SELECT COUNT(*) FROM tool_files WHERE event_id IN ('v1','m4','m5')"
                         ).fetchone()[0]
    assert orphans == 0 and files == 0
    conn.close()
