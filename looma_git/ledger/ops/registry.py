"""The op kinds this looma writes and folds, one module each; the only list of them."""

from __future__ import annotations

from looma_git.ledger.ops import (
    commit_link,
    commit_rewrite,
    commit_unlink,
    memory_promote,
    memory_reject,
    memory_update,
    node_false_positive,
    undo,
    workitem_create,
    workitem_merge,
    workitem_rename,
    workitem_split,
    workitem_update,
)
from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.ops.kind import OpKind

# In this order in messages ("one of: ...") and docs.
KINDS: dict[str, OpKind] = {k.name: k for k in (
    workitem_create.KIND, workitem_update.KIND, workitem_merge.KIND, workitem_split.KIND,
    workitem_rename.KIND, node_false_positive.KIND, memory_promote.KIND, memory_update.KIND,
    memory_reject.KIND, commit_link.KIND, commit_unlink.KIND, commit_rewrite.KIND, undo.KIND)}
OP_TYPES = tuple(KINDS)


def _conflicts() -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for kind in KINDS.values():
        for other, name in kind.conflicts.items():
            out[(min(kind.name, other), max(kind.name, other))] = name
    return out


# (kind, kind) sorted -> conflict name, from each kind's `conflicts`.
CONFLICTS = _conflicts()
# Kinds whose concurrent user ops can conflict: the fold remembers these per target.
INTENTS = frozenset(k for pair in CONFLICTS for k in pair)


def touched(op: Op) -> list[str]:
    """Every object the op changes: its target and what its kind adds (a merge's `from`)."""
    ids = [op.target.id] if op.target.id else []
    kind = KINDS.get(op.op)
    if kind is not None and kind.touches is not None:
        ids += kind.touches(op)
    return ids


def timeline_text(op: Op) -> str | None:
    """The op's line in a WorkItem's timeline, or None when its kind is not listed there."""
    kind = KINDS.get(op.op)
    return kind.timeline(op) if kind is not None else None
