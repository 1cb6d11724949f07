"""Issue 15: what the agents write today reaches the store whole (real-format files, `looma ingest`).

Every test writes transcripts where the agent itself puts them (under the scrubbed HOME), in
the shape of a real capture (records cloned from the captured fixtures where one exists), runs
`looma ingest` (in process) in a real repository and reads the store back with sqlite3.
"""

from __future__ import annotations

import copy
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from looma_git.ingest.ide_common import cursor_slug
from tests.helpers import FIXTURES, cli, git
from tests.ingest.ide_golden import generator

CLAUDE_REAL = FIXTURES / "claude-code" / "codemie-code" / "-tmp-private" / \
    "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
CODEX_REAL = FIXTURES / "codex" / "real" / "codemie-code" / "turn-1.jsonl"
CURSOR_TRANSCRIPT = FIXTURES / "cursor" / "home" / ".cursor" / "projects" / \
    "home-user-src-agent-tools" / "agent-transcripts" / "5d6e7f80-1111-4b2c-9d3e-ff44ee55dd66.jsonl"
WINDSURF_TRANSCRIPT = FIXTURES / "windsurf" / "home" / ".windsurf" / "transcripts" / \
    "0f4c2b1e-7d3a-4e5f-9a8b-6c7d8e9f0a1b.jsonl"


def _home() -> Path:
    return Path(os.environ["HOME"])


def _ingest(repo: Path, *args: str) -> dict[str, Any]:
    out = cli(repo, "ingest", "--json", "--once", *args)
    return json.loads(out.stdout)


