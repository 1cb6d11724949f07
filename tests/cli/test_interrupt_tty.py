"""Ctrl-C during `looma ingest` on a real terminal: one line, exit 130, no worker tracebacks,
no hang, no process left behind, and the next run completes the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.ptyrun import PtyRun
from tests.helpers import cli
from tests.ingest.gen_claude import typical_session

# Enough that each interrupted phase lasts well past the Ctrl-C (the reading ~1 s on 2 cores).
SESSIONS, EVENTS_EACH = 100, 50


def _session_members(sid: int) -> list[int]:
    """Processes still alive in the pty's session (the looma process and its workers)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(d.name))
    return out


def _screen_lines(text: str) -> list[str]:
    """What a person sees: each \\r-redrawn progress line collapsed to its last state."""
    lines = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        last = raw.split("\r")[-1].replace("\x1b[K", "").strip()
        if last:
            lines.append(last)
    return lines


@pytest.fixture
def history(repo: Path, scrubbed_env: Path) -> tuple[Path, dict[str, str]]:
    for i in range(SESSIONS):
        typical_session(str(repo), seed=i, turns=10).write(scrubbed_env / ".claude" / "projects")
    cli(repo, "init")
    return repo, dict(os.environ)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and a pty")
@pytest.mark.parametrize("phase", ["reading transcripts", "building the work model"])
def test_ctrl_c_is_one_line_exit_130_and_the_next_run_completes(history, phase: str) -> None:
    repo, env = history
    run = PtyRun(repo, "ingest", env=env)
    assert run.read_until(phase + ":", timeout=120), run.text
    run.send(b"\x03")  # the terminal turns this into SIGINT for the whole foreground group
    rc = run.wait(timeout=30)
    assert rc is not None, "ingest hung after Ctrl-C:\n" + run.text
    assert not _session_members(run.pid), "a worker outlived the interrupted ingest"
    lines = _screen_lines(run.text)
    for bad in ("Traceback", "KeyboardInterrupt", "ForkPoolWorker", "Process ", "internal error"):
        assert bad not in run.text, run.text
    if rc == 0:  # the phase ended between our read and the signal: nothing to check
        pytest.skip("ingest finished before the Ctrl-C arrived")
    assert rc == 130, run.text
    assert lines[-1] == "looma: interrupted", lines
    assert [ln for ln in lines if ln.startswith("looma:")] == ["looma: interrupted"]
    # Nothing half-written: a plain rerun completes the work to what one clean run stores.
    proc = subprocess.run([sys.executable, "-m", "looma_git", "ingest", "--json"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    import sqlite3

    conn = sqlite3.connect(repo / ".git" / "looma" / "store.db")
    try:
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()
    assert events == SESSIONS * EVENTS_EACH
    assert cli(repo, "verify", check=False).returncode == 0
