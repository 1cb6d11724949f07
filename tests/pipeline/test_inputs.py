"""pipeline/inputs: one session read alone is the session the whole-store read builds."""

from __future__ import annotations

from pathlib import Path

from looma_git.gitrepo import RepoPaths
from looma_git.index import storedb
from looma_git.pipeline.inputs import load_session, load_sessions


def _ev(eid: str, sid: str, seq: int) -> tuple[object, ...]:
    return (eid, "claude-code", sid, seq, f"2026-01-01T00:00:{seq:02d}Z", "assistant",
            f"text {eid}", "main")


def test_calls_and_their_files_come_back_in_order_without_repeats(tmp_path: Path) -> None:
    """Several calls an event, a call with many files (repeated, unsorted, one without a
    repository path), a call with none, an event with none, and a second session beside."""
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    paths = RepoPaths(worktree=tmp_path, git_dir=git_dir, common_dir=git_dir)
    conn = storedb.connect(paths)
    try:
        conn.executemany("INSERT INTO events(event_id, agent, session_id, seq, ts, role, text, "
                         "branch) VALUES(?,?,?,?,?,?,?,?)",
                         [_ev("e2", "s1", 2), _ev("e1", "s1", 1), _ev("e3", "s1", 3),
                          _ev("f1", "s2", 1)])
        conn.executemany("INSERT INTO tool_calls(event_id, idx, name, kind, command, exit_code, "
                         "is_error, test_outcome) VALUES(?,?,?,?,?,?,?,?)",
                         [("e1", 1, "Bash", "shell", "pytest", 1, 1, "failed"),
                          ("e1", 0, "Edit", "edit", None, None, 0, None),
                          ("e2", 0, "Read", None, None, None, None, None),
                          ("f1", 0, "Write", "write", None, None, 0, None)])
        conn.executemany("INSERT INTO tool_files(event_id, idx, raw_path, relpath, op) "
                         "VALUES(?,?,?,?,?)",
                         [("e1", 0, "/r/b.py", "b.py", "edit"), ("e1", 0, "/r/a.py", "a.py", "edit"),
                          ("e1", 0, "/r/b.py", "b.py", "edit"), ("e1", 0, "/tmp/x", None, "edit"),
                          ("e1", 1, "/tmp/y", None, "read"), ("e2", 3, "/r/c.py", "c.py", "read"),
                          ("f1", 0, "/r/d.py", "d.py", "write")])
        built = {s.key: s for s in load_sessions(conn)}
        alone = {k: load_session(conn, *k.split(":", 1)) for k in built}
    finally:
        conn.close()
    assert alone == built
    s1 = alone["claude-code:s1"]
    assert [ev.event_id for ev in s1.events] == ["e1", "e2", "e3"]
    e1, e2, e3 = s1.events
    assert [(t.name, t.files) for t in e1.tools] == [("Edit", ("a.py", "b.py")), ("Bash", ())]
    assert [(t.kind, t.files) for t in e2.tools] == [("other", ())]  # (idx 3: no such call)
    assert e3.tools == ()
    assert [t.files for ev in alone["claude-code:s2"].events for t in ev.tools] == [("d.py",)]
    for k, s in alone.items():
        assert [vars(t) for ev in s.events for t in ev.tools] == [
            vars(t) for ev in built[k].events for t in ev.tools]
