"""One OpenCode message plus its parts -> one NormalizedEvent (shared by the DB and JSON readers)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from looma_git.gitshell import GitShell, extra_of, joined, shell_git
from looma_git.ingest.base import event_id
from looma_git.ingest.ide_common import (
    MAX_RAW,
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
# Characters of edit/write tool input kept in an event's raw record: what the tools wrote is
# the session's content evidence (pipeline/content.py reads `content`, `newString`, `edits`,
# `patchText` from it), so it is kept past MAX_RAW, within this bound.
MAX_INPUT = 200_000
_OLD_KEYS = frozenset({"oldString", "old_string", "old_str"})


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


def _output(state: dict[str, Any]) -> str | None:
    """A finished tool's output text (`state.output`, else `metadata.output`)."""
    out = state.get("output")
    if isinstance(out, str):
        return out
    meta = state.get("metadata")
    out = meta.get("output") if isinstance(meta, dict) else None
    return out if isinstance(out, str) else None


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


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def _without_old(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_old(v) for k, v in value.items() if k not in _OLD_KEYS}
    if isinstance(value, list):
        return [_without_old(v) for v in value]
    return value


def _clipped(value: Any, limit: int) -> Any:
    # Whole lines only: a clipped line would be a line the tool never wrote.
    if isinstance(value, str) and len(value) > limit:
        cut = value.rfind("\n", 0, limit)
        return value[:cut + 1] if cut > 0 else ""
    if isinstance(value, dict):
        return {k: _clipped(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_clipped(v, limit) for v in value]
    return value


def _kept_input(args: dict[str, Any], budget: int) -> dict[str, Any] | None:
    """An edit/write tool's input for the raw record within `budget` characters: as given,
    else without the replaced text, else with long strings cut at a line end (marked)."""
    if budget <= 0:
        return None
    if _size(args) <= budget:
        return args
    slim = _without_old(args)
    if _size(slim) <= budget:
        return {**slim, "oldOmitted": True}
    limit = budget // 2
    while limit > 256:
        cut = {**_clipped(slim, limit), "clipped": True}
        if _size(cut) <= budget:
            return cut
        limit //= 2
    return None


def _raw(msg_id: str, data: dict[str, Any], parts: list[tuple[str, dict[str, Any]]]) -> str:
    """The stored raw record: the message, each part's id/type/tool, and the input of each
    edit/write tool (what it wrote; other tools' inputs and all outputs are left out)."""
    entries: list[dict[str, Any]] = []
    budget = MAX_INPUT
    for pid, p in parts:
        entry: dict[str, Any] = {"id": pid, "type": p.get("type"), "tool": p.get("tool")}
        name = p.get("tool")
        state = p.get("state")
        if (p.get("type") == "tool" and isinstance(name, str)
                and tool_kind(name) in ("edit", "write") and isinstance(state, dict)
                and isinstance(state.get("input"), dict) and state["input"]):
            kept = _kept_input(state["input"], budget)
            if kept is not None:
                entry["input"] = kept
                budget -= _size(kept)
        entries.append(entry)
    record: dict[str, Any] = {"id": msg_id, "data": data, "parts": entries}
    used = MAX_INPUT - budget
    if not used:
        return json_str(record)
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      default=str)
    if len(text) - used > MAX_RAW:  # the message itself is oversized: keep the inputs only
        record["data"] = {"truncated": True}
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                          default=str)
    return text


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
    git: list[GitShell] = []  # what this message's shell calls' git output said
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
                if call.kind == "shell" and isinstance(state, dict):
                    git.append(shell_git(call.command, _output(state)))
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
    # OpenCode records no branch: what git printed in its shell is kept apart from
    # `git_branch` (a branch an agent records), for the pipeline to weigh (pipeline/signals.py).
    extra.extend(extra_of(joined(git)))
    raw = _raw(msg_id, data, parts)
    event = NormalizedEvent(
        event_id=eid, source=SOURCE, session_native_id=session.id,
        project_root=session.project_root, git_remote=None, git_branch=None, seq=seq, ts=ts,
        role=role, agent_model=model if isinstance(model, str) and model else None, text=text,
        tool_calls=tuple(calls), raw_json=raw, extra=tuple(extra))
    return Converted(event, settled, tuple(noise))
