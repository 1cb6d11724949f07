"""memory.update: new field values for a memory (lifecycle, supersession, text)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import MEM_FIELDS, set_fields

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def apply(f: Folder, op: Op) -> None:
    mem = f.state.memories.get(op.target.id or "")
    if mem is None:
        f.warn(op, f"update of unknown memory {op.target.id}")
        return
    if not op.is_user and mem.false_positive:
        return
    skip = {"confidence", "band"} if (mem.forced and not op.is_user) else set()
    set_fields(mem, op.payload, MEM_FIELDS, skip)
    f.touch_mem(mem, op)


KIND = OpKind("memory.update", "memory", "set fields of a memory", apply)
