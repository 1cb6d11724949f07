"""What one op kind declares: its target, its fold step, what it creates, touches and conflicts with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def _nothing(op: Op) -> str | None:
    return None


@dataclass(frozen=True)
class OpKind:
    """One op kind (git-bug style: type, validation, apply and timeline text in one module).

    `validate` checks the op alone (its target and payload shape) and `apply` checks it
    against the state, then changes the state; either failure becomes a fold warning
    (`folder.warn`), never an error, because ops come from other clones and a bad one must
    not stop a fold. `conflicts` maps another kind to the name of the conflict when a user op
    of each, from clones that had not seen each other, targets one object.
    """

    name: str  # the `op` field, e.g. "workitem.rename"
    target: str  # the `target.type` it acts on: workitem, memory, node, commit or op
    summary: str  # one line for docs and `--help`
    apply: Callable[[Folder, Op], None]
    validate: Callable[[Op], str | None] = _nothing  # what is wrong with the op, or None
    created_id: Callable[[Op], str | None] | None = None  # the id of what it creates
    touches: Callable[[Op], list[str]] | None = None  # objects besides target.id it changes
    conflicts: Mapping[str, str] = field(default_factory=dict)
    timeline: Callable[[Op], str | None] = _nothing  # its line in `looma timeline`
