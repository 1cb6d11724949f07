"""commit.rewrite: a commit was amended or rebased; its links and unlinks follow the new sha."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def _shas(op: Op) -> tuple[object, object]:
    return op.payload.get("old") or op.target.id, op.payload.get("new")


def validate(op: Op) -> str | None:
    old, new = _shas(op)
    ok = isinstance(old, str) and isinstance(new, str) and old != new
    return None if ok else "rewrite without old/new shas"


def apply(f: Folder, op: Op) -> None:
    st = f.state
    old, new = (str(x) for x in _shas(op))
    st.rewrites[old] = new
    for key in [k for k in st.links if k[0] == old]:
        f.mark(key[1])
        link = st.links.pop(key)
        if (new, key[1]) not in st.links:
            link.sha = new
            st.links[(new, key[1])] = link
    for pair in [u for u in st.constraints.unlinked if u[0] == old]:
        st.constraints.unlinked.discard(pair)
        st.constraints.unlinked.add((new, pair[1]))
    f.links_dirty = True


KIND = OpKind("commit.rewrite", "commit", "move a commit's links to its rewritten sha", apply,
              validate=validate)
