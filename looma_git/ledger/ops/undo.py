"""undo: cancels the op named in `inverse_of`; resolved before the fold (`fold.effective_ops`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def apply(f: Folder, op: Op) -> None:
    """An effective undo removed its target from the ops folded; a person's undo of a merge
    also keeps the WorkItems it joined apart (`apart`: no system merge joins them again)."""
    apart = op.payload.get("apart")
    if not op.is_user or not isinstance(apart, list):
        return
    ids = sorted({a for a in apart if isinstance(a, str)})
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            f.state.constraints.cannot_link.add((a, b))


KIND = OpKind("undo", "op", "cancel an op (an undo of an undo restores it)", apply,
              timeline=lambda op: op.op)
