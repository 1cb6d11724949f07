"""workitem.split: a WorkItem becomes parts (by sessions or files); its links go to the parts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.canonical import derived_id
from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import sorted_unique, union_dicts
from looma_git.ledger.state import WorkItemState

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


_BAD = "split of an unknown WorkItem or without parts"


def validate(op: Op) -> str | None:
    parts = op.payload.get("parts")
    return None if isinstance(parts, list) and parts else _BAD


def apply(f: Folder, op: Op) -> None:
    st = f.state
    w = f.wi(op.target.id)
    parts = op.payload["parts"]
    if w is None:
        f.warn(op, _BAD)
        return
    f.settle(w.id)  # the fields the parts copy, as every fold has them at this op
    by = op.payload.get("by", "sessions")
    ids: list[str] = []
    cons = st.constraints
    for i, part in enumerate(p for p in parts if isinstance(p, dict)):
        pid = derived_id("wi_", op.id, i)
        sessions = union_dicts((), part.get("sessions") or [])
        skeys = {(s.get("agent"), s.get("id")) for s in sessions}
        files = sorted_unique(part.get("files") or [])
        raw_title = part.get("title")
        title = raw_title if isinstance(raw_title, str) else f"{w.title} ({i + 1})"
        p = WorkItemState(
            id=pid, title=title, op_title=title, kind=w.kind, status="active", summary=w.summary,
            files=files, branch=w.branch, confidence=w.confidence, band=w.band,
            evidence=tuple(e for e in w.evidence if (e.get("agent"), e.get("session")) in skeys),
            sessions=sessions, pinned_title=True, split_from=w.id,
            # the source's date (settled above): derive keeps the latest of it and what the
            # part's own evidence says later
            op_last_active=w.last_active, last_active=w.last_active,
            created_lamport=op.lamport, created_by_op=op.id)
        st.workitems[pid] = p
        cons.pinned_titles[pid] = title
        cons.partitions[pid] = {"from": w.id, "by": by, "sessions": list(sessions),
                                "files": list(files)}
        f.touch_wi(p, op)
        ids.append(pid)
    for x in range(len(ids)):
        for y in range(x + 1, len(ids)):
            cons.cannot_link.add((min(ids[x], ids[y]), max(ids[x], ids[y])))
    # Route W's commit links to the part whose files they touch most (ties: first part).
    for key in [k for k in st.links if k[1] == w.id]:
        link = st.links[key]
        scores = [len(set(link.files) & set(st.workitems[p].files)) for p in ids]
        best = max(scores) if scores else 0
        if best > 0:
            target = ids[scores.index(best)]
            del st.links[key]
            if (key[0], target) not in st.links:
                link.workitem = target
                st.links[(key[0], target)] = link
    w.status, w.split_into = "abandoned", tuple(ids)
    f.touch_wi(w, op)
    f.links_dirty = True


KIND = OpKind("workitem.split", "workitem", "split a WorkItem into parts", apply,
              validate=validate,
              conflicts={"workitem.merge": "merge_split", "workitem.split": "split"},
              timeline=lambda op: op.op)
