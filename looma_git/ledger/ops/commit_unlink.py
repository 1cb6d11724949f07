"""commit.unlink: a commit does not implement a WorkItem (a person's unlink forbids relinking)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


_BAD = "unlink of an unknown WorkItem or without a commit"


def validate(op: Op) -> str | None:
    return None if op.target.id else _BAD


def apply(f: Folder, op: Op) -> None:
    st = f.state
    wi = f.wi(op.payload.get("workitem"))
    if wi is None:
        f.warn(op, _BAD)
        return
    key = (st.resolve_sha(op.target.id or ""), wi.id)
    existing = st.links.get(key)
    if op.is_user:
        st.constraints.unlinked.add(key)
    elif existing is not None and existing.user:
        return
    if existing is not None:
        del st.links[key]
        f.mark(wi.id)
        f.links_dirty = True


KIND = OpKind("commit.unlink", "commit", "remove a commit's link to a WorkItem", apply,
              validate=validate)
