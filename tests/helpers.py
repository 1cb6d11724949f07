"""Test helpers: run git and looma against real repositories in temp dirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "fixtures"

# What a test keeps of the caller's environment (tests/conftest.py `scrubbed_env`); HOME is
# its own and GIT_*, XDG_* and the agents' variables are gone.
KEEP_ENV = frozenset({"PATH", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV",
                      "SYSTEMROOT", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYTHONHASHSEED",
                      "LOOMA_UPDATE_GOLDEN"})
GITCONFIG = ("[user]\n\tname = Test User\n\temail = test@example.com\n"
             "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
             "[protocol \"file\"]\n\tallow = always\n")


def clean_env(home: Path) -> dict[str, str]:
    """The environment `scrubbed_env` gives a test, as a dict: for module- and session-scoped
    fixtures, which are set up outside any test's scrubbed environment."""
    env = {k: v for k, v in os.environ.items() if k in KEEP_ENV}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", LOOMA_NO_PROGRESS="1",
               LOOMA_DRAIN_SETTLE_S="0")
    return env


def scrubbed_home(home: Path) -> dict[str, str]:
    """Make `home` a test HOME (the test identity in ~/.gitconfig); return `clean_env(home)`."""
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(GITCONFIG)
    return clean_env(home)


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
        input: str | None = None) -> str:
    """Run the real git binary; return stdout (stripped of the final newline)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout.rstrip("\n")


def looma(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
          input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `python -m looma_git ARGS` as a real subprocess (the installed CLI's code path)."""
    proc = subprocess.run([sys.executable, "-m", "looma_git", *args], cwd=cwd,
                          capture_output=True, text=True, env=env or dict(os.environ),
                          input=input, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"looma {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def cli(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process (click's CliRunner isolation around `main`): the same
    entry point, error mapping and exit codes as `looma(...)`, without a Python start-up per
    call. `env`, when given, is the whole environment for the call (as for a subprocess)."""
    from click.testing import CliRunner

    from looma_git.cli.main import main

    overlay: dict[str, str | None] = {}
    if env is not None:
        overlay = {k: None for k in os.environ if k not in env}
        overlay.update(env)
    runner = CliRunner()
    old_cwd = os.getcwd()
    code: int | str | None = 0
    sys._looma_in_process = True  # type: ignore[attr-defined]
    with runner.isolation(input=input, env=overlay) as (out, err, _):
        os.chdir(cwd)
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code
        finally:
            os.chdir(old_cwd)
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    rc = code if isinstance(code, int) else (0 if code is None else 1)
    proc = subprocess.CompletedProcess(["looma", *args], rc, stdout.decode(), stderr.decode())
    if check and rc != 0:
        raise AssertionError(
            f"looma {' '.join(args)} failed ({rc}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def make_repo(path: Path, *, commits: int = 1) -> Path:
    """A real repository with `commits` commits on main."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for i in range(commits):
        (path / f"file{i}.txt").write_text(f"content {i}\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"commit {i}")
    return path


def commit_file(repo: Path, relpath: str, content: str, message: str,
                date: str | None = None) -> str:
    """Write one file and commit it; return the new sha."""
    target = repo / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    git(repo, "add", relpath)
    env = None
    if date:
        env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(repo, "commit", "-q", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD")
