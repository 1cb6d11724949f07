"""Claude Code record shapes: which `type`s are messages or bookkeeping, and per-file state."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from looma_git.ingest.base import builder, event_id
from looma_git.model import NormalizedEvent, ToolCall

AGENT = "claude-code"
# Bookkeeping record types: skipped as `non_message`, never events.
NON_MESSAGE = frozenset({"file-history-snapshot", "queue-operation", "progress", "custom-title",
                         "attachment", "agent-name", "pr-link", "tag", "last-prompt",
                         "mode", "permission-mode", "worktree-state", "api-request",
                         "api-request-blob", "api-request-shape", "atis-latch", "tools-used",
                         "cost-state"})
# A streaming group left open longer than this (bytes of transcript) is closed anyway, so one
# never-answered tool call cannot make every later run re-read an ever-growing tail.
MAX_OPEN_SPAN = 8 * 1024 * 1024
RAW_CAP = 64 * 1024
PEEK_LINES = 64


@dataclass
class Ctx:
    """Session facts carried from record to record (and across runs in Cursor.state)."""

    sid: str = ""
    cwd: str | None = None
    branch: str | None = None
    version: str | None = None
    bash: list[str] | None = None  # [call id, command] of the last `! command` typed

    def dump(self) -> dict[str, Any]:
        return {"sid": self.sid, "cwd": self.cwd, "branch": self.branch, "ver": self.version,
                "bash": self.bash}


@dataclass
class Group:
    """One assistant API message (all lines sharing `message.id`) while it is being merged."""

    key: str
    seq: int
    start: int
    ctx: dict[str, Any]
    session: str
    ts: str | None
    model: str | None
    cwd: str | None
    branch: str | None
    version: str | None
    extra: dict[str, str]
    texts: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)  # (offset, length) per line
    uuids: set[str] = field(default_factory=set)
    closed: bool = False
    last_end: int = 0
    # Each span's record as decoded (ReadResult.records), while the group may still need
    # them: None once one was not carried (the ingest reads the group's lines back then).
    records: list[Any] | None = field(default_factory=list)



def cap_raw(lines: list[str]) -> str:
    raw = "\n".join(lines)
    if len(raw) <= RAW_CAP:
        return raw
    return json.dumps({"truncated": True, "chars": len(raw), "head": raw[:4096]})


def record_kind(obj: dict[str, Any]) -> Any:
    """The record's `type`, or the message role of pre-envelope / usage-only lines (not
    necessarily a str: the caller skips anything else as `unknown_type`)."""
    kind = obj.get("type")
    msg = obj.get("message")
    if kind is None and isinstance(msg, dict) and msg.get("role") in ("user", "assistant"):
        kind = msg["role"]  # pre-envelope / usage-only lines
    return kind


def base_extra(obj: dict[str, Any]) -> dict[str, str]:
    extra: dict[str, str] = {}
    for key, name in (("uuid", "uuid"), ("parentUuid", "parent_uuid")):
        v = obj.get(key)
        if isinstance(v, str):
            extra[name] = v
    if obj.get("isSidechain") is True:
        extra["sidechain"] = "1"
    return extra


def group_event(g: Group) -> NormalizedEvent:
    """The one assistant event of a merged reply group."""
    text = "\n\n".join([t.strip() for t in g.texts])
    calls = tuple([new_tool_call({
        "name": c["name"], "kind": c["kind"], "paths": tuple(c["paths"]),
        "command": c.get("command"), "exit_code": c.get("exit_code"),
        "is_error": bool(c.get("is_error")), "test_outcome": c.get("test_outcome"),
        "call_id": c.get("call_id")}) for c in g.calls]) if g.calls else ()
    eid = event_id(AGENT, g.key)
    return new_event({
        "event_id": eid, "source": AGENT, "session_native_id": g.session,
        "project_root": g.cwd, "git_remote": None, "git_branch": g.branch, "seq": g.seq,
        "ts": g.ts, "role": "assistant", "agent_model": g.model, "text": text,
        "tool_calls": calls, "raw_spans": tuple(g.spans),
        "schema_version": g.version or "1", "extra": tuple(sorted(g.extra.items()))})


# NormalizedEvent(**values) and ToolCall(**values), a few times cheaper (one per event/call).
new_event = builder(NormalizedEvent)
new_tool_call = builder(ToolCall)
