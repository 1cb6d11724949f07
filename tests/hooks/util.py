"""Helpers for hook tests: twin repositories, running git with hooks, waiting for the drainer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import cli, git

DATE = "2026-01-01T00:00:00+00:00"
FIXED = {"GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE}


def env(**extra: str) -> dict[str, str]:
    """The scrubbed test environment with fixed commit dates (same sha in twin repos)."""
    e = dict(os.environ, **FIXED)
    e.update(extra)
    return e


def twin(base: Path, name: str = "repo") -> Path:
    """A repository with one commit whose sha is the same wherever it is created."""
    path = base / name
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("a\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "first", env=env())
    return path


def run_git(cwd: Path, *args: str, extra_env: dict[str, str] | None = None,
            input: str | None = None) -> tuple[int, str, str]:
    """Run git with stdin from /dev/null (no TTY); (status, stdout, stderr)."""
    e = env(**(extra_env or {}))
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=e,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def normalize(result: tuple[int, str, str], base: Path) -> tuple[int, str, str]:
    """Replace the twin's base directory so outputs from twin repositories compare equal."""
    rc, out, err = result
    return rc, out.replace(str(base), "<base>"), err.replace(str(base), "<base>")


def install(repo: Path, python: str | None = None) -> None:
    """`looma hooks install` through the CLI's entry point, in process (it only writes the
    shims, which bake this interpreter); or, with `python`, another interpreter baked."""
    if python is None:
        cli(repo, "hooks", "install")
        return
    code = ("import sys; from looma_git.api import hooks; from looma_git.gitrepo import find_repo;"
            f"hooks.install(find_repo(), {python!r})")
    subprocess.run([sys.executable, "-c", code], cwd=repo, check=True, env=dict(os.environ))


def state_dir(repo: Path) -> Path:
    return repo / ".git" / "looma"


def read_state(repo: Path) -> dict:
    try:
        return json.loads((state_dir(repo) / "hooks-state.json").read_text())
    except (OSError, ValueError):
        return {}


def wait_for(predicate, what: str, deadline_s: float = 90.0):
    """Poll until predicate() is truthy: the drainer runs detached, in the background.
    (Not a timing assertion: the deadline only turns a hang into a readable failure.)"""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def wait_drains(repo: Path, count: int) -> dict:
    """Wait until the drainer recorded `count` drains, and its lock is released."""
    def done():
        st = read_state(repo)
        lock = state_dir(repo) / "drain.lock"
        try:
            idle = not lock.exists() or lock.read_text().strip() == ""
        except OSError:  # e.g. still a stale directory the drainer has not replaced yet
            idle = False
        return st if st.get("drains", 0) >= count and idle else None
    return wait_for(done, f"{count} drain(s)")


def status_json(repo: Path, **extra_env: str) -> dict:
    """`looma hooks status --json` (in process: it only reads)."""
    proc = cli(repo, "hooks", "status", "--json", env=dict(os.environ, **extra_env))
    return json.loads(proc.stdout)
