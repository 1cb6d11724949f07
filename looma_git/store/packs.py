"""Looma's own packs: registered as written, merged geometrically so lookups stay cheap.

Every batch of ledger/notes objects lands as one small pack; every reader (dulwich and git)
searches each pack index per lookup, so they must not pile up. Looma lists the packs it wrote
in `<common dir>/looma/packs` and, once MERGE_AT of them exist, merges the smallest run of
them (each next pack no bigger than twice the sum so far, as `git repack --geometric=2`)
by streaming their undeltified bodies into one pack: no object is decompressed or re-hashed.
Packs looma did not write are never touched. A merged-away pack is deleted only after the
merged pack and its index are in place; dulwich and git both rescan when a pack vanishes.
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import re
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from looma_git.store.objects import read_idx, write_idx, write_pack_files

REGISTRY = "packs"
LOCK = "packs.lock"
MERGE_AT = 16
GEOMETRIC_FACTOR = 2
_CHUNK = 1 << 20
_NAME = re.compile(r"pack-[0-9a-f]{40}\Z")


@contextmanager
def _locked(state_dir: Path) -> Iterator[None]:
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(state_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read_registry(state_dir: Path) -> list[str]:
    try:
        lines = (state_dir / REGISTRY).read_text(encoding="ascii", errors="replace").split()
    except FileNotFoundError:
        return []
    return list(dict.fromkeys(n for n in lines if _NAME.match(n)))


def _write_registry(state_dir: Path, names: list[str]) -> None:
    tmp = state_dir / f"{REGISTRY}.tmp{os.getpid()}"
    tmp.write_text("".join(f"{n}\n" for n in names), encoding="ascii")
    os.replace(tmp, state_dir / REGISTRY)


def register(pack_dir: Path, state_dir: Path, name: str) -> str | None:
    """Record pack `name` as looma's; merge when MERGE_AT exist. Returns a merged pack name.

    Best effort: the pack is already in place, so a failure here never fails the write."""
    try:
        with _locked(state_dir):
            return _register(pack_dir, state_dir, name)
    except OSError:
        return None


def _register(pack_dir: Path, state_dir: Path, name: str) -> str | None:
    names = _read_registry(state_dir)
    if name in names:
        return None
    if len(names) + 1 < MERGE_AT:  # the common case: one appended line, no rename
        with open(state_dir / REGISTRY, "a", encoding="ascii") as fh:
            fh.write(f"{name}\n")
        return None
    names.append(name)
    alive = [n for n in names if (pack_dir / f"{n}.idx").exists()
             and (pack_dir / f"{n}.pack").exists() and not (pack_dir / f"{n}.keep").exists()]
    if len(alive) < MERGE_AT:
        _write_registry(state_dir, alive)
        return None
    chosen = _geometric_run(pack_dir, alive)
    merged = merge(pack_dir, chosen) if len(chosen) > 1 else None
    if merged is None:  # forget what could not be merged rather than retry on every write
        _write_registry(state_dir, [n for n in alive if n not in chosen])
        return None
    gone = set(chosen) - {merged}
    _write_registry(state_dir, [n for n in alive if n not in gone and n != merged] + [merged])
    for n in sorted(gone):  # index first: a pack without its index is invisible
        for ext in (".idx", ".pack"):
            try:
                (pack_dir / f"{n}{ext}").unlink()
            except FileNotFoundError:
                pass
    return merged


def _geometric_run(pack_dir: Path, names: list[str]) -> list[str]:
    """The smallest packs, growing while each next one is <= FACTOR x the sum so far."""
    sized = sorted((os.path.getsize(pack_dir / f"{n}.pack"), n) for n in names)
    run, total = [sized[0][1]], sized[0][0]
    for size, n in sized[1:]:
        if size > GEOMETRIC_FACTOR * total:
            break
        run.append(n)
        total += size
    return run


def merge(pack_dir: Path, names: list[str]) -> str | None:
    """One pack holding every entry of `names`; None when any is unsuitable.

    Each source's entries are contiguous and undeltified, so its whole body is streamed into
    the merged pack (offsets shift by a constant, crc32s carry over from its index); only
    when an object sits in two sources are entries copied one by one to drop the duplicate.
    """
    sources: list[tuple[Path, int]] = []
    offsets: dict[bytes, tuple[int, int]] = {}
    pos = 12
    for n in names:
        src = _source(pack_dir, n)
        if src is None:
            return None
        size, (shas, crcs, offs, _) = src
        for sha, crc, off in zip(shas, crcs, offs, strict=True):
            if sha in offsets:
                return _merge_entrywise(pack_dir, names)
            offsets[sha] = (pos + off - 12, crc)
        sources.append((pack_dir / f"{n}.pack", size))
        pos += size - 32
    tmp = pack_dir / f"tmp_merge_{os.getpid()}.pack"
    digest = hashlib.sha1()
    try:
        with open(tmp, "wb") as out:
            header = b"PACK" + struct.pack(">II", 2, len(offsets))
            digest.update(header)
            out.write(header)
            for path, size in sources:
                with open(path, "rb") as fh:
                    fh.seek(12)
                    left = size - 32
                    while left:
                        chunk = fh.read(min(_CHUNK, left))
                        if not chunk:
                            raise OSError(f"{path} shrank while merging")
                        digest.update(chunk)
                        out.write(chunk)
                        left -= len(chunk)
            checksum = digest.digest()
            out.write(checksum)
        os.chmod(tmp, 0o444)
        name = "pack-" + checksum.hex()
        os.replace(tmp, pack_dir / f"{name}.pack")
    except OSError:
        tmp.unlink(missing_ok=True)
        return None
    write_idx(pack_dir / f"{name}.idx", offsets, checksum)
    return name


def _source(pack_dir: Path, name: str) -> tuple[int, tuple[list[bytes], list[int], list[int],
                                                              bytes]] | None:
    """(pack size, index) of a v2 pack whose entries are all whole objects, else None."""
    try:
        idx = read_idx(pack_dir / f"{name}.idx")
        with open(pack_dir / f"{name}.pack", "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if idx is None or size < 32:
                return None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                if mm[:8] != b"PACK\0\0\0\2" or \
                        struct.unpack_from(">I", mm, 8)[0] != len(idx[0]) or mm[-20:] != idx[3]:
                    return None
                # deltas (types 6, 7) would need their bases re-addressed: not a looma pack
                if any(not 1 <= (mm[off] >> 4) & 7 <= 4 for off in idx[2]):
                    return None
    except (OSError, ValueError, IndexError):
        return None
    return size, idx


def _merge_entrywise(pack_dir: Path, names: list[str]) -> str | None:
    entries: list[tuple[bytes, bytes, int]] = []
    for n in names:
        got = _entries(pack_dir, n)
        if got is None:
            return None
        entries += got
    return write_pack_files(pack_dir, entries)


def _entries(pack_dir: Path, name: str) -> list[tuple[bytes, bytes, int]] | None:
    """(sha, entry bytes, crc32) of an undeltified v2 pack, checked against its index."""
    try:
        idx = read_idx(pack_dir / f"{name}.idx")
        data = (pack_dir / f"{name}.pack").read_bytes()
    except OSError:
        return None
    if idx is None or data[:4] != b"PACK" or len(data) < 32:
        return None
    shas, crcs, offsets, _ = idx
    order = sorted(range(len(shas)), key=offsets.__getitem__)
    ends = [offsets[i] for i in order[1:]] + [len(data) - 20]
    out = []
    for i, end in zip(order, ends, strict=True):
        entry = data[offsets[i]:end]
        if not entry or not 1 <= (entry[0] >> 4) & 7 <= 4 or zlib.crc32(entry) != crcs[i]:
            return None
        out.append((shas[i], entry, crcs[i]))
    return out
