"""`prepush`: the pre-push hook's best-effort sync never raises and never blocks past its budget."""

from __future__ import annotations

import time
from pathlib import Path

from looma_git.api import sync
from tests.helpers import git
from tests.sync.util import create, make_clone, make_remote, ref, wt


def test_prepush_syncs_a_shared_remote(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    create(a, "OAuth login")
    out = sync.prepush(a, "origin", budget_s=120)
    assert out.status == "pushed" and out.remotes == ["origin"]
    assert git(bare, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")
    assert "pre-push: synced origin" in (a.state_dir / "hooks.log").read_text()


def test_prepush_skips_remotes_that_do_not_share(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a", share=False)
    assert sync.prepush(a, "origin").status == "skipped"
    assert sync.prepush(a, "https://example.invalid/x.git").status == "skipped"
    assert git(bare, "for-each-ref", "refs/looma") == ""


def test_prepush_follows_the_curation_remote(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    curation = tmp_path / "curation.git"
    git(tmp_path, "init", "-q", "--bare", str(curation))
    a = make_clone(tmp_path, bare, "a", share=False)
    sync.share_enable(a, "origin", curation_url=str(curation))
    create(a, "Private")
    out = sync.prepush(a, "origin", budget_s=120)
    assert out.status == "pushed" and out.remotes == ["looma-curation"]
    assert git(curation, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")
    assert git(bare, "for-each-ref", "refs/looma") == ""


def test_prepush_never_raises_on_a_broken_remote(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    git(wt(a), "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    out = sync.prepush(a, "origin", budget_s=120)
    assert out.status == "failed"
    assert "pre-push: error: sync origin: cannot fetch" in (a.state_dir / "hooks.log").read_text()


def test_prepush_over_budget_continues_in_the_background(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    create(a, "OAuth login")
    out = sync.prepush(a, "origin", budget_s=0)
    assert out.status == "background"
    log = a.state_dir / "hooks.log"
    deadline = time.monotonic() + 120  # waiting for the child to finish, not timing it
    while time.monotonic() < deadline and "pre-push: synced origin" not in (
            log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    assert git(bare, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")
