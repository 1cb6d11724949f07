"""SIGKILL `looma ingest` at several points; the next run completes it to the same store."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.ingest.gen_claude import typical_session

_TABLES = {
    "events": "SELECT event_id, agent, session_id, seq, ts, role, model, branch, text, raw_json,"
              " schema_version, extra, content_sig FROM events ORDER BY event_id",
    "tool_calls": "SELECT * FROM tool_calls ORDER BY event_id, idx",
    "tool_files": "SELECT * FROM tool_files ORDER BY event_id, idx, raw_path",
    "sessions": "SELECT * FROM sessions ORDER BY agent, session_id",
    "cursors": 'SELECT source_id, "offset", head_fp, content_hash, state, size, mtime_ns'
               " FROM cursors ORDER BY source_id",
}


def _snapshot(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {name: [tuple(r) for r in conn.execute(q)] for name, q in _TABLES.items()}
    finally:
        conn.close()


def _cmd(repo: Path, home: Path) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, HOME=str(home), LOOMA_NO_PROGRESS="1")
    return [sys.executable, "-m", "looma_git", "ingest", "--agent", "claude-code"], env


def test_sigkill_at_any_point_then_rerun_equals_one_clean_run(repo, scrubbed_env):
    home = scrubbed_env
    projects = home / ".claude" / "projects"
    for i in range(120):
        typical_session(str(repo), seed=i, turns=10).write(projects)
    cmd, env = _cmd(repo, home)
    state = repo / ".git" / "looma"

    subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True, timeout=300)
    clean = _snapshot(state / "store.db")
    assert len(clean["events"]) == 120 * 50

    killed_mid_run = 0
    for delay in (0.2, 0.5, 0.8, 1.2, 1.8):
        shutil.rmtree(state)
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if proc.poll() is None:
            killed_mid_run += 1
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # A second kill during the recovery run, then a full run.
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(delay / 2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True, timeout=300)
        assert _snapshot(state / "store.db") == clean, f"store differs after kill at {delay}s"
    assert killed_mid_run >= 1  # at least one kill really landed inside a run
