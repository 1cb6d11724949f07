"""One OpenCode message plus its parts -> one NormalizedEvent (shared by the DB and JSON readers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from looma_git.ingest.base import event_id
from looma_git.ingest.ide_common import (
    clip,
    exit_code_of,
    iso_from_ms,
    json_str,
    patch_paths,
    tool_command,
    tool_kind,
    tool_paths,
)
from looma_git.model import NormalizedEvent, ToolCall

SOURCE = "opencode"


@dataclass(frozen=True)
class SessionInfo:
    """What an event needs from its session row/file."""

    id: str
    project_root: str | None
    parent_id: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class Converted:
    """The event built from one message (None when the message holds nothing to keep),
    whether the message is finished, and noise counted while converting."""

    event: NormalizedEvent | None
    settled: bool
    noise: tuple[str, ...] = ()


def _tool_call(part: dict[str, Any]) -> ToolCall | None:
    name = part.get("tool")
    if not isinstance(name, str) or not name:
        return None
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    assert isinstance(state, dict)
    args = state.get("input")
    metadata = state.get("metadata")
    status = state.get("status")
    paths = tool_paths(args)
    if isinstance(args, dict):
        paths = paths + tuple(p for p in patch_paths(args.get("patchText") or args.get("patch"))
                              if p not in paths)
    kind = tool_kind(name)
    command = tool_command(args) if kind == "shell" else None
    exit_code = exit_code_of(metadata) if kind == "shell" else None
    call_id = part.get("callID")
    return ToolCall(name=name, kind=kind, paths=paths, command=command, exit_code=exit_code,
                    is_error=status == "error" or (exit_code is not None and exit_code != 0),
                    call_id=call_id if isinstance(call_id, str) else None)


def _patch_files(part: dict[str, Any]) -> list[str]:
    # A `patch` part is OpenCode's snapshot diff of a step: the files the step's `write`/`edit`/
    # `bash` calls changed. It is bookkeeping, not a call: the files go into `extra`.
    files = part.get("files")
    return [f for f in files if isinstance(f, str) and f] if isinstance(files, list) else []


def convert(session: SessionInfo, msg_id: str, data: dict[str, Any],
            parts: list[tuple[str, dict[str, Any]]], seq: int, *, row_ts: Any = None,
            has_later: bool = False) -> Converted:
    """Build the event of one message; `has_later` says a newer message exists in the session
    (so this one is finished even without a completion time)."""
    role_native = data.get("role")
    noise: list[str] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    changed: list[str] = []
    busy = False
    stopped = False  # a step-finish that does not announce more tool steps
    for _pid, part in parts:
        ptype = part.get("type")
        if ptype == "text":
            text = part.get("text")
            if part.get("synthetic") or part.get("ignored"):
                noise.append("synthetic_text")
            elif isinstance(text, str) and text.strip():
                texts.append(text)
        elif ptype == "tool":
            call = _tool_call(part)
            state = part.get("state")
            if isinstance(state, dict) and state.get("status") in ("pending", "running"):
                busy = True
            if call is not None:
                calls.append(call)
        elif ptype == "patch":
            changed.extend(f for f in _patch_files(part) if f not in changed)
        elif ptype == "compaction":
            noise.append("compaction")
        elif ptype == "step-finish":
            stopped = part.get("reason") not in ("tool-calls", "tool_calls")
        elif ptype in ("reasoning", "step-start", "snapshot", "file", "agent",
                       "subtask", "retry"):
            continue
        else:
            noise.append("unknown_part")
    time_obj = data.get("time") if isinstance(data.get("time"), dict) else {}
    assert isinstance(time_obj, dict)
    if role_native == "assistant":
        done = bool(time_obj.get("completed") or data.get("finish") or data.get("error")
                    or stopped)
        role = "summary" if data.get("summary") is True else "assistant"
        model = data.get("modelID")
    elif role_native == "user":
        done = bool(parts)
        role = "user"
        model_obj = data.get("model")
        model = model_obj.get("modelID") if isinstance(model_obj, dict) else None
    else:
        return Converted(None, True, ("unknown_role",))
    settled = has_later or (done and not busy)
    if not texts and not calls:
        return Converted(None, settled, (*tuple(noise), "empty"))
    text = clip("\n\n".join(texts))
    call_sig = [(c.name, c.kind, list(c.paths), c.command, c.exit_code, c.is_error, c.call_id)
                for c in calls]
    eid = event_id(SOURCE, session.id, msg_id, role, text, call_sig)
    ts = iso_from_ms(time_obj.get("created")) or iso_from_ms(row_ts)
    extra: list[tuple[str, str]] = [("message_id", msg_id)]
    if session.parent_id:
        extra.append(("parent_session", session.parent_id))
        extra.append(("is_subagent", "1"))  # a child session of the `task` tool
    if session.version:
        extra.append(("opencode_version", session.version))
    if changed:
        extra.append(("changed_files", "\n".join(changed)))
    raw = json_str({"id": msg_id, "data": data,
                    "parts": [{"id": pid, "type": p.get("type"), "tool": p.get("tool")}
                              for pid, p in parts]})
    event = NormalizedEvent(
        event_id=eid, source=SOURCE, session_native_id=session.id,
        project_root=session.project_root, git_remote=None, git_branch=None, seq=seq, ts=ts,
        role=role, agent_model=model if isinstance(model, str) and model else None, text=text,
        tool_calls=tuple(calls), raw_json=raw, extra=tuple(extra))
    return Converted(event, settled, tuple(noise))
