"""From the wheel, as pip/pipx/uv install it: `looma demo` (the README's first command) runs
offline and shows every step (its scenario is package data), the man pages land in
<prefix>/share/man/man1 where `man` and `git looma --help` find them, and NO_COLOR is honoured.

The demo runs once, from the wheel on a real terminal: the README's users run that command,
and a second run from the source tree (tests/cli/test_demo.py until stop 30) ran the same
code on the same scenario for ~9 CPU-s more."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, git, make_repo, scrubbed_home

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("wheel", reason="building the wheel needs the `wheel` package")
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"  # a clean copy: no build/ or egg-info of the working tree leaks in
    shutil.copytree(REPO_ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache", "tests"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(base / "dist"), str(src)], check=True,
                   capture_output=True)
    wheel = next((base / "dist").glob("looma_git-*.whl"))
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path("
                                "'purelib'))"], capture_output=True, text=True,
                               check=True).stdout.strip())
    # The dependencies come from this environment (no network); a path added by a .pth line
    # does not run that directory's own .pth files, so the editable install stays inactive.
    (site / "looma-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                    "--no-deps", str(wheel)], check=True, capture_output=True)
    return venv


def _env(venv: Path, home: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in (base or os.environ).items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", HOME=str(home),
               MANPAGER="cat", PAGER="cat", MANWIDTH="80")
    return env


@pytest.fixture(scope="module")
def demo(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int | None, str, Path]:
    """`looma demo --dir DIR` from the wheel, on a pty with NO_COLOR=1, once for the module:
    (exit code, what the terminal showed, DIR). Module-scoped, so set up before the autouse
    env scrub: its environment is the scrubbed one (`scrubbed_home`)."""
    from tests.cli.ptyrun import PtyRun

    base = tmp_path_factory.mktemp("demo")
    env = _env(installed, base, scrubbed_home(base / "home"))
    run = PtyRun(base, "demo", "--dir", str(base / "demo"), env=dict(env, NO_COLOR="1"),
                 python=str(installed / "bin" / "python"))
    rc = run.wait(timeout=600)
    return rc, run.text, base / "demo"


def test_the_wheel_runs_the_demo_without_colour(installed: Path, demo: tuple[int | None, str,
                                                                             Path],
                                                tmp_path: Path) -> None:
    looma = installed / "bin" / "looma"
    env = _env(installed, tmp_path)
    where = subprocess.run([str(installed / "bin" / "python"), "-c",
                            "import looma_git; print(looma_git.__file__)"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    assert str(installed) in where and str(REPO_ROOT) not in where  # the wheel, not the tree
    rc, text, _ = demo
    assert rc == 0, text[-3000:]
    assert "Done. Explore:" in text and "(teammate) looma work" in text
    assert "\x1b[" not in text.replace("\x1b[K", ""), "NO_COLOR=1 still printed colour"
    assert looma.exists()


def test_demo_end_to_end(demo: tuple[int | None, str, Path]) -> None:
    """Every step shown, the notes written, the repository sound, the ledger shared."""
    rc, out, where = demo
    assert rc == 0, out[-3000:]
    for needle in ("$ looma ingest", "claude-code", "codex", "gemini-cli", "cursor", "opencode",
                   "confident:", "ambiguous:", "renamed", "# looma-note v1",
                   "(teammate) looma work", "Done. Explore:"):
        assert needle in out, needle
    repo = where / "repo"
    assert git(repo, "notes", "--ref=looma", "list")
    assert git(repo, "fsck", "--strict", check=True) == ""
    clone = where / "teammate-clone"
    assert git(clone, "rev-parse", "refs/looma/ledger") == git(repo, "rev-parse",
                                                               "refs/looma/ledger")
    teammate = out.split("(teammate) looma work")[1]
    assert "[conf " in teammate and "Search ranking" in teammate


def test_git_looma_help_opens_the_man_page(installed: Path, tmp_path: Path) -> None:
    if not shutil.which("man"):
        pytest.skip("man is not installed")
    assert (installed / "share" / "man" / "man1" / "git-looma.1").exists()
    assert (installed / "share" / "man" / "man1" / "looma-correct-split.1").exists()
    env = _env(installed, tmp_path)
    repo = make_repo(tmp_path / "r")
    proc = subprocess.run(["git", "looma", "--help"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "GIT-LOOMA(1)" in proc.stdout and "EXIT STATUS" in proc.stdout
    page = subprocess.run(["man", "looma-correct-split"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert page.returncode == 0 and "--by" in page.stdout.replace("‐", "-")
