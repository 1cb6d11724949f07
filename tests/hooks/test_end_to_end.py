"""The real steps: an amend in an initialized clone becomes a commit.rewrite op in the ledger."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import cli, commit_file, git
from tests.hooks.util import wait_drains


def test_amend_lands_as_commit_rewrite_op_read_back_with_git(repo: Path) -> None:
    cli(repo, "init")
    cli(repo, "hooks", "install")
    old = commit_file(repo, "src/app.py", "print('a')\n", "add app")
    wait_drains(repo, 1)
    git(repo, "commit", "-q", "--amend", "-m", "add app (amended)")
    new = git(repo, "rev-parse", "HEAD")
    st = wait_drains(repo, 2)
    steps = {s["name"]: s for s in st["last_drain"]["steps"]}
    assert steps["rewrites"]["status"] == "ok", steps
    files = git(repo, "ls-tree", "-r", "--name-only", "refs/looma/ledger").splitlines()
    ops = [git(repo, "show", f"refs/looma/ledger:{f}") for f in files if f.startswith("ops/")]
    rewrite = [o for o in ops if "commit.rewrite" in o]
    assert len(rewrite) == 1
    assert old in rewrite[0] and new in rewrite[0] and "kind: system" in rewrite[0]
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "looma" / "rewrites").exists() or \
        (repo / ".git" / "looma" / "rewrites").read_text() == ""
