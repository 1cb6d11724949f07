"""`git filter-repo` deleting refs/looma/ledger: verify says so and how to restore it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from looma_git.api import ledger, sync
from tests.helpers import cli as looma
from tests.helpers import git
from tests.sync.util import create, make_clone, make_remote, wt

FILTER_REPO = Path(sys.executable).parent / "git-filter-repo"


@pytest.mark.skipif(not FILTER_REPO.exists(), reason="git-filter-repo is not installed")
def test_filter_repo_path_deletes_the_ledger_and_verify_says_how_to_restore(
        tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    clone = make_clone(tmp_path, bare, "a")
    wid = create(clone, "Session store")
    sync.sync(clone)
    repo = wt(clone)
    assert "ok (" in looma(repo, "verify").stdout
    subprocess.run([str(FILTER_REPO), "--force", "--path", "file0.txt"], cwd=repo, check=True,
                   capture_output=True)
    assert git(repo, "for-each-ref", "refs/looma/ledger") == ""

    proc = looma(repo, "verify", check=False)
    assert proc.returncode == 6
    assert "ok (0 ops)" not in proc.stdout
    assert "refs/looma/ledger is gone" in proc.stdout and "filter-repo" in proc.stdout
    assert "git fetch <remote> refs/looma/ledger:refs/looma/ledger" in proc.stdout

    # The remote still has it: fetching it back restores every op.
    if git(repo, "remote", check=False) == "":
        git(repo, "remote", "add", "origin", str(bare))  # filter-repo drops origin
    git(repo, "fetch", "-q", "origin", "refs/looma/ledger:refs/looma/ledger")
    assert "ok (" in looma(repo, "verify").stdout
    assert wid in {w.id for w in ledger.load_state(clone).workitems.values()}
