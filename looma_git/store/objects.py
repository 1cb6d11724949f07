"""Raw git objects written without dulwich: ids by hashlib, loose files, one pack per batch."""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

TYPE_NUMS = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
# Level 1 keeps compression off the profile; any level is a valid object for git. Pack entries
# of trees are stored uncompressed: they are mostly binary ids (zlib saves ~1/3 of ops/<xx>
# trees at ~12x the cost) and `git gc` recompresses and deltifies them anyway.
COMPRESS_LEVEL = 1
PACK_LEVELS = {b"tree": 0}
IDX_MAGIC = b"\377tOc"


@dataclass(frozen=True)
class RawObject:
    """One object as git stores it: type name, 40-hex id (bytes) and the uncompressed body."""

    type_name: bytes
    id: bytes
    raw: bytes


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd` (os.write may write fewer than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def object_id(type_name: bytes, raw: bytes) -> bytes:
    """The 40-hex (bytes) sha1 id git gives `raw` as an object of `type_name`."""
    h = hashlib.sha1(b"%s %d\0" % (type_name, len(raw)))
    h.update(raw)
    return h.hexdigest().encode()


def raw_object(type_name: bytes, raw: bytes) -> RawObject:
    return RawObject(type_name, object_id(type_name, raw), raw)


def write_loose(objects_dir: Path, objs: Iterable[RawObject]) -> None:
    """Each object as `objects/xx/<38 hex>` (skipped when already there), via rename."""
    for obj in objs:
        hexid = obj.id.decode()
        sub = os.path.join(objects_dir, hexid[:2])
        path = os.path.join(sub, hexid[2:])
        if os.path.exists(path):
            continue
        data = zlib.compress(b"%s %d\0" % (obj.type_name, len(obj.raw)) + obj.raw, COMPRESS_LEVEL)
        tmp = os.path.join(sub, f"tmp_obj_{os.getpid()}_{hexid[2:10]}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        except FileNotFoundError:  # first object in this fan-out directory
            os.makedirs(sub, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)


def _entry_header(type_num: int, size: int) -> bytes:
    byte = (type_num << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def pack_entry(obj: RawObject) -> bytes:
    """One undeltified pack entry (header + zlib stream)."""
    return _entry_header(TYPE_NUMS[obj.type_name], len(obj.raw)) + \
        zlib.compress(obj.raw, PACK_LEVELS.get(obj.type_name, COMPRESS_LEVEL))


def write_pack_files(pack_dir: Path, entries: list[tuple[bytes, bytes, int]]) -> str:
    """Write `pack-<checksum>.pack` and its v2 `.idx` from (binary sha, entry bytes, crc32).

    Duplicate shas keep their first entry. The `.idx` lands last, through a temporary name
    and a rename: readers only use a pack once its index exists. Returns the basename.
    """
    offsets: dict[bytes, tuple[int, int]] = {}
    body = [b""]
    pos = 12
    for sha, data, crc in entries:
        if sha not in offsets:
            offsets[sha] = (pos, crc)
            body.append(data)
            pos += len(data)
    body[0] = b"PACK" + struct.pack(">II", 2, len(offsets))
    data = b"".join(body)
    checksum = hashlib.sha1(data).digest()
    name = "pack-" + checksum.hex()
    pack_dir.mkdir(parents=True, exist_ok=True)
    _write_file(pack_dir / f"{name}.pack", [data, checksum], in_place=True)
    write_idx(pack_dir / f"{name}.idx", offsets, checksum)
    return name


def write_idx(path: Path, offsets: dict[bytes, tuple[int, int]], checksum: bytes) -> None:
    """A v2 pack index: binary sha -> (offset, crc32) of every entry, and the pack checksum."""
    names = sorted(offsets)
    fanout = [0] * 256
    for sha in names:
        fanout[sha[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for sha in names:
        off = offsets[sha][0]
        if off < 0x80000000:
            small.append(off)
        else:
            small.append(0x80000000 | len(large))
            large.append(off)
    idx = b"".join([
        IDX_MAGIC, struct.pack(">I", 2), struct.pack(">256I", *fanout), b"".join(names),
        struct.pack(f">{len(names)}I", *(offsets[s][1] for s in names)),
        struct.pack(f">{len(small)}I", *small), struct.pack(f">{len(large)}Q", *large),
        checksum])
    _write_file(path, [idx, hashlib.sha1(idx).digest()])


def write_pack(pack_dir: Path, objs: Iterable[RawObject]) -> str:
    """One pack holding `objs` (no deltas); returns its basename."""
    entries = []
    for obj in objs:
        data = pack_entry(obj)
        entries.append((bytes.fromhex(obj.id.decode()), data, zlib.crc32(data)))
    return write_pack_files(pack_dir, entries)


def _write_file(path: Path, parts: list[bytes], *, in_place: bool = False) -> None:
    """Write `path` whole; through a temporary name and a rename unless `in_place`.

    `in_place` is for a pack: readers ignore it until its index exists, and its name is its
    checksum, so an existing file of the right size already holds these bytes (one cut short
    by a crash is replaced through a rename instead)."""
    data = b"".join(parts)
    target: Path | None = None
    if in_place:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        except FileExistsError:
            if path.stat().st_size == len(data):
                return
            in_place = False
    if not in_place:
        target = path
        path = path.with_name(f"tmp_{os.getpid()}_{path.name}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
    try:
        write_all(fd, data)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)
    if target is not None:
        os.replace(path, target)


def read_idx(path: Path) -> tuple[list[bytes], list[int], list[int], bytes] | None:
    """(binary shas, crc32s, offsets, pack checksum) of a v2 pack index, or None if not one."""
    data = path.read_bytes()
    if len(data) < 8 + 1024 + 40 or data[:4] != IDX_MAGIC or data[4:8] != b"\0\0\0\2":
        return None
    n = struct.unpack_from(">I", data, 8 + 255 * 4)[0]
    base = 8 + 1024
    if len(data) < base + 28 * n + 40:
        return None
    names = [data[base + 20 * i: base + 20 * i + 20] for i in range(n)]
    base += 20 * n
    crcs = list(struct.unpack_from(f">{n}I", data, base))
    base += 4 * n
    raw_offs = struct.unpack_from(f">{n}I", data, base)
    base += 4 * n
    offsets = []
    for off in raw_offs:
        if off & 0x80000000:
            offsets.append(struct.unpack_from(">Q", data, base + 8 * (off & 0x7FFFFFFF))[0])
        else:
            offsets.append(off)
    return names, crcs, offsets, data[-40:-20]
