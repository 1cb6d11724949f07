"""workitem.create: a WorkItem comes into the ledger (a person's create pins it as promoted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.canonical import derived_id
from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import WI_FIELDS, set_fields
from looma_git.ledger.state import WorkItemState

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def created_id(op: Op) -> str:
    """`target.id` when the writer chose it, else `wi_` + the op id's first 10 hex."""
    return op.target.id or derived_id("wi_", op.id)


def apply(f: Folder, op: Op) -> None:
    wid = created_id(op)
    if wid in f.state.workitems:
        return
    wi = WorkItemState(id=wid, created_lamport=op.lamport, created_by_op=op.id)
    set_fields(wi, op.payload, WI_FIELDS, set())
    wi.op_title, wi.op_last_active = wi.title, wi.last_active
    if op.is_user:  # a person created or promoted it: FORCE_PROMOTE, confidence pinned
        wi.forced, wi.confidence, wi.band = "promote", 1.0, "high"
        f.state.constraints.forced[wid] = "promote"
    if wid in f.state.constraints.false_positives:
        wi.false_positive, wi.confidence = True, 0.0
    if op.is_user:
        f.user_created.add(wid)
    else:
        f.state.origins[wid] = op.clone
    f.state.workitems[wid] = wi
    f.observe(wid, op)
    f.touch_wi(wi, op)


KIND = OpKind("workitem.create", "workitem", "create a WorkItem (system: observed; user: promote)",
              apply, created_id=created_id, timeline=lambda op: op.op)