def _rows(repo: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(repo / ".git" / "looma" / "store.db")
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def _texts(repo: Path, agent: str, role: str) -> list[str]:
    return [r[0] for r in _rows(repo, "SELECT text FROM events WHERE agent=? AND role=? "
                                      "ORDER BY session_id, seq", agent, role)]


# -- Claude Code ---------------------------------------------------------------------------

class _ClaudeClone:
    """New records cloned from the real 2.0.64 capture's own user/assistant records."""

    def __init__(self, repo: Path) -> None:
        lines = [json.loads(x) for x in CLAUDE_REAL.read_text().replace(
            "/tmp/private", str(repo)).splitlines()]
        self.records = lines
        self.user_t = next(r for r in lines if r.get("type") == "user"
                           and isinstance(r["message"]["content"], str))
        self.asst_t = next(r for r in lines if r.get("type") == "assistant"
                           and r["message"]["content"][0]["type"] == "text")
        self.parent = next(r["uuid"] for r in reversed(lines) if r.get("uuid"))
        self.n = 0

    def _next(self, template: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        rec = copy.deepcopy(template)
        rec["uuid"] = f"00000000-0000-4000-8000-{self.n:012d}"
        rec["parentUuid"] = self.parent
        rec["timestamp"] = f"2025-12-10T20:{self.n:02d}:00.000Z"
        self.parent = rec["uuid"]
        self.records.append(rec)
        return rec

    def user(self, content: str, **extra: Any) -> None:
        rec = self._next(self.user_t)
        rec["message"]["content"] = content
        rec.update(extra)

    def assistant(self, text: str) -> None:
        rec = self._next(self.asst_t)
        rec["message"]["id"] = f"msg_bdrk_clone{self.n:04d}"
        rec["message"]["content"] = [{"type": "text", "text": text}]

    def write(self, repo: Path) -> Path:
        slug = "".join(c if c.isalnum() else "-" for c in str(repo))
        path = _home() / ".claude" / "projects" / slug / CLAUDE_REAL.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return path


def test_claude_repeated_prompt_and_reply_in_later_turns_are_kept(repo, scrubbed_env):
    s = _ClaudeClone(repo)
    for _ in range(2):
        s.user("continue")
        s.assistant("Done.")
    s.write(repo)
    _ingest(repo)
    users = _texts(repo, "claude-code", "user")
    assert users.count("continue") == 2
    assert _texts(repo, "claude-code", "assistant").count("Done.") == 2


def test_claude_slash_command_and_shell_mode_are_kept(repo, scrubbed_env):
    s = _ClaudeClone(repo)
    s.user("<command-message>commit is running…</command-message>\n"
           "<command-name>/commit</command-name>\n<command-args>-m wip</command-args>")
    s.user("Create a git commit with the staged changes.", isMeta=True)  # the expansion
    s.assistant("Committed.")
    s.user("<bash-input>ls -la</bash-input>")
    s.user("<bash-stdout>total 8\nhello.py</bash-stdout><bash-stderr></bash-stderr>")
    s.user("<bash-input>false</bash-input>")
    s.user("<bash-stdout></bash-stdout><bash-stderr>Exit code 1</bash-stderr>")
    s.write(repo)
    report = _ingest(repo)
    assert report["sessions"] == {"claude-code": 1}
    users = _texts(repo, "claude-code", "user")
    assert users[-3:] == ["/commit -m wip", "! ls -la", "! false"]
    assert "Create a git commit with the staged changes." not in users
    tools = _rows(repo, "SELECT e.role, e.text, c.command, c.exit_code, c.is_error FROM events e "
                        "JOIN tool_calls c USING(event_id) WHERE c.name='Bash' AND e.role!='assistant' "
                        "ORDER BY e.seq")
    assert tools == [("user", "! ls -la", "ls -la", None, 0),
                     ("tool", "total 8\nhello.py", "ls -la", None, 0),
                     ("user", "! false", "false", None, 0),
                     ("tool", "Exit code 1", "false", 1, 1)]


# -- Codex ---------------------------------------------------------------------------------

def test_codex_repeated_prompt_in_a_second_turn_is_kept(repo, scrubbed_env):
    lines = CODEX_REAL.read_text().replace("/home/user/project", str(repo)).splitlines()
    turn = "b2c3d4e5-f600-7891-bcde-f12345678901"
    second = [x.replace(turn, "c3d4e5f6-0000-7891-bcde-f12345678902")
               .replace("2026-05-12T10:00:", "2026-05-12T10:05:") for x in lines[1:]]
    sess = _home() / ".codex" / "sessions" / "2026" / "05" / "12"
    sess.mkdir(parents=True)
    (sess / "rollout-2026-05-12T10-00-00-a1b2c3d4-e5f6-7890-abcd-ef1234567890.jsonl"
     ).write_text("\n".join(lines + second) + "\n")
    report = _ingest(repo)
    assert report["sessions"] == {"codex": 1}
    assert _texts(repo, "codex", "user") == ["Hello, Codex! Please explain what you do."] * 2
    assert _texts(repo, "codex", "assistant") == [
        "I am Codex, an AI coding assistant by OpenAI."] * 2
    # each turn's two streams (response_item + event_msg) still count as one message
    assert report["noise"].get("duplicate_text") == 4


# -- OpenCode ------------------------------------------------------------------------------

def test_opencode_repeats_kept_and_patch_parts_are_not_edit_calls(repo, scrubbed_env):
    gen = generator("opencode", "make_opencode_db")
    data = _home() / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    conn = sqlite3.connect(data / "opencode.db")
    conn.executescript(gen.SCHEMA)
    conn.execute("INSERT INTO project VALUES (?,?,?,?,?,?,?,?,?,?)",
                 (gen.ROOT_SHA, str(repo), "git", "repo", None, None, gen.T0, gen.T0, gen.T0,
                  "[]"))
    sid = "ses_01JHrepeat000000000000001"
    conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                 "time_created, time_updated) VALUES (?,?,?,?,?,?,?,?)",
                 (sid, gen.ROOT_SHA, "calm-heron", str(repo), "Repeat", "1.18.33",
                  gen.T0, gen.T0))
    b = gen.Builder(conn)
    target = f"{repo}/app.py"
    for name, inp in (("write", {"filePath": target, "content": "print(1)\n"}),
                      ("edit", {"filePath": target, "oldString": "1", "newString": "2"})):
        b.message(sid, *gen.user("continue"))
        b.message(sid, gen.assistant(), [
            {"type": "step-start"},
            {"type": "text", "text": "Done."},
            gen.tool(name, "completed", inp, "ok"),
            {"type": "patch", "hash": f"h-{name}", "files": [target]},
            {"type": "step-finish", "reason": "stop"}])
    conn.commit()
    conn.close()
    report = _ingest(repo)
    assert report["sessions"] == {"opencode": 1}
    assert _texts(repo, "opencode", "user") == ["continue", "continue"]
    assert _texts(repo, "opencode", "assistant") == ["Done.", "Done."]
    calls = _rows(repo, "SELECT c.name, c.kind FROM tool_calls c JOIN events e USING(event_id) "
                        "WHERE e.agent='opencode' ORDER BY e.seq, c.idx")
    assert calls == [("write", "write"), ("edit", "edit")]
    files = _rows(repo, "SELECT relpath, op FROM tool_files ORDER BY rowid")
    assert files == [("app.py", "write"), ("app.py", "edit")]
    extras = [json.loads(r[0]) for r in _rows(
        repo, "SELECT extra FROM events WHERE agent='opencode' AND role='assistant'")]
    assert all(e.get("changed_files") == target for e in extras)


# -- Cursor --------------------------------------------------------------------------------

def test_cursor_workspace_inline_composers_are_read(repo, scrubbed_env):
    gen = generator("cursor", "make_cursor_fixtures")
    home = gen.build(_home())
    ws = home / ".config" / "Cursor" / "User" / "workspaceStorage" / \
        "c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8"
    (ws / "workspace.json").write_text(json.dumps({"folder": f"file://{repo}"}))
    _ingest(repo)
    per = dict(_rows(repo, "SELECT session_id, count(*) FROM events WHERE agent='cursor' "
                           "GROUP BY session_id"))
    # the legacy chat tab and both inline composers, repeated prompts/replies included
    assert per == {"tab-b1": 2, gen.C_INLINE: 6, gen.C_INLINE2: 2}
    texts = [r[0] for r in _rows(repo, "SELECT text FROM events WHERE session_id=? ORDER BY seq",
                                 gen.C_INLINE)]
    assert texts == ["Add a late-fee rule to invoices.py",
                     "I'll add `apply_late_fee` to invoices.py.",
                     "continue", "Done.", "continue", "Done."]
    roots = {r[0] for r in _rows(repo, "SELECT project_root FROM sessions WHERE agent='cursor'")}
    assert roots == {str(repo)}


def test_cursor_agent_transcript_attributed_by_the_repository_or_worktree_slug(
        repo, scrubbed_env, tmp_path):
    wt = tmp_path / "wt-feature"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "feature")
    projects = _home() / ".cursor" / "projects"
    for name, folder in (("in-worktree", wt), ("in-main", repo),
                         ("elsewhere", tmp_path / "other")):
        d = projects / cursor_slug(str(folder)) / "agent-transcripts"
        d.mkdir(parents=True)
        sid = {"in-worktree": "11111111-aaaa-4bbb-8ccc-000000000001",
               "in-main": "22222222-aaaa-4bbb-8ccc-000000000002",
               "elsewhere": "33333333-aaaa-4bbb-8ccc-000000000003"}[name]
        (d / f"{sid}.jsonl").write_text(CURSOR_TRANSCRIPT.read_text())
    report = _ingest(repo)
    assert report["sessions"] == {"cursor": 2}
    sessions = dict(_rows(repo, "SELECT session_id, project_root FROM sessions"))
    assert sessions == {"11111111-aaaa-4bbb-8ccc-000000000001": str(wt),
                        "22222222-aaaa-4bbb-8ccc-000000000002": str(repo)}
    # relative tool paths resolve against the worktree the session ran in
    files = {r for r in _rows(repo, "SELECT e.session_id, f.relpath, f.op FROM tool_files f "
                                    "JOIN events e USING(event_id) WHERE f.op='edit'")}
    assert ("11111111-aaaa-4bbb-8ccc-000000000001", "src/cli/sync.py", "edit") in files


