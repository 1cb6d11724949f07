"""SIGKILL `looma ingest` at each phase boundary and inside its reading; the next run completes
it to the same store."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.ptyrun import PtyRun
from tests.ingest.gen_claude import typical_session

EVENTS_EACH = 50  # typical_session(turns=10)
_TXN_EVENTS = 5000  # events per store commit of these runs (LOOMA_INGEST_TXN_EVENTS)
# Enough sessions that the reading phase commits one batch of sources before its end, so a
# kill can land before it, after it, or between phases.
SESSIONS = _TXN_EVENTS // EVENTS_EACH + 10
_FIRST_COMMIT = -(-_TXN_EVENTS // EVENTS_EACH)  # sources read when the first batch commits

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
    env = dict(os.environ, HOME=str(home), LOOMA_NO_PROGRESS="1",
               LOOMA_INGEST_TXN_EVENTS=str(_TXN_EVENTS))
    return [sys.executable, "-m", "looma_git", "ingest", "--agent", "claude-code"], env


_PROGRESS = re.compile(rb"reading transcripts: [^\r\n]*?(\d+)/(\d+)")


def _read(out: bytes) -> tuple[int, int]:
    """(sources read, sources to read) of the reading phase's last progress line, or (0, 0)."""
    hits = _PROGRESS.findall(out)
    return (int(hits[-1][0]), int(hits[-1][1])) if hits else (0, 0)


# Where the runs are killed, one after another (each run after the first is the recovery run
# of the one killed before it): as the reading starts, inside its first batch (nothing of it
# committed), just after that batch committed, as the work model starts and as the indexing
# starts (each phase boundary). The progress display says where a run is, so every kill lands
# where it is meant to on a fast machine or a loaded one (fixed delays did neither).
_KILLS: tuple[tuple[str, Callable[[bytes], bool]], ...] = (
    ("reading starts", lambda out: b"reading transcripts:" in out),
    ("inside the first batch", lambda out: _read(out)[0] >= _FIRST_COMMIT // 2),
    ("after the first batch", lambda out: _read(out)[0] > _FIRST_COMMIT),
    ("work model starts", lambda out: b"building the work model:" in out),
    ("indexing starts", lambda out: b"indexing:" in out),
)


def _run_and_kill(repo: Path, env: dict[str, str], when: Callable[[bytes], bool]) -> bool:
    """`looma ingest` on a pty (so it draws its progress), SIGKILLed once `when(output)` holds;
    whether the kill landed inside the run."""
    run = PtyRun(repo, "ingest", "--agent", "claude-code", env=env)
    deadline = time.monotonic() + 300
    while not when(run.out) and time.monotonic() < deadline and run._read(0.05):
        pass
    alive = run._alive()
    os.kill(run.pid, signal.SIGKILL)
    run.wait(timeout=60)
    return alive


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pty")
def test_sigkill_at_any_point_then_rerun_equals_one_clean_run(repo, scrubbed_env):
    home = scrubbed_env
    projects = home / ".claude" / "projects"
    for i in range(SESSIONS):
        typical_session(str(repo), seed=i, turns=10).write(projects)
    cmd, env = _cmd(repo, home)
    state = repo / ".git" / "looma"

    subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True, timeout=300)
    clean = _snapshot(state / "store.db")
    assert len(clean["events"]) == SESSIONS * EVENTS_EACH

    shutil.rmtree(state)
    landed = {point: _run_and_kill(repo, env, when) for point, when in _KILLS}
    subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True, timeout=300)
    assert _snapshot(state / "store.db") == clean, "the store differs after the kills"
    assert all(landed.values()), landed  # every kill landed inside a run
