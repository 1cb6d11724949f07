"""node.false_positive: a WorkItem or memory is not real work (a person's mark quarantines it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def apply(f: Folder, op: Op) -> None:
    node = op.target.id
    if not node or not op.is_user:
        if node and not op.is_user:  # system FP marks are weaker: only non-forced nodes
            wi = f.state.workitems.get(node)
            if wi is not None and wi.forced != "promote":
                wi.false_positive, wi.confidence = True, 0.0
                f.touch_wi(wi, op)
        return
    f.state.constraints.false_positives.add(node)
    wi = f.state.workitems.get(node)
    if wi is not None:
        wi.false_positive, wi.confidence, wi.band = True, 0.0, "none"
        f.touch_wi(wi, op)
        f.links_dirty = True
    mem = f.state.memories.get(node)
    if mem is not None:
        mem.false_positive, mem.confidence, mem.band = True, 0.0, "none"
        f.touch_mem(mem, op)


KIND = OpKind("node.false_positive", "node", "mark a WorkItem or memory a false positive",
              apply, timeline=lambda op: op.op)
