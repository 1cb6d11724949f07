"""`looma ingest` as a real subprocess: --json contract, --source, --agent, summary table."""

from __future__ import annotations

import json
import os
import sqlite3

from tests.helpers import FIXTURES
from tests.helpers import cli as looma

FIX = FIXTURES / "claude-code" / "codemie-code" / "-tmp-private"


def test_cli_json_and_source_override_on_a_real_capture(repo, scrubbed_env, tmp_path):
    # The captured session ran in /tmp/private: replay it as if it ran in this repository.
    src = tmp_path / "projects" / "-repo"
    src.mkdir(parents=True)
    for f in FIX.iterdir():
        (src / f.name).write_text(f.read_text().replace("/tmp/private", str(repo)))
    env = dict(os.environ)
    out = looma(repo, "ingest", "--json", "--once", "--source",
                f"claude-code={tmp_path / 'projects'}", env=env)
    report = json.loads(out.stdout)
    assert report["events_added"] == 14  # 10 in the session + 2 per Warmup subagent
    assert report["sessions"] == {"claude-code": 3}
    assert report["skipped"] == {"non_message": 6}
    db = sqlite3.connect(repo / ".git" / "looma" / "store.db")
    files = sorted(r for r in db.execute(
        "SELECT DISTINCT relpath, op FROM tool_files WHERE relpath IS NOT NULL"))
    assert files == [("hello.js", "write"), ("hello.md", "write"), ("hello.py", "edit"),
                     ("hello.py", "read"), ("hello.py", "write")]
    subs = db.execute("SELECT session_id, parent_session FROM sessions WHERE is_subagent=1"
                      " ORDER BY session_id").fetchall()
    assert subs == [("4c2ddfdc-b619-4525-8d03-1950fb1b0257/agent-36541525",
                     "4c2ddfdc-b619-4525-8d03-1950fb1b0257"),
                    ("4c2ddfdc-b619-4525-8d03-1950fb1b0257/agent-50243ee8",
                     "4c2ddfdc-b619-4525-8d03-1950fb1b0257")]
    again = json.loads(looma(repo, "ingest", "--json", "--source",
                             f"claude-code={tmp_path / 'projects'}", env=env).stdout)
    assert again["events_added"] == 0 and again["sessions"] == {}
    # Human output: a per-agent table on stdout, no progress bar when not a TTY.
    human = looma(repo, "ingest", "--agent", "claude-code", "--source",
                  f"claude-code={tmp_path / 'projects'}", env=env)
    assert "claude-code" in human.stdout and "\r" not in human.stderr


def test_cli_rejects_bad_arguments(repo, scrubbed_env):
    bad = looma(repo, "ingest", "--agent", "nope", check=False)
    assert bad.returncode == 2 and "unknown agent" in bad.stderr
    bad = looma(repo, "ingest", "--source", "no-equals-sign", check=False)
    assert bad.returncode == 2 and "AGENT=PATH" in bad.stderr


def test_cli_outside_a_repository(tmp_path, scrubbed_env):
    out = looma(tmp_path, "ingest", check=False)
    assert out.returncode == 3 and "not a git repository" in out.stderr
