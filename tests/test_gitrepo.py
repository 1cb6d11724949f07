"""Locating the repository: what looma says when git itself refuses it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import git, looma


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository away")
def test_a_repository_owned_by_another_user_shows_gits_safe_directory_hint(
        tmp_path: Path) -> None:
    repo = tmp_path / "theirs"
    git(tmp_path, "init", "-q", str(repo))
    shutil.chown(repo, "nobody")
    for p in repo.rglob("*"):
        shutil.chown(p, "nobody")
    proc = looma(repo, "status", check=False)
    assert proc.returncode == 3
    assert "not a git repository" not in proc.stderr
    assert "dubious ownership" in proc.stderr
    assert f"git config --global --add safe.directory {repo}" in proc.stderr
    git(repo, "config", "--global", "--add", "safe.directory", str(repo))
    assert "dubious" not in looma(repo, "status", check=False).stderr
