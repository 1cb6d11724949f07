"""Objects written without dulwich (ids, loose, packs, pack merging) read back with git."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.gitrepo import find_repo
from looma_git.store import packs
from looma_git.store.ledger_tree import DIR_MODE, FILE_MODE, entry, serialize
from looma_git.store.objects import raw_object, write_loose, write_pack
from looma_git.store.repo import open_repo, write_objects
from tests.helpers import git


def _cat(repo: Path, oid: bytes) -> bytes:
    return subprocess.run(["git", "cat-file", "-p", oid.decode()], cwd=repo, check=True,
                          capture_output=True).stdout


def _pack_names(repo: Path) -> set[str]:
    return {p.stem for p in (repo / ".git" / "objects" / "pack").glob("*.idx")}


def test_ids_match_git_hash_object(repo: Path) -> None:
    for data in (b"", b"hello\n", bytes(range(256)) * 50):
        blob = raw_object(b"blob", data)
        (repo / "b").write_bytes(data)
        assert blob.id.decode() == git(repo, "hash-object", "b")


def test_loose_and_pack_objects_read_by_git_and_dulwich(repo: Path) -> None:
    blobs = [raw_object(b"blob", f"blob {i}\n".encode() * (i + 1)) for i in range(300)]
    tree = raw_object(b"tree", serialize({f"f{i}".encode(): entry(FILE_MODE, f"f{i}".encode(),
                                                                   b.id)
                                          for i, b in enumerate(blobs)}))
    write_loose(repo / ".git" / "objects", blobs[:5])
    name = write_pack(repo / ".git" / "objects" / "pack", [*blobs[5:], tree, blobs[7]])
    assert git(repo, "ls-tree", tree.id.decode()).count("\n") == 299
    for b in (blobs[0], blobs[150], blobs[299]):
        assert _cat(repo, b.id) == b.raw
    verify = git(repo, "verify-pack", "-v", f".git/objects/pack/{name}.idx")
    assert "non delta: 296 objects" in verify  # the duplicate blob went in once
    git(repo, "fsck", "--strict", "--no-dangling")
    with open_repo(find_repo(repo)) as r:
        assert r[blobs[200].id].data == blobs[200].raw
        assert r[tree.id].type_name == b"tree"


def test_looma_packs_merge_geometrically_and_stay_readable(repo: Path) -> None:
    paths = find_repo(repo)
    git(repo, "repack", "-q", "-a", "-d")
    foreign = _pack_names(repo)
    assert len(foreign) == 1
    written = []
    with open_repo(paths) as r:
        for n in range(packs.MERGE_AT + 3):
            objs = [raw_object(b"blob", f"batch {n} object {i}\n".encode()) for i in range(40)]
            write_objects(r, objs)
            written += objs
    names = _pack_names(repo)
    assert foreign <= names  # a pack looma did not write is never merged or removed
    assert len(names - foreign) < packs.MERGE_AT
    registry = (paths.state_dir / packs.REGISTRY).read_text().split()
    assert set(registry) == names - foreign
    for obj in written[::37]:
        assert _cat(repo, obj.id) == obj.raw
    with open_repo(paths) as r:
        assert all(r[o.id].data == o.raw for o in written)
    git(repo, "fsck", "--strict", "--no-dangling")
    # after git gc removed them, registered names are dropped at the next merge
    git(repo, "gc", "-q", "--prune=now")
    with open_repo(paths) as r:
        for n in range(packs.MERGE_AT + 1):
            write_objects(r, [raw_object(b"blob", f"after gc {n} {i}\n".encode())
                              for i in range(40)])
    registry = (paths.state_dir / packs.REGISTRY).read_text().split()
    assert all((repo / ".git" / "objects" / "pack" / f"{n}.pack").exists() for n in registry)
    git(repo, "fsck", "--strict")


def test_merge_refuses_packs_with_deltas(repo: Path) -> None:
    for i in range(3):
        (repo / "big.txt").write_text("line\n" * 2000 + f"change {i}\n")
        git(repo, "add", "big.txt")
        git(repo, "commit", "-qm", f"c{i}")
    git(repo, "repack", "-q", "-a", "-d", "-f")
    (name,) = _pack_names(repo)
    assert "chain length" in git(repo, "verify-pack", "-v", f".git/objects/pack/{name}.idx")
    assert packs.merge(repo / ".git" / "objects" / "pack", [name, name]) is None


_names = st.text(alphabet="ab.-_/0", min_size=1, max_size=4).filter(lambda s: "/" not in s)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_names, st.sampled_from([FILE_MODE, DIR_MODE, 0o100755, 0o120000]),
                       min_size=1, max_size=12))
def test_serialize_matches_dulwich(items: dict[str, int]) -> None:
    from dulwich.objects import Tree

    sha = b"0123456789abcdef0123456789abcdef01234567"
    t = Tree()
    for name, mode in items.items():
        t.add(name.encode(), mode, sha)  # type: ignore[arg-type]
    ours = serialize({n.encode(): entry(m, n.encode(), sha) for n, m in items.items()})
    assert ours == t.as_raw_string()
    assert stat.S_ISDIR(DIR_MODE)


def test_merge_streams_bodies_and_drops_duplicates(repo: Path) -> None:
    pack_dir = repo / ".git" / "objects" / "pack"
    a, b, c, d = (raw_object(b"blob", f"object {i}\n".encode() * 50) for i in range(4))
    p1, p2, p3 = write_pack(pack_dir, [a, b]), write_pack(pack_dir, [c]), write_pack(pack_dir, [b, d])
    streamed = packs.merge(pack_dir, [p1, p2])
    assert streamed is not None
    assert "non delta: 3 objects" in git(repo, "verify-pack", "-v", f".git/objects/pack/{streamed}.idx")
    deduped = packs.merge(pack_dir, [p1, p2, p3])  # b sits in p1 and p3
    assert deduped is not None
    assert "non delta: 4 objects" in git(repo, "verify-pack", "-v", f".git/objects/pack/{deduped}.idx")
    for p in (p1, p2, p3, streamed):
        (pack_dir / f"{p}.idx").unlink()
        (pack_dir / f"{p}.pack").unlink()
    for obj in (a, b, c, d):
        assert _cat(repo, obj.id) == obj.raw
    git(repo, "fsck", "--strict", "--no-dangling")


def test_pack_cut_short_by_a_crash_is_rewritten(repo: Path) -> None:
    pack_dir = repo / ".git" / "objects" / "pack"
    objs = [raw_object(b"blob", f"crash {i}\n".encode()) for i in range(3)]
    name = write_pack(pack_dir, objs)
    full = (pack_dir / f"{name}.pack").read_bytes()
    for ext in (".pack", ".idx"):
        (pack_dir / f"{name}{ext}").unlink()
    (pack_dir / f"{name}.pack").write_bytes(full[:20])  # a crash mid-write, same batch retried
    assert write_pack(pack_dir, objs) == name
    assert (pack_dir / f"{name}.pack").read_bytes() == full
    assert _cat(repo, objs[2].id) == objs[2].raw
    assert not [p for p in pack_dir.iterdir() if p.name.startswith("tmp")]
