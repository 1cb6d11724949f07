"""`looma init`, `looma verify`, `looma log` as real subprocesses; errors exit non-zero cleanly."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from looma_git.api import ledger as api
from looma_git.gitrepo import find_repo
from looma_git.ledger.ops import OpDraft
from tests.helpers import cli as looma
from tests.helpers import git
from tests.store.ledger_helpers import inject


def test_init_verify_log(repo: Path) -> None:
    out = looma(repo, "init").stdout
    assert "initialized" in out and "notes.rewriteRef" in out
    assert "already initialized" in looma(repo, "init").stdout
    assert git(repo, "config", "--get-all", "notes.rewriteRef") == "refs/notes/looma"
    paths = find_repo(repo)
    op = api.append(paths, [OpDraft("workitem.create", {"type": "workitem"}, {"title": "T"})])[0]
    line = looma(repo, "log").stdout.strip()
    assert line.startswith(f"{op.id[:10]} L1 ") and "Test User workitem.create" in line
    data = json.loads(looma(repo, "log", "--json", "-n", "1", "--user").stdout)
    assert data["ops"][0]["id"] == op.id
    assert "ledger ok (1 ops" in looma(repo, "verify").stdout
    assert "Show ledger ops newest first" in looma(repo, "log", "--help").stdout


def test_verify_problem_exits_nonzero(repo: Path, tmp_path: Path) -> None:
    looma(repo, "init")
    inject(repo, {"ops/ab/" + "ab" * 32 + ".yaml": b"a: &x 1\nb: *x\n"}, tmp_path)
    proc = looma(repo, "verify", check=False)
    assert proc.returncode == 6 and "anchors" in proc.stdout
    assert "Traceback" not in proc.stderr and "problem(s) found" in proc.stderr


def test_error_paths_have_no_traceback(tmp_path: Path, repo: Path) -> None:
    proc = looma(tmp_path, "log", check=False)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    git(tmp_path, "init", "-q", "--bare", "b.git")
    proc = looma(tmp_path / "b.git", "init", check=False)
    assert proc.returncode == 3 and "bare" in proc.stderr
    looma(repo, "init")
    inject(repo, {"format.yaml": b"looma_ledger: 9\n"}, tmp_path)
    proc = looma(repo, "log", check=False)
    assert proc.returncode == 5 and "format 9" in proc.stderr and "Traceback" not in proc.stderr


def test_stale_lock_cli_message(repo: Path) -> None:
    looma(repo, "init")
    paths = find_repo(repo)
    lock = paths.common_dir / "refs" / "looma" / "ledger.lock"
    lock.write_text("")
    os.utime(lock, (time.time() - 100, time.time() - 100))
    proc = looma(repo, "-C", str(repo), "verify", check=False)
    assert proc.returncode == 0  # reads never need the lock