# -- Windsurf ------------------------------------------------------------------------------

def test_windsurf_hook_transcripts_read_and_encrypted_pb_reported(repo, scrubbed_env):
    tdir = _home() / ".windsurf" / "transcripts"
    tdir.mkdir(parents=True)
    (tdir / WINDSURF_TRANSCRIPT.name).write_text(
        WINDSURF_TRANSCRIPT.read_text().replace("/home/user/src/shop-api", str(repo)))
    cascade = _home() / ".codeium" / "windsurf" / "cascade"
    cascade.mkdir(parents=True)
    (cascade / "9b1d2c3e-0000-4000-8000-000000000001.pb").write_bytes(os.urandom(8192))
    out = cli(repo, "ingest", "--json", "--once")
    report = json.loads(out.stdout)
    assert report["sessions"] == {"windsurf": 1}
    assert _texts(repo, "windsurf", "user") == [
        "Add a health endpoint to app.py and run the tests", "continue", "continue"]
    assert _texts(repo, "windsurf", "assistant").count("Done.") == 2
    files = _rows(repo, "SELECT relpath, op FROM tool_files ORDER BY rowid")
    assert files == [("app.py", "read"), ("app.py", "edit"), ("tests/test_health.py", "edit")]
    shells = _rows(repo, "SELECT command, exit_code, test_outcome FROM tool_calls "
                         "WHERE kind='shell' ORDER BY rowid")
    assert shells == [("python -m pytest -q", 1, "failed"), ("python -m pytest -q", 0, "passed")]
    assert "encrypted" in json.dumps(report)


def test_windsurf_discovery_lists_transcripts(scrubbed_env):
    from looma_git.ingest.base import DiscoveryEnv
    from looma_git.ingest.windsurf import WindsurfAdapter

    tdir = _home() / ".windsurf" / "transcripts"
    tdir.mkdir(parents=True)
    (tdir / "a.jsonl").write_text("")
    (tdir / ".tmp.jsonl").write_text("")
    found = WindsurfAdapter().discover(DiscoveryEnv(home=_home()))
    assert [(s.kind, s.path.name) for s in found] == [("jsonl", "a.jsonl")]


def test_windsurf_transcript_read_in_pieces_equals_one_read(tmp_path):
    from looma_git.ingest.windsurf.transcripts import read_transcript

    whole = read_transcript(WINDSURF_TRANSCRIPT, None).events
    data = WINDSURF_TRANSCRIPT.read_bytes()
    target = tmp_path / WINDSURF_TRANSCRIPT.name
    target.write_bytes(b"")
    cursor = None
    got = []
    prev = 0
    for cut in sorted({len(data) * k // 5 for k in range(1, 5)} | {len(data)}):
        with target.open("ab") as fh:
            fh.write(data[prev:cut])
        prev = cut
        r = read_transcript(target, cursor)
        cursor = r.cursor
        got.extend(r.events)
    key = [(e.seq, e.role, e.text, e.tool_calls, e.project_root) for e in whole]
    assert [(e.seq, e.role, e.text, e.tool_calls, e.project_root) for e in got] == key
    assert read_transcript(tmp_path / "gone.jsonl", cursor).skips[0].reason == "unreadable"
