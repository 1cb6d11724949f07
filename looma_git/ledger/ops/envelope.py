"""The op envelope (format v1) every kind shares: pydantic model, drafts, sealing, file path.

What each kind means (its target, payload, fold step, timeline text) lives in its own module
next to this one; `registry.py` lists them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from looma_git.ledger.canonical import content_id

FORMAT_VERSION = 1  # the `v` of ops this looma writes and folds
LEDGER_FORMAT = 1  # `format.yaml: {looma_ledger: N}` at the tree root
LAMPORT_JUMP_LIMIT = 1_000_000

ACTOR_KINDS = ("user", "system")
# Key order of an op file; the id never depends on it (it hashes canonical JSON).
OP_KEYS = ("v", "id", "lamport", "ts", "actor", "clone", "op", "target", "payload",
           "rationale", "inverse_of")


class Actor(BaseModel):
    """Who wrote an op: a user (git identity) or the system (looma itself)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    kind: Literal["user", "system"]
    name: str
    email: str


class OpTarget(BaseModel):
    """What an op acts on; `id` is None for ops that create their object. (Not a link
    target: that is `pipeline.linking.Target`.)"""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    type: str
    id: str | None = None


class Op(BaseModel):
    """One immutable ledger op; `id` is the sha256 of the canonical JSON of the other fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)
    v: int
    id: str
    lamport: int
    ts: str
    actor: Actor
    clone: str
    op: str
    target: OpTarget
    payload: dict[str, Any]
    rationale: str | None = None
    inverse_of: str | None = None

    def fields(self) -> dict[str, Any]:
        """Every field as plain JSON data, in file key order."""
        data = self.model_dump(mode="json")
        return {k: data[k] for k in OP_KEYS}

    def computed_id(self) -> str:
        return content_id(self.fields())

    @property
    def is_user(self) -> bool:
        return self.actor.kind == "user"

    @property
    def sort_key(self) -> tuple[int, str]:
        return (self.lamport, self.id)

    def created_id(self) -> str | None:
        """The id of the object this op creates, if its kind creates one."""
        from looma_git.ledger.ops.registry import KINDS  # the kinds import this module

        kind = KINDS.get(self.op)
        return kind.created_id(self) if kind is not None and kind.created_id else None


@dataclass(frozen=True)
class OpDraft:
    """What callers hand to the store; it fills v, lamport, ts, actor, clone and id."""

    op: str
    target: dict[str, Any]
    payload: dict[str, Any] = field(default_factory=dict)
    rationale: str | None = None
    inverse_of: str | None = None


def build_op(draft: OpDraft, *, lamport: int, ts: str, actor: Actor, clone: str) -> Op:
    """Seal a draft into an Op (payload/rationale must already be redacted)."""
    body: dict[str, Any] = {
        "v": FORMAT_VERSION, "id": "", "lamport": lamport, "ts": ts,
        "actor": actor.model_dump(), "clone": clone, "op": draft.op,
        "target": {"type": draft.target.get("type"), "id": draft.target.get("id")},
        "payload": draft.payload, "rationale": draft.rationale, "inverse_of": draft.inverse_of,
    }
    body["id"] = content_id(body)
    return Op.model_validate(body)


def op_path(op_id: str) -> str:
    """Where an op lives in the ledger tree."""
    return f"ops/{op_id[:2]}/{op_id}.yaml"
