"""From the wheel, as pip/pipx/uv install it: `looma demo` works (its scenario is package data),
the man pages land in <prefix>/share/man/man1 where `man` and `git looma --help` find them,
and NO_COLOR is honoured."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, make_repo

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


def _env(venv: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", HOME=str(home),
               MANPAGER="cat", PAGER="cat", MANWIDTH="80")
    return env


def test_the_wheel_runs_the_demo_without_colour(installed: Path, tmp_path: Path) -> None:
    looma = installed / "bin" / "looma"
    env = _env(installed, tmp_path)
    where = subprocess.run([str(installed / "bin" / "python"), "-c",
                            "import looma_git; print(looma_git.__file__)"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    assert str(installed) in where and str(REPO_ROOT) not in where  # the wheel, not the tree
    from tests.cli.ptyrun import PtyRun

    run = PtyRun(tmp_path, "demo", "--dir", str(tmp_path / "demo"),
                 env=dict(env, NO_COLOR="1"), python=str(installed / "bin" / "python"))
    rc = run.wait(timeout=600)
    assert rc == 0, run.text[-3000:]
    assert "Done. Explore:" in run.text and "(teammate) looma work" in run.text
    assert "\x1b[" not in run.text.replace("\x1b[K", ""), "NO_COLOR=1 still printed colour"
    assert looma.exists()


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
