"""Cursor IDE chat bubbles (composer `bubbleId:` rows, legacy inline/aichat bubbles) -> events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from looma_git.ingest.base import event_id
from looma_git.ingest.ide_common import (
    clip,
    exit_code_of,
    iso_from_any,
    json_str,
    parse_json_maybe,
    patch_paths,
    tool_command,
    tool_kind,
    tool_paths,
)
from looma_git.model import NormalizedEvent, ToolCall

SOURCE = "cursor"
MAX_LEXICAL_NODES = 50_000


@dataclass(frozen=True)
class Conversation:
    """What every bubble of one conversation shares."""

    session_id: str
    project_root: str | None
    model: str | None = None
    fallback_ts: str | None = None
    kind: str = "composer"  # "composer" | "aichat"


def lexical_text(rich: Any) -> str:
    """Plain text of a Lexical editor state (Cursor's `richText`, a JSON string), iteratively."""
    root = parse_json_maybe(rich) if isinstance(rich, str) else rich
    if not isinstance(root, dict | list):
        return ""
    out: list[str] = []
    stack: list[Any] = [root]
    seen = 0
    while stack and seen < MAX_LEXICAL_NODES:
        node = stack.pop()
        seen += 1
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            if isinstance(node.get("text"), str):
                out.append(node["text"])
            if node.get("type") == "paragraph" and out:
                out.append("\n")
            children = node.get("children") if "children" in node else node.get("root")
            if isinstance(children, list | dict):
                stack.append(children)
    return "".join(out).strip()


def _tool_call(tfd: dict[str, Any]) -> ToolCall | None:
    name = tfd.get("name")
    if not isinstance(name, str) or not name:
        tool = tfd.get("tool")
        name = f"tool_{tool}" if isinstance(tool, int) else None
    if not name:
        return None
    args = parse_json_maybe(tfd.get("rawArgs"))
    if not isinstance(args, dict):
        args = parse_json_maybe(tfd.get("params"))
    result = parse_json_maybe(tfd.get("result"))
    kind = tool_kind(name)
    paths = tool_paths(args)
    if isinstance(args, dict):
        paths += tuple(p for p in patch_paths(args.get("patch") or args.get("input"))
                       if p not in paths)
    command = tool_command(args) if kind == "shell" else None
    exit_code = exit_code_of(result, tfd.get("additionalData")) if kind == "shell" else None
    status = tfd.get("status")
    call_id = tfd.get("toolCallId")
    return ToolCall(name=name, kind=kind, paths=paths, command=command, exit_code=exit_code,
                    is_error=status == "error" or (exit_code is not None and exit_code != 0),
                    call_id=call_id if isinstance(call_id, str) else None)


def bubble_in_progress(bubble: dict[str, Any]) -> bool:
    """An assistant bubble whose tool call is still running (it will be rewritten)."""
    tfd = bubble.get("toolFormerData")
    return isinstance(tfd, dict) and tfd.get("status") in ("inProgress", "loading", "pending")


def _role(bubble: dict[str, Any]) -> str | None:
    btype = bubble.get("type")
    if btype in (1, "1", "user"):
        return "user"
    if btype in (2, "2", "ai", "assistant"):
        return "assistant"
    return None


def bubble_event(conv: Conversation, bubble_id: str, bubble: dict[str, Any],
                 seq: int) -> tuple[NormalizedEvent | None, str | None]:
    """One bubble -> (event, None), or (None, noise reason) when nothing is worth keeping."""
    role = _role(bubble)
    if role is None:
        return None, "unknown_type"
    text = ""
    for key in ("text", "rawText", "initText"):
        value = bubble.get(key)
        if isinstance(value, str) and value.strip():
            text = value if key != "initText" else lexical_text(value)
            break
    if not text:
        text = lexical_text(bubble.get("richText")) or lexical_text(
            (bubble.get("delegate") or {}).get("a") if isinstance(bubble.get("delegate"), dict)
            else None)
    calls: list[ToolCall] = []
    tfd = bubble.get("toolFormerData")
    if isinstance(tfd, dict):
        call = _tool_call(tfd)
        if call is not None:
            calls.append(call)
    if not text.strip() and not calls:
        return None, "empty"
    text = clip(text)
    call_sig = [(c.name, c.kind, list(c.paths), c.command, c.exit_code, c.is_error, c.call_id)
                for c in calls]
    eid = event_id(SOURCE, conv.session_id, bubble_id, role, text, call_sig)
    model_info = bubble.get("modelInfo")
    model = model_info.get("modelName") if isinstance(model_info, dict) else None
    ts = iso_from_any(bubble.get("createdAt")) or iso_from_any(bubble.get("timestamp")) \
        or conv.fallback_ts
    raw = {k: v for k, v in bubble.items()
           if k in ("_v", "bubbleId", "type", "createdAt", "capabilityType", "modelInfo")}
    if isinstance(tfd, dict):
        raw["toolFormerData"] = {k: tfd.get(k) for k in ("name", "status", "toolCallId")}
    extra = (("bubble_id", bubble_id), ("store", conv.kind))
    return NormalizedEvent(
        event_id=eid, source=SOURCE, session_native_id=conv.session_id,
        project_root=conv.project_root, git_remote=None, git_branch=None, seq=seq, ts=ts,
        role=role, agent_model=(model if isinstance(model, str) and model else conv.model)
        if role == "assistant" else None,
        text=text, tool_calls=tuple(calls), raw_json=json_str(raw), extra=extra), None
