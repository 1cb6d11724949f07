"""A read-only `.git` (a real read-only bind mount, so it bites even as root): writes fail with
a clear error and change nothing; reads still work; hooks never change what git does."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli as looma
from tests.helpers import git


def _can_mount_ro(tmp: Path) -> bool:
    if not shutil.which("unshare") or os.geteuid() != 0:
        return False
    probe = tmp / "probe"
    probe.mkdir()
    proc = subprocess.run(["unshare", "-m", "sh", "-c",
                           f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe}"
                           f" && ! touch {probe}/x 2>/dev/null"], capture_output=True)
    return proc.returncode == 0


def _ro(target: Path, cwd: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run argv in a private mount namespace where `target` is read-only."""
    cmd = " ".join(shlex.quote(a) for a in argv)
    script = (f"mount --bind {shlex.quote(str(target))} {shlex.quote(str(target))} && "
              f"mount -o remount,bind,ro {shlex.quote(str(target))} && exec {cmd}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=cwd, capture_output=True,
                          text=True, env=dict(os.environ))


@pytest.fixture
def seeded(repo: Path, tmp_path: Path) -> tuple[Path, str]:
    if not _can_mount_ro(tmp_path):
        pytest.skip("read-only bind mounts need root and mount namespaces")
    looma(repo, "init")
    from looma_git.api.ledger import append
    from looma_git.gitrepo import find_repo
    from looma_git.ledger.ops import OpDraft

    (op,) = append(find_repo(repo), [OpDraft(op="workitem.create",
                                             target={"type": "workitem", "id": None},
                                             payload={"title": "Read-only test", "files": []})],
                   actor="system")
    return repo, str(op.created_id())


def test_writes_fail_clearly_and_change_nothing(seeded) -> None:
    repo, wid = seeded
    before = git(repo, "rev-parse", "refs/looma/ledger")
    py = [sys.executable, "-m", "looma_git"]
    proc = _ro(repo / ".git", repo, [*py, "correct", "rename", wid, "New title"])
    assert proc.returncode not in (0, 70), proc.stderr
    assert "looma: error" in proc.stderr and "Traceback" not in proc.stderr
    assert git(repo, "rev-parse", "refs/looma/ledger") == before
    read = _ro(repo / ".git", repo, [*py, "work", "--json"])
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["workitems"][0]["title"] == "Read-only test"
    assert git(repo, "fsck", "--strict") == ""


def test_commit_with_hooks_and_readonly_state_dir(seeded) -> None:
    repo, _ = seeded
    looma(repo, "hooks", "install")
    (repo / "f.txt").write_text("x\n")
    git(repo, "add", "f.txt")
    proc = _ro(repo / ".git" / "looma", repo, ["git", "commit", "-q", "-m", "ro state"])
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc
    assert git(repo, "log", "-1", "--format=%s") == "ro state"


def test_reads_on_a_read_only_file_system_read_instead_of_failing(seeded) -> None:
    repo, wid = seeded
    py = [sys.executable, "-m", "looma_git"]
    looma(repo, "work")  # an index exists ...
    from looma_git.api.ledger import append
    from looma_git.gitrepo import find_repo
    from looma_git.ledger.ops import OpDraft

    append(find_repo(repo), [OpDraft(op="workitem.rename", target={"type": "workitem", "id": wid},
                                     payload={"title": "Read-only session store"})],
           actor="user")  # ... and is now behind the ledger: a read would refresh it
    for argv in (["status"], ["resume", "session store"], ["ask", "session store"],
                 ["work", "--json"]):
        proc = _ro(repo, repo, [*py, *argv])  # the whole repository read-only
        assert proc.returncode == 0, (argv, proc.stderr)
        assert "internal error" not in proc.stderr
    resume = _ro(repo, repo, [*py, "resume", "session store", "--json"])
    assert json.loads(resume.stdout)["candidates"][0]["title"] == "Read-only session store"


def test_a_truncated_store_db_is_rebuilt_by_reindex_from_the_refs(repo: Path) -> None:
    looma(repo, "init")
    from looma_git.api.ledger import append
    from looma_git.gitrepo import find_repo
    from looma_git.ledger.ops import OpDraft

    append(find_repo(repo), [OpDraft(op="workitem.create", target={"type": "workitem", "id": None},
                                     payload={"title": "Survives a broken cache", "files": []})],
           actor="system")
    looma(repo, "reindex")
    db = repo / ".git" / "looma" / "store.db"
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 2)  # e.g. a disk that filled mid-write
    status = looma(repo, "status", check=False)
    assert status.returncode not in (0, 70) and "truncated" in status.stderr
    assert "looma reindex" in status.stderr and "internal error" not in status.stderr
    out = looma(repo, "reindex").stdout
    assert "repaired:" in out and "truncated" in out
    assert looma(repo, "status").returncode == 0
    work = json.loads(looma(repo, "work", "--json").stdout)
    assert [w["title"] for w in work["workitems"]] == ["Survives a broken cache"]
    assert list(db.parent.glob("store.db.damaged-*"))  # kept aside, not deleted
