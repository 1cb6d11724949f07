"""Which ledger ops concern one WorkItem: the ops that shaped it (`looma blame`)."""

from __future__ import annotations

from collections.abc import Iterable

from looma_git.ledger.ops import Op
from looma_git.ledger.state import LedgerState


def _names(op: Op, wid: str) -> bool:
    """The op targets, creates, carries or merged away the WorkItem `wid`."""
    payload = op.payload or {}
    return (op.target.id == wid or op.created_id() == wid or payload.get("workitem") == wid
            or wid in (payload.get("from") or []))


def shaping_ops(ops: Iterable[Op], state: LedgerState, wid: str) -> list[Op]:
    """The ops that shaped `wid`, oldest first by (lamport, id): the fold's own list, every op
    naming it, and the undos of those (an undo changed it too)."""
    wi = state.workitems.get(wid)
    shaping = set(wi.ops) if wi else set()
    out: list[Op] = []
    shown: set[str] = set()
    for op in sorted(ops, key=lambda o: o.sort_key):
        if op.id in shaping or _names(op, wid) or (op.op == "undo" and op.inverse_of in shown):
            shown.add(op.id)
            out.append(op)
    return out
