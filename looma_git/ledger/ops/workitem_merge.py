"""workitem.merge: WorkItems in `from` are absorbed by the target (sessions, files, links);
a person's merge also pins the target promoted, a system merge only joins the evidence."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import iterable, sorted_unique, union_dicts

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def _from(op: Op) -> Iterable[object]:
    raw = op.payload.get("from", [])
    return raw if iterable(raw) else []


def touches(op: Op) -> list[str]:
    """The absorbed WorkItems change too (their `merged_into`)."""
    return [a for a in _from(op) if isinstance(a, str)]


def apply(f: Folder, op: Op) -> None:
    st = f.state
    b = f.wi(op.target.id)
    if b is None:
        f.warn(op, f"merge into unknown WorkItem {op.target.id}")
        return
    if not op.is_user and b.false_positive:
        return
    if not iterable(op.payload.get("from", [])):  # missing is fine: a merge of nothing
        f.warn(op, "merge whose `from` is not a list of WorkItems")
        return
    for raw in _from(op):
        a = f.wi(raw) if isinstance(raw, str) else None
        if a is None or a.id == b.id:
            continue
        f.settle(a.id)  # a's fields as every fold has them at this op, then frozen
        b.sessions = union_dicts(b.sessions, a.sessions)
        b.files = sorted_unique([*b.files, *a.files])
        b.aliases = sorted_unique([*b.aliases, *a.aliases, a.title])
        b.evidence = union_dicts(b.evidence, a.evidence)
        # The ops' own dates move with the work: derive takes the latest of this and the
        # evidence's times, and only create/update ops set it (a.last_active is settled).
        b.op_last_active = max(b.op_last_active, a.op_last_active, a.last_active)
        b.last_active = max(b.last_active, b.op_last_active)
        for key in [k for k in st.links if k[1] == a.id]:
            link = st.links.pop(key)
            if (key[0], b.id) not in st.links:
                link.workitem = b.id
                st.links[(key[0], b.id)] = link
        a.merged_into = b.id
        if op.is_user:
            st.constraints.must_link.add((min(a.id, b.id), max(a.id, b.id)))
        f.touch_wi(a, op)
    if op.is_user:  # a person's merge confirms the WorkItem: FORCE_PROMOTE, confidence pinned
        b.forced, b.confidence, b.band = "promote", 1.0, "high"
        st.constraints.forced[b.id] = "promote"
    # A system merge (pipeline/converge.py: one effort seen by two clones) only joins the
    # evidence: the fold derives the survivor's confidence, kind and title from the union.
    f.touch_wi(b, op)
    f.links_dirty = True


KIND = OpKind("workitem.merge", "workitem", "merge WorkItems into the target", apply,
              touches=touches, conflicts={"workitem.split": "merge_split"},
              timeline=lambda op: op.op)
