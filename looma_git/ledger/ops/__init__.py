"""Ledger ops: the shared envelope (`envelope`) and one module per op kind (`registry`)."""

from looma_git.ledger.ops.envelope import (
    ACTOR_KINDS,
    FORMAT_VERSION,
    LAMPORT_JUMP_LIMIT,
    LEDGER_FORMAT,
    OP_KEYS,
    Actor,
    Op,
    OpDraft,
    OpTarget,
    build_op,
    op_path,
)
from looma_git.ledger.ops.kind import OpKind
from looma_git.ledger.ops.registry import KINDS, OP_TYPES, timeline_text, touched

__all__ = ["ACTOR_KINDS", "FORMAT_VERSION", "KINDS", "LAMPORT_JUMP_LIMIT", "LEDGER_FORMAT",
           "OP_KEYS", "OP_TYPES", "Actor", "Op", "OpDraft", "OpKind", "OpTarget", "build_op",
           "op_path", "timeline_text", "touched"]
