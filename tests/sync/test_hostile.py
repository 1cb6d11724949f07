"""Hostile or broken remotes: every case gets a clear outcome and local refs stay intact."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from looma_git.api import ledger, sync
from looma_git.errors import InvalidDataError, RemoteError
from looma_git.gitrepo import RepoPaths
from looma_git.ledger import yamlio
from looma_git.ledger.ops import Actor, OpDraft, build_op
from looma_git.store import sync as store_sync
from tests.helpers import git
from tests.sync.util import create, make_clone, make_remote, op_ids, ref, sha, wt

LOCAL_REFS = ("refs/looma/ledger", "refs/notes/looma", "refs/looma/remotes/origin/ledger",
              "refs/looma/remotes/origin/notes")


def _refs(paths: RepoPaths) -> dict[str, str | None]:
    return {name: ref(paths, name) for name in LOCAL_REFS}


def _op_bytes(title: str, lamport: int) -> tuple[str, bytes]:
    op = build_op(OpDraft("workitem.create", {"type": "workitem"}, {"title": title}),
                  lamport=lamport, ts="2026-11-29T20:00:00Z",
                  actor=Actor(kind="system", name="looma", email="looma@localhost"),
                  clone="c_0123456789abcdef")
    return op.id, yamlio.dump(op.fields())


def _commit_into(bare: Path, tmp: Path, files: dict[str, bytes], *, base: str | None = None,
                 ref_name: str = "refs/looma/ledger") -> str:
    """Commit raw files on top of `base`'s tree in the bare remote (a hostile teammate)."""
    env = dict(os.environ, GIT_INDEX_FILE=str(tmp / "hostile.index"))
    if base:
        git(bare, "read-tree", base, env=env)
    else:
        git(bare, "read-tree", "--empty", env=env)
    for path, data in files.items():
        (tmp / "blob").write_bytes(data)
        blob = git(bare, "hash-object", "-w", str(tmp / "blob"))
        git(bare, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = git(bare, "write-tree", env=env)
    args = ["commit-tree", tree, "-m", "hostile"] + (["-p", base] if base else [])
    commit = git(bare, *args)
    git(bare, "update-ref", ref_name, commit)
    return commit


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, RepoPaths, RepoPaths]:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    create(a, "Shared item")
    sync.sync(a)
    sync.sync(b)
    return bare, a, b


def test_unknown_version_ops_are_kept_byte_for_byte_and_skipped(team, tmp_path: Path) -> None:
    bare, _a, b = team
    oid = "ab" * 32
    data = b"v: 2\nid: " + oid.encode() + b"\nlamport: 7\nop: future.thing\nshiny: true\n"
    _commit_into(bare, tmp_path, {f"ops/ab/{oid}.yaml": data}, base="refs/looma/ledger")
    out = sync.sync(b)
    assert out.kept_in == 1 and out.ops_in == 1 and not out.rejected
    assert any("unknown format version" in w for w in out.warnings)
    assert git(wt(b), "cat-file", "blob", f"refs/looma/ledger:ops/ab/{oid}.yaml") == \
        data.decode().rstrip("\n")
    assert oid not in {o.id for o in ledger.log(b)}
    create(b, "Later op")  # a later local write keeps the file too
    sync.sync(b)
    assert oid in op_ids(b) and oid in {line.rsplit("/", 1)[-1][:-5] for line in git(
        bare, "ls-tree", "-r", "--name-only", "refs/looma/ledger", "ops/").splitlines()}
    assert any("unknown op version" in w for w in ledger.verify(b).warnings)


def test_absurd_lamport_jumps_are_rejected_with_a_reason(team, tmp_path: Path) -> None:
    bare, _a, b = team
    ok_id, ok = _op_bytes("Honest op", 5)
    j1, jump1 = _op_bytes("Jumper one", 50_000_000)
    j2, jump2 = _op_bytes("Jumper two", 50_000_001)  # two together still jump
    _commit_into(bare, tmp_path, {f"ops/{i[:2]}/{i}.yaml": d for i, d in
                                  ((ok_id, ok), (j1, jump1), (j2, jump2))},
                 base="refs/looma/ledger")
    out = sync.sync(b)
    assert out.ops_in == 1
    assert {r.op_id for r in out.rejected} == {j1, j2}
    assert all("lamport" in r.reason for r in out.rejected)
    assert ok_id in op_ids(b) and not ({j1, j2} & op_ids(b))
    # leaving hostile files out is not an append-only violation for `looma verify`
    report = ledger.verify(b)
    assert report.ok, report.problems
    assert ledger.load_state(b).head_lamport < 1000
    # new local ops keep a sane clock
    assert ledger.append(b, [OpDraft("workitem.create", {"type": "workitem"},
                                     {"title": "after"})])[0].lamport < 1000


def test_an_id_that_does_not_match_its_content_is_rejected(team, tmp_path: Path) -> None:
    bare, a, b = team
    oid, data = _op_bytes("Original title", 3)
    forged = data.replace(b"Original title", b"Forged title")
    _commit_into(bare, tmp_path, {f"ops/{oid[:2]}/{oid}.yaml": forged}, base="refs/looma/ledger")
    before = op_ids(b)
    out = sync.sync(b)
    assert out.ops_in == 0 and [r.op_id for r in out.rejected] == [oid]
    assert "does not match its content" in out.rejected[0].reason
    assert op_ids(b) == before
    assert "Forged title" not in {w.title for w in ledger.load_state(b).workitems.values()}
    sync.sync(a)
    for clone in (a, b):
        report = ledger.verify(clone)
        assert report.ok, report.problems


