"""Long commands name their phases with elapsed time on a terminal and are quiet in a pipe."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.cli.ptyrun import PtyRun
from tests.cli.test_interrupt_tty import _screen_lines


def _seconds(text: str) -> float:
    m = re.fullmatch(r"(?:(\d+)m)?(\d+(?:\.\d+)?)s", text)
    assert m, text
    return int(m.group(1) or 0) * 60 + float(m.group(2))


def test_reprocess_and_backfill_show_phases_on_a_tty(scenario) -> None:
    repo, env, _ = scenario
    run = PtyRun(repo, "reprocess", env=env)
    assert run.wait(timeout=300) == 0, run.text
    lines = _screen_lines(run.text)
    phases = [ln for ln in lines if ": done in " in ln]
    assert [p.split(":")[0] for p in phases] == ["building the work model", "indexing"], lines
    total = _seconds(re.findall(r"; (\d\S*s)$", " ".join(lines[2:]))[-1])
    assert total >= sum(_seconds(p.rsplit(" ", 1)[1]) for p in phases) - 0.2, lines
    assert all(len(ln) <= 80 for ln in lines), lines
    run = PtyRun(repo, "backfill", env=env)
    assert run.wait(timeout=300) == 0, run.text
    assert any(ln.startswith("linking commits to WorkItems: done in ")
               for ln in _screen_lines(run.text)), run.text


def test_ingest_reports_true_elapsed_time_on_a_tty(scenario) -> None:
    repo, env, _ = scenario
    from tests.api.scenario_env import add_claude_session

    add_claude_session(repo, env, "progress-1", "Speed up search indexing", ["search/index.py"])
    run = PtyRun(repo, "ingest", env=env)
    assert run.wait(timeout=300) == 0, run.text
    lines = _screen_lines(run.text)
    phases = [ln for ln in lines if ": done in " in ln]
    assert [p.split(":")[0] for p in phases] == [
        "reading transcripts", "building the work model", "indexing"], lines
    summary = next(ln for ln in lines if ln.startswith("ingested "))
    total = _seconds(re.search(r" in (\S+?s)\b", summary).group(1))
    assert total >= sum(_seconds(p.rsplit(" ", 1)[1]) for p in phases) - 0.2, lines


def test_quiet_in_a_pipe(scenario) -> None:
    repo, env, _ = scenario
    env = {k: v for k, v in env.items() if k != "LOOMA_NO_PROGRESS"}
    for args in (("reprocess",), ("backfill",), ("reindex",), ("ingest",)):
        proc = subprocess.run([sys.executable, "-m", "looma_git", *args], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "", (args, proc.stderr)
        assert "\r" not in proc.stdout and "\x1b" not in proc.stdout
