"""What one op kind declares: its target, its fold step, what it creates, touches and conflicts with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from looma_git.ledger.ops.envelope import Op

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder


def _no_timeline(op: Op) -> str | None:
    return None


@dataclass(frozen=True)
class OpKind:
    """One op kind (git-bug style: type, validation + apply, timeline text in one module).

    `apply` validates the payload against the state and applies it; a bad payload becomes a
    fold warning (`folder.warn`), never an error, because ops come from other clones and a
    bad one must not stop a fold. `conflicts` maps another kind to the name of the conflict
    when a user op of each, from clones that had not seen each other, targets one object.
    """

    name: str  # the `op` field, e.g. "workitem.rename"
    target: str  # the `target.type` it acts on: workitem, memory, node, commit or op
    summary: str  # one line for docs and `--help`
    apply: Callable[[Folder, Op], None]
    created_id: Callable[[Op], str | None] | None = None  # the id of what it creates
    touches: Callable[[Op], list[str]] | None = None  # objects besides target.id it changes
    conflicts: Mapping[str, str] = field(default_factory=dict)
    timeline: Callable[[Op], str | None] = _no_timeline  # its line in `looma timeline`
