"""workitem.rename: a new title; the old one becomes an alias (a person's rename pins it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import sorted_unique

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


_BAD = "rename of an unknown WorkItem or without a title"


def validate(op: Op) -> str | None:
    return None if isinstance(op.payload.get("title"), str) else _BAD


def apply(f: Folder, op: Op) -> None:
    wi = f.wi(op.target.id)
    title = op.payload["title"]
    if wi is None:
        f.warn(op, _BAD)
        return
    if not op.is_user and wi.pinned_title:
        return
    # The title the ops gave it, not one derive set at whatever moment this op was folded
    # (before or after the derive of its append's batch): every fold aliases the same one.
    old = wi.op_title or wi.title
    if old and old != title:
        wi.aliases = sorted_unique([*wi.aliases, old])
    wi.title = wi.op_title = title
    if op.is_user:
        f.pin(wi, title)
    f.touch_wi(wi, op)
    f.links_dirty = True


KIND = OpKind("workitem.rename", "workitem", "retitle a WorkItem", apply, validate=validate,
              conflicts={"workitem.rename": "rename"},
              timeline=lambda op: f"renamed to {(op.payload or {}).get('title')!r}")