def test_same_path_different_bytes_is_a_hard_error_and_nothing_is_written(team, tmp_path: Path
                                                                          ) -> None:
    bare, _a, b = team
    oid = next(iter(op_ids(b)))
    path = f"ops/{oid[:2]}/{oid}.yaml"
    original = git(bare, "cat-file", "blob", f"refs/looma/ledger:{path}").encode()
    _commit_into(bare, tmp_path, {path: original + b"# trailing comment\n"},
                 base="refs/looma/ledger")
    create(b, "Unpushed local op")
    before = _refs(b)
    with pytest.raises(InvalidDataError) as err:
        sync.sync(b)
    mine = git(wt(b), "rev-parse", f"refs/looma/ledger:{path}")
    theirs = git(bare, "rev-parse", f"refs/looma/ledger:{path}")
    assert mine in err.value.message and theirs in err.value.message
    assert _refs(b) == before


def test_force_pushed_remote_never_deletes_local_ops_and_the_push_restores_them(
        team, tmp_path: Path) -> None:
    bare, a, b = team
    create(a, "Second")
    create(a, "Third")
    sync.sync(a)
    sync.sync(b)
    full = op_ids(b)
    assert len(full) == 3
    # someone force-pushes an old ledger that lacks two ops
    history = git(bare, "rev-list", "refs/looma/ledger").split()
    old = next(c for c in history
               if len(git(bare, "ls-tree", "-r", c, "ops/").splitlines()) == 1)
    git(bare, "update-ref", "refs/looma/ledger", old)
    assert len(git(bare, "ls-tree", "-r", "refs/looma/ledger", "ops/").splitlines()) == 1
    # plain `git fetch` with the non-forced refspec refuses the rewrite
    tracked = ref(a, "refs/looma/remotes/origin/ledger")
    rc, err = _git_fetch(a)
    assert rc != 0 and "non-fast-forward" in err
    assert ref(a, "refs/looma/remotes/origin/ledger") == tracked
    out = sync.sync(b)
    assert out.remote_dropped == 2 and out.ops_out == 2 and out.pushed
    assert any("lost 2 op file(s)" in w for w in out.warnings)
    assert op_ids(b) == full
    assert {line.rsplit("/", 1)[-1][:-5] for line in git(
        bare, "ls-tree", "-r", "--name-only", "refs/looma/ledger", "ops/").splitlines()} == full


def _git_fetch(paths: RepoPaths) -> tuple[int, str]:
    import subprocess

    proc = subprocess.run(["git", "fetch", "origin"], cwd=wt(paths), capture_output=True,
                          text=True)
    return proc.returncode, proc.stderr


def test_a_remote_ref_that_is_not_a_commit_is_refused(team, tmp_path: Path) -> None:
    bare, _a, b = team
    (tmp_path / "junk").write_text("not a commit\n")
    blob = git(bare, "hash-object", "-w", str(tmp_path / "junk"))
    git(bare, "update-ref", "refs/looma/ledger", blob)
    before = _refs(b)
    with pytest.raises(InvalidDataError, match="points at a blob, not a commit"):
        sync.sync(b)
    assert _refs(b) == before
    git(bare, "update-ref", "refs/notes/looma", blob)
    git(bare, "update-ref", "refs/looma/ledger", sha(b, "refs/looma/ledger"))
    with pytest.raises(InvalidDataError, match="refs/notes/looma points at a blob"):
        sync.sync(b)
    assert _refs(b) == before


@pytest.mark.parametrize("path", ["evil.sh", "ops/zz/x.yaml", "ops/ab"])
def test_a_tree_with_unexpected_entries_is_refused(team, tmp_path: Path, path: str) -> None:
    bare, _a, b = team
    _commit_into(bare, tmp_path, {path: b"#!/bin/sh\n"}, base="refs/looma/ledger")
    before = _refs(b)
    with pytest.raises(InvalidDataError, match=r"unexpected entry|not a file"):
        sync.sync(b)
    assert _refs(b) == before


def test_a_newer_ledger_format_is_refused(team, tmp_path: Path) -> None:
    bare, _a, b = team
    _commit_into(bare, tmp_path, {"format.yaml": b"looma_ledger: 9\n"}, base="refs/looma/ledger")
    before = _refs(b)
    with pytest.raises(InvalidDataError, match="uses ledger format 9"):
        sync.sync(b)
    assert _refs(b) == before


def test_remote_removed_between_fetch_and_push_leaves_local_refs_unchanged(team) -> None:
    bare, _a, b = team
    create(b, "Unpushed")
    before = _refs(b)

    def cut(attempt: int) -> None:
        shutil.rmtree(bare)

    with pytest.raises(RemoteError, match="cannot push"):
        store_sync.sync(b, "origin", str(bare), before_push=cut)
    assert _refs(b) == before


@pytest.mark.parametrize("url", ["/nonexistent/remote.git", "http://127.0.0.1:9/remote.git"])
def test_an_unreachable_remote_is_a_clear_remote_error(team, url: str) -> None:
    _bare, _a, b = team
    git(wt(b), "remote", "set-url", "origin", url)
    create(b, "Unpushed")
    before = _refs(b)
    with pytest.raises(RemoteError, match="cannot fetch"):
        sync.sync(b)
    assert _refs(b) == before
