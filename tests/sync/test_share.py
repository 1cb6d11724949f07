"""`looma share enable/disable`: exactly the config it adds, safe refspecs, curation remotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from looma_git.api import sync
from looma_git.errors import NotFoundError, NotInitializedError, UsageError
from tests.helpers import cli as looma
from tests.helpers import git
from tests.sync.util import create, make_clone, make_remote, ref, wt


def _config(repo: Path) -> list[str]:
    return sorted(git(repo, "config", "--local", "--list").splitlines())


def test_enable_adds_non_forced_refspecs_and_disable_removes_exactly_them(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    paths = make_clone(tmp_path, bare, "a", share=False)
    before = _config(wt(paths))
    out = looma(wt(paths), "share", "enable").stdout
    assert "looma.share.origin=true" in out
    fetch = git(wt(paths), "config", "--get-all", "remote.origin.fetch").splitlines()
    assert "refs/looma/ledger*:refs/looma/remotes/origin/ledger*" in fetch
    assert "refs/notes/looma*:refs/looma/remotes/origin/notes*" in fetch
    assert not any(spec.startswith("+refs/looma") or spec.startswith("+refs/notes")
                   for spec in fetch)
    assert not any(spec.split(":")[1].startswith("refs/notes/") for spec in fetch if ":" in spec)
    assert git(wt(paths), "config", "looma.share.origin") == "true"
    # push refspecs are opt-in: plain `git push` keeps pushing the branch
    assert git(wt(paths), "config", "--get-all", "remote.origin.push", check=False) == ""
    # enabling twice changes nothing
    snapshot = _config(wt(paths))
    sync.share_enable(paths, "origin")
    assert _config(wt(paths)) == snapshot
    looma(wt(paths), "share", "disable", "origin")
    assert _config(wt(paths)) == before
    with pytest.raises(NotFoundError):
        sync.share_disable(paths, "origin")


def test_git_fetch_with_the_refspecs_works_before_and_after_the_first_sync(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    git(wt(b), "fetch", "origin")  # remote has no looma refs yet: must not fail
    git(wt(b), "pull", "-q")
    create(a, "OAuth login")
    sync.sync(a)
    git(wt(b), "fetch", "-q", "origin")
    assert ref(b, "refs/looma/remotes/origin/ledger") == ref(a, "refs/looma/ledger")
    assert ref(b, "refs/looma/ledger") != ref(a, "refs/looma/ledger")  # fetch moves no local ref


def test_existing_push_refspecs_are_kept_and_no_head_is_added(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    paths = make_clone(tmp_path, bare, "a", share=False)
    git(wt(paths), "config", "--add", "remote.origin.push", "refs/heads/main:refs/heads/main")
    before = _config(wt(paths))
    out = sync.share_enable(paths, "origin", git_push=True)
    pushes = git(wt(paths), "config", "--get-all", "remote.origin.push").splitlines()
    assert pushes == ["refs/heads/main:refs/heads/main", "refs/looma/ledger:refs/looma/ledger",
                      "refs/notes/looma:refs/notes/looma"]
    assert "remote.origin.push=HEAD" not in out.added
    sync.share_disable(paths, "origin")
    assert _config(wt(paths)) == before


def test_git_push_mode_keeps_plain_git_push_pushing_the_branch(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    paths = make_clone(tmp_path, bare, "a", share=False)
    sync.share_enable(paths, "origin", git_push=True)
    pushes = git(wt(paths), "config", "--get-all", "remote.origin.push").splitlines()
    assert pushes[0] == "HEAD"  # any push refspec replaces git's default branch push
    create(paths, "OAuth login")
    (wt(paths) / "new.txt").write_text("x\n")
    git(wt(paths), "add", "new.txt")
    git(wt(paths), "commit", "-q", "-m", "new")
    git(wt(paths), "push", "-q")  # refs/notes/looma exists (enable made sure), so no error
    assert git(bare, "rev-parse", "main") == git(wt(paths), "rev-parse", "HEAD")
    assert git(bare, "rev-parse", "refs/looma/ledger") == ref(paths, "refs/looma/ledger")
    assert git(bare, "rev-parse", "refs/notes/looma") == ref(paths, "refs/notes/looma")


def test_curation_remote_receives_looma_refs_instead_of_origin(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    curation = tmp_path / "curation.git"
    git(tmp_path, "init", "-q", "--bare", str(curation))
    paths = make_clone(tmp_path, bare, "a", share=False)
    before = _config(wt(paths))
    looma(wt(paths), "share", "enable", "--curation-remote", str(curation))
    assert git(wt(paths), "config", "remote.looma-curation.url") == str(curation)
    assert git(wt(paths), "config", "looma.curation.origin") == "looma-curation"
    origin_fetch = git(wt(paths), "config", "--get-all", "remote.origin.fetch")
    assert "looma" not in origin_fetch
    create(paths, "Private curation")
    out = sync.sync(paths)  # the only sharing remote is the curation one
    assert out.remote == "looma-curation" and out.pushed
    # `looma sync origin` is redirected too; the public remote never sees looma's refs
    assert sync.sync(paths, "origin").remote == "looma-curation"
    assert git(curation, "rev-parse", "refs/looma/ledger") == ref(paths, "refs/looma/ledger")
    assert git(bare, "for-each-ref", "refs/looma", "refs/notes") == ""
    status = looma(wt(paths), "share", "status", "--json").stdout
    assert '"looma-curation"' in status
    looma(wt(paths), "share", "disable", "origin")
    assert _config(wt(paths)) == before


def test_errors_are_clear(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    paths = make_clone(tmp_path, bare, "a", share=False)
    with pytest.raises(NotFoundError, match="no remote named 'upstream'"):
        sync.share_enable(paths, "upstream")
    with pytest.raises(UsageError, match="cannot be shared"):
        sync.share_enable(paths, "my_remote")
    with pytest.raises(UsageError, match="not enabled"):
        sync.sync(paths)
    proc = looma(wt(paths), "sync", "origin", check=False)
    assert proc.returncode == 2 and "looma share enable origin" in proc.stderr
    git(tmp_path, "clone", "-q", str(bare), "plain")
    from looma_git.gitrepo import find_repo

    with pytest.raises(NotInitializedError):
        sync.share_enable(find_repo(tmp_path / "plain"), "origin")
