"""memory.reject: a memory drops to confidence 0 (a person's reject is kept against re-promotion)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def apply(f: Folder, op: Op) -> None:
    mid = op.target.id
    if not mid:
        return
    mem = f.state.memories.get(mid)
    if op.is_user:
        f.state.constraints.forced[mid] = "reject"
        if mem is not None:
            mem.forced, mem.confidence, mem.band = "reject", 0.0, "none"
    elif mem is not None and not mem.forced:
        mem.confidence, mem.band = 0.0, "none"
    if mem is not None:
        f.touch_mem(mem, op)


KIND = OpKind("memory.reject", "memory", "reject a memory (confidence 0.0)", apply)
