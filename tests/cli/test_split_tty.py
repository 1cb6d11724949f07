"""`looma correct split` asks for the partition interactively on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time

from tests.api.scenario_env import by_files, work


def test_split_asks_on_a_tty(scenario) -> None:
    repo, env, _ = scenario
    a = by_files(work(repo, env), "auth/oauth.py")
    assert len(a["sessions"]) == 2
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "looma_git", "correct", "split", a["id"], "--into",
         "OAuth client,OAuth routes"], cwd=repo, env=env, stdin=slave, stdout=slave,
        stderr=slave, close_fds=True)
    os.close(slave)
    out = b""
    answers = [b"1\n", b"2\n"]
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
        if out.count(b"-> part") > 2 - len(answers) and answers:
            os.write(master, answers.pop(0))
    proc.wait(timeout=60)
    os.close(master)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text
    assert "Splitting" in text and "-> part" in text and "split" in text
    titles = sorted(w["title"] for w in work(repo, env) if w["title"].startswith("OAuth "))
    assert titles == ["OAuth client", "OAuth routes"]
