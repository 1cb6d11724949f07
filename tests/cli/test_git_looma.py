"""`git looma ...` reaches the same CLI through the git-looma console script."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import git


def test_git_looma_runs(repo: Path) -> None:
    bindir = Path(sys.executable).parent
    if not (bindir / "git-looma").exists() and not shutil.which("git-looma"):
        pytest.skip("git-looma console script not installed (run from an installed package)")
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    assert "looma, version" in git(repo, "looma", "--version", env=env)
    assert "initialized" in git(repo, "looma", "init", env=env)
    assert git(repo, "rev-parse", "refs/looma/ledger")
