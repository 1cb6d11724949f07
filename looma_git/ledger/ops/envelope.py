"""The op envelope (format v1) every kind shares: plain frozen records, strict parsing, drafts,
sealing, file path.

Ops are read on every path that folds the ledger (each hook drain among them), so the envelope
is plain dataclasses checked by hand (`Op.from_dict`), as strictly as a pydantic model with
`strict=True, extra="forbid"` would be: no pydantic import on the ledger's read path. What each
kind means (its target, payload, fold step, timeline text) lives in its own module next to this
one; `registry.py` lists them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from looma_git.ledger.canonical import canonical_json, content_id

FORMAT_VERSION = 1  # the `v` of ops this looma writes and folds
LEDGER_FORMAT = 1  # `format.yaml: {looma_ledger: N}` at the tree root
LAMPORT_JUMP_LIMIT = 1_000_000

ACTOR_KINDS = ("user", "system")
# Key order of an op file; the id never depends on it (it hashes canonical JSON).
OP_KEYS = ("v", "id", "lamport", "ts", "actor", "clone", "op", "target", "payload",
           "rationale", "inverse_of")
_REQUIRED = ("v", "id", "lamport", "ts", "actor", "clone", "op", "target", "payload")


class OpFieldError(ValueError):
    """An op document that is not a valid v1 envelope; `loc` names the field."""

    def __init__(self, loc: str, msg: str) -> None:
        super().__init__(f"{loc}: {msg}")
        self.loc, self.msg = loc, msg


def _str(doc: dict[str, Any], key: str, loc: str, *, optional: bool = False) -> Any:
    value = doc.get(key)
    if value is None and optional:
        return None
    if type(value) is not str:
        raise OpFieldError(loc, "Input should be a valid string")
    return value


def _int(doc: dict[str, Any], key: str) -> int:
    value = doc.get(key)
    if type(value) is not int:  # bool is not an int here (strict)
        raise OpFieldError(key, "Input should be a valid integer")
    return value


def _fields_of(doc: Any, loc: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
    if not isinstance(doc, dict):
        raise OpFieldError(loc, "Input should be a valid dictionary")
    for k in doc:
        if k not in allowed:
            raise OpFieldError(f"{loc}.{k}" if loc else str(k), "Extra inputs are not permitted")
    for k in required:
        if k not in doc:
            raise OpFieldError(f"{loc}.{k}" if loc else k, "Field required")


@dataclass(frozen=True, slots=True)
class Actor:
    """Who wrote an op: a user (git identity) or the system (looma itself)."""

    kind: Literal["user", "system"]
    name: str
    email: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "email": self.email}

    @classmethod
    def from_dict(cls, doc: Any, loc: str = "actor") -> Actor:
        _fields_of(doc, loc, ("kind", "name", "email"), ("kind", "name", "email"))
        kind: Literal["user", "system"] = doc["kind"]
        if type(kind) is not str or kind not in ACTOR_KINDS:
            raise OpFieldError(f"{loc}.kind", "Input should be 'user' or 'system'")
        return cls(kind, _str(doc, "name", f"{loc}.name"), _str(doc, "email", f"{loc}.email"))


@dataclass(frozen=True, slots=True)
class OpTarget:
    """What an op acts on; `id` is None for ops that create their object. (Not a link
    target: that is `pipeline.linking.Target`.)"""

    type: str
    id: str | None = None

    @classmethod
    def from_dict(cls, doc: Any, loc: str = "target") -> OpTarget:
        _fields_of(doc, loc, ("type", "id"), ("type",))
        return cls(_str(doc, "type", f"{loc}.type"), _str(doc, "id", f"{loc}.id", optional=True))


@dataclass(frozen=True, slots=True)
class Op:
    """One immutable ledger op; `id` is the sha256 of the canonical JSON of the other fields.

    Build one with `Op.from_dict` (strict: every check a teammate's file needs) or
    `build_op`; `payload` holds plain JSON data (str keys; lists, never tuples)."""

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

    @classmethod
    def from_dict(cls, doc: Any) -> Op:
        """The op a decoded file (or cache line) holds; OpFieldError names what is wrong."""
        _fields_of(doc, "", OP_KEYS, _REQUIRED)
        payload = doc["payload"]
        if not isinstance(payload, dict):
            raise OpFieldError("payload", "Input should be a valid dictionary")
        for k in payload:
            if type(k) is not str:
                raise OpFieldError(f"payload.{k}", "Keys should be strings")
        return cls(
            v=_int(doc, "v"), id=_str(doc, "id", "id"), lamport=_int(doc, "lamport"),
            ts=_str(doc, "ts", "ts"), actor=Actor.from_dict(doc["actor"]),
            clone=_str(doc, "clone", "clone"), op=_str(doc, "op", "op"),
            target=OpTarget.from_dict(doc["target"]), payload=payload,
            rationale=_str(doc, "rationale", "rationale", optional=True),
            inverse_of=_str(doc, "inverse_of", "inverse_of", optional=True))

    # The names callers written against the pydantic envelope use.
    @classmethod
    def model_validate(cls, doc: Any) -> Op:
        return cls.from_dict(doc)

    @classmethod
    def model_validate_json(cls, raw: str | bytes) -> Op:
        return cls.from_dict(json.loads(raw))

    def fields(self) -> dict[str, Any]:
        """Every field as plain JSON data, in file key order."""
        return {"v": self.v, "id": self.id, "lamport": self.lamport, "ts": self.ts,
                "actor": self.actor.as_dict(), "clone": self.clone, "op": self.op,
                "target": {"type": self.target.type, "id": self.target.id},
                "payload": self.payload, "rationale": self.rationale,
                "inverse_of": self.inverse_of}

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
        "actor": actor.as_dict(), "clone": clone, "op": draft.op,
        "target": {"type": draft.target.get("type"), "id": draft.target.get("id")},
        # as JSON data (tuples become lists): what the file holds and a reader folds
        "payload": json.loads(canonical_json(draft.payload)), "rationale": draft.rationale,
        "inverse_of": draft.inverse_of,
    }
    body["id"] = content_id(body)
    try:
        return Op.from_dict(body)
    except OpFieldError as exc:
        raise ValueError(f"invalid op draft: {exc}") from exc


def op_path(op_id: str) -> str:
    """Where an op lives in the ledger tree."""
    return f"ops/{op_id[:2]}/{op_id}.yaml"
