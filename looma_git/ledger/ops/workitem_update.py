"""workitem.update: new field values or observations for a WorkItem (a person's title pins it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import WI_FIELDS, set_fields

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def apply(f: Folder, op: Op) -> None:
    wi = f.wi(op.target.id)
    if wi is None:
        f.warn(op, f"update of unknown WorkItem {op.target.id}")
        return
    skip: set[str] = set()
    if not op.is_user:  # a system op never overrides what a person decided
        if wi.false_positive or wi.merged_into:
            return
        if wi.pinned_title:
            skip.add("title")
        if wi.forced:
            skip |= {"confidence", "band"}
    set_fields(wi, op.payload, WI_FIELDS, skip)
    if "title" not in skip and isinstance(op.payload.get("title"), str):
        wi.op_title = wi.title
    if "last_active" in op.payload:
        wi.op_last_active = wi.last_active
    if op.is_user and "title" in op.payload and "title" not in skip:
        f.pin(wi, wi.title)
    f.observe(wi.id, op)
    f.touch_wi(wi, op)
    if "title" in op.payload:
        f.links_dirty = True


def timeline(op: Op) -> str | None:
    """Only a status change is an event of the WorkItem's history."""
    payload = op.payload or {}
    return f"status -> {payload['status']}" if "status" in payload else None


KIND = OpKind("workitem.update", "workitem", "set fields of a WorkItem, or add observations",
              apply, timeline=timeline)
