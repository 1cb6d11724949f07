"""Classifying ledger files from a tree: valid op, kept-unknown version, or rejected with a reason."""

from __future__ import annotations

import re
from dataclasses import dataclass

from looma_git.errors import InvalidDataError
from looma_git.ledger import yamlio
from looma_git.ledger.ops import FORMAT_VERSION, LAMPORT_JUMP_LIMIT, LEDGER_FORMAT, OP_TYPES, Op
from looma_git.ledger.ops.envelope import OpFieldError

MAX_OP_BYTES = 256 * 1024
MAX_PROJECTION_BYTES = 1024 * 1024
MAX_FORMAT_BYTES = 4096
MAX_OPS_PER_TREE = 2_000_000
_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


@dataclass(frozen=True)
class KeptFile:
    """An op file with a `v` this looma does not know: kept byte-for-byte, never folded."""

    path: str
    blob: str
    version: object
    lamport: int | None


@dataclass(frozen=True)
class Rejected:
    """A file that is not a trustworthy op; `op_id` is the id its name claims."""

    path: str
    op_id: str
    reason: str


Parsed = Op | KeptFile | Rejected


def check_format(data: bytes) -> int:
    """Read `format.yaml`; a newer ledger format is a clear error, before any op is decoded."""
    doc = yamlio.load(data, what="format.yaml", max_bytes=MAX_FORMAT_BYTES)
    version = doc.get("looma_ledger") if isinstance(doc, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise InvalidDataError("format.yaml: missing or invalid `looma_ledger` version")
    if version > LEDGER_FORMAT:
        raise InvalidDataError(
            f"refs/looma/ledger uses ledger format {version}; this looma reads format "
            f"{LEDGER_FORMAT}",
            hint="upgrade looma to read this ledger (nothing was changed)")
    return version


def parse_op_file(path: str, blob: str, data: bytes) -> Parsed:
    """Decode one `ops/xx/<id>.yaml` file without trusting anything in it."""
    name_id = path.rsplit("/", 1)[-1].removesuffix(".yaml")
    if not _HEX64.match(name_id) or path != f"ops/{name_id[:2]}/{name_id}.yaml":
        return Rejected(path, name_id, "file name is not ops/<id[:2]>/<64-hex id>.yaml")
    try:
        doc = yamlio.load(data, what=path, max_bytes=MAX_OP_BYTES)
    except InvalidDataError as exc:
        return Rejected(path, name_id, exc.message)
    if not isinstance(doc, dict):
        return Rejected(path, name_id, f"op is a YAML {type(doc).__name__}, not a mapping")
    version = doc.get("v")
    if version != FORMAT_VERSION or isinstance(version, bool):
        lam = doc.get("lamport")
        return KeptFile(path, blob, version,
                        lam if isinstance(lam, int) and not isinstance(lam, bool) else None)
    try:
        op = Op.from_dict(doc)
    except OpFieldError as exc:
        return Rejected(path, name_id, f"invalid op field {exc.loc}: {exc.msg}")
    if op.op not in OP_TYPES:
        return Rejected(path, name_id, f"unknown op type {op.op!r}")
    if op.id != name_id:
        return Rejected(path, name_id, "file name does not match the op id")
    if op.computed_id() != op.id:
        return Rejected(path, name_id, "op id does not match its content (tampered or corrupt)")
    return op


def reject_lamport_jumps(ops: list[Op]) -> tuple[list[Op], list[Rejected]]:
    """Reject ops whose lamport exceeds the max of the others by more than LAMPORT_JUMP_LIMIT."""
    if len(ops) < 2:
        return ops, []
    ordered = sorted(ops, key=lambda o: o.lamport)
    top, second = ordered[-1].lamport, ordered[-2].lamport
    kept: list[Op] = []
    rejected: list[Rejected] = []
    for op in ops:
        others_max = second if op.lamport == top else top
        if op.lamport > others_max + LAMPORT_JUMP_LIMIT:
            rejected.append(Rejected(f"ops/{op.id[:2]}/{op.id}.yaml", op.id,
                                     f"lamport {op.lamport} jumps more than "
                                     f"{LAMPORT_JUMP_LIMIT} past the other ops ({others_max})"))
        else:
            kept.append(op)
    return kept, rejected
