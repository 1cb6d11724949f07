"""Packs moved by git (pack-objects for pushes, index-pack for fetches) over dulwich's protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from looma_git.api import sync
from looma_git.errors import RemoteError
from tests.helpers import git
from tests.sync.util import create, link, make_clone, make_remote, ref, wt


def test_pushed_and_fetched_packs_are_complete_for_git(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    git(wt(b), "remote", "set-url", "origin", bare.as_uri())  # file:// takes the same path
    shas = git(wt(a), "rev-list", "main").split()
    for i in range(30):
        link(a, shas[i % len(shas)], create(a, f"a item {i}"))
        create(b, f"b item {i}")
    assert sync.sync(a).pushed
    assert sync.sync(b).pushed
    assert sync.sync(a).ops_in == 30
    for repo in (bare, wt(a), wt(b)):
        git(repo, "fsck", "--strict", "--no-dangling")
        git(repo, "rev-list", "--objects", "refs/looma/ledger", "refs/notes/looma")
    assert git(bare, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger") \
        == ref(b, "refs/looma/ledger")


def test_a_refused_push_changes_nothing_locally(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'looma refs are frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    create(a, "held back")
    before = (ref(a, "refs/looma/ledger"), ref(a, "refs/notes/looma"))
    with pytest.raises(RemoteError, match="refused"):
        sync.sync(a)
    assert (ref(a, "refs/looma/ledger"), ref(a, "refs/notes/looma")) == before
    assert git(bare, "for-each-ref", "refs/looma", "refs/notes") == ""
    hook.unlink()
    assert sync.sync(a).pushed
    assert git(bare, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")
