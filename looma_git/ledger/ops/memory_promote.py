"""memory.promote: a memory enters the ledger (a person's promote pins confidence 1.0)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.canonical import derived_id
from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import MEM_FIELDS, set_fields
from looma_git.ledger.state import MemoryState

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def created_id(op: Op) -> str | None:
    """`mem_` + the op id's first 10 hex, unless it promotes an existing memory (target.id)."""
    return None if op.target.id else derived_id("mem_", op.id)


def apply(f: Folder, op: Op) -> None:
    mid = op.target.id or derived_id("mem_", op.id)
    cons = f.state.constraints
    mem = f.state.memories.get(mid)
    if op.is_user:
        cons.forced[mid] = "promote"
        cons.false_positives.discard(mid)
        if mem is None:
            mem = MemoryState(id=mid, created_lamport=op.lamport)
            f.state.memories[mid] = mem
        set_fields(mem, op.payload, MEM_FIELDS, set())
        mem.forced, mem.confidence, mem.band, mem.false_positive = "promote", 1.0, "high", False
    else:
        if mid in cons.false_positives or cons.forced.get(mid) == "reject":
            return
        if mem is None:
            mem = MemoryState(id=mid, created_lamport=op.lamport)
            f.state.memories[mid] = mem
        skip = {"confidence", "band"} if mem.forced else set()
        set_fields(mem, op.payload, MEM_FIELDS, skip)
    f.touch_mem(mem, op)


KIND = OpKind("memory.promote", "memory", "add a memory (user: promote, confidence 1.0)", apply,
              created_id=created_id)
