"""`prepush`: the pre-push hook's sync (run detached by the shim) never raises and logs each target."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from looma_git.api import sync
from looma_git.api.hooks import prepush as hooks_prepush
from looma_git.gitrepo import RepoPaths
from looma_git.ingest.base import DiscoveryEnv
from looma_git.wire.results import PrepushOut
from tests.helpers import git
from tests.sync.util import create, make_clone, make_remote, ref, wt


def prepush(paths: RepoPaths, remote: str) -> PrepushOut:
    env = DiscoveryEnv(home=Path(os.devnull), environ={}, platform=sys.platform)
    return hooks_prepush(paths, env, remote)


def test_prepush_syncs_a_shared_remote(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    create(a, "OAuth login")
    out = prepush(a, "origin")
    assert out.status == "pushed" and out.remotes == ["origin"]
    assert git(bare, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")
    log = (a.state_dir / "hooks.log").read_text()
    assert "pre-push: synced origin" in log and "pre-push origin: pushed" in log


def test_prepush_skips_remotes_that_do_not_share(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a", share=False)
    assert prepush(a, "origin").status == "skipped"
    assert prepush(a, "https://example.invalid/x.git").status == "skipped"
    assert git(bare, "for-each-ref", "refs/looma") == ""


def test_prepush_follows_the_curation_remote(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    curation = tmp_path / "curation.git"
    git(tmp_path, "init", "-q", "--bare", str(curation))
    a = make_clone(tmp_path, bare, "a", share=False)
    sync.share_enable(a, "origin", curation_url=str(curation))
    create(a, "Private")
    out = prepush(a, "origin")
    assert out.status == "pushed" and out.remotes == ["looma-curation"]
    assert git(curation, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")
    assert git(bare, "for-each-ref", "refs/looma") == ""


def test_prepush_never_raises_on_a_broken_remote(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    git(wt(a), "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    out = prepush(a, "origin")
    assert out.status == "failed"
    assert "pre-push: error: sync origin: cannot fetch" in (a.state_dir / "hooks.log").read_text()
