"""commit.link: a commit implements a WorkItem (a person's link outranks every system one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.values import sorted_unique
from looma_git.ledger.state import LinkState

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


_BAD = "link to an unknown WorkItem or without a commit"


def validate(op: Op) -> str | None:
    return None if op.target.id else _BAD


def apply(f: Folder, op: Op) -> None:
    st = f.state
    wi = f.wi(op.payload.get("workitem"))
    if wi is None:
        f.warn(op, _BAD)
        return
    sha = st.resolve_sha(op.target.id or "")
    key = (sha, wi.id)
    if op.is_user:
        st.constraints.unlinked.discard(key)
    else:
        if key in st.constraints.unlinked or wi.false_positive:
            return
        existing = st.links.get(key)
        if existing is not None and existing.user:
            return
    p = op.payload
    conf = p.get("confidence", 1.0 if op.is_user else 0.0)
    st.links[key] = LinkState(
        sha=sha, workitem=wi.id,
        confidence=float(conf) if isinstance(conf, (int, float)) else 0.0,
        by=p.get("by") or ("user" if op.is_user else "hook"),
        patch_id=p.get("patch_id"), files=sorted_unique(p.get("files") or []),
        branch=p.get("branch"), why=p.get("why"), user=op.is_user, op=op.id,
        subject=str(p.get("subject") or "") if isinstance(p.get("subject"), str) else "",
        ts=str(p.get("ts") or "") if isinstance(p.get("ts"), str) else "")
    f.mark(wi.id)
    f.links_dirty = True


KIND = OpKind("commit.link", "commit", "link a commit to a WorkItem", apply, validate=validate)
