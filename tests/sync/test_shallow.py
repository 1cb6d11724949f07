"""A shallow clone syncs without touching notes on commits it does not have."""

from __future__ import annotations

from pathlib import Path

from looma_git.api import ledger, sync
from looma_git.gitrepo import find_repo
from tests.helpers import git
from tests.sync.util import create, link, make_clone, make_remote, rename, wt


def remote_notes(bare: Path) -> dict[str, str]:
    out = git(bare, "notes", "--ref=looma", "list")
    return {line.split()[1]: git(bare, "cat-file", "-p", line.split()[0])
            for line in out.splitlines() if line}


def test_rename_and_sync_from_a_depth_1_clone_keeps_every_remote_note(tmp_path: Path) -> None:
    bare = make_remote(tmp_path, commits=7)
    full = make_clone(tmp_path, bare, "full")
    shas = git(wt(full), "rev-list", "main").split()
    assert len(shas) == 7
    wid = create(full, "Session store")
    for s in shas:
        link(full, s, wid)
    sync.sync(full)
    before = remote_notes(bare)
    assert len(before) == 7 and all("Session store" in t for t in before.values())

    git(tmp_path, "clone", "-q", "--depth", "1", bare.as_uri(), "shallow")
    shallow = find_repo(tmp_path / "shallow")
    ledger.init_repo(shallow)
    sync.share_enable(shallow, "origin")
    sync.sync(shallow)
    assert git(wt(shallow), "rev-list", "--count", "HEAD") == "1"
    rename(shallow, wid, "Session store: TTL from settings")  # every note's text changes
    sync.sync(shallow)

    after = remote_notes(bare)
    assert set(after) == set(before)  # 7 notes, none dropped
    tip = shas[0]
    assert "Session store: TTL from settings" in after[tip]  # the commit it has: regenerated
    for s in shas[1:]:
        assert after[s] == before[s]  # commits it lacks: carried over unchanged

    # The full clone takes the rename and regenerates the rest; nothing is lost either way.
    sync.sync(full)
    final = remote_notes(bare)
    assert set(final) == set(before)
    assert all("Session store: TTL from settings" in t for t in final.values())
