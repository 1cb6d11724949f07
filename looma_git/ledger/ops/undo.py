"""undo: cancels the op named in `inverse_of`; resolved before the fold (`fold.effective_ops`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def apply(f: Folder, op: Op) -> None:
    """Nothing to apply: an effective undo removed its target from the ops folded."""


KIND = OpKind("undo", "op", "cancel an op (an undo of an undo restores it)", apply,
              timeline=lambda op: op.op)
