"""Gemini CLI message records -> NormalizedEvent fields: roles, text parts and tool calls."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from looma_git.gitshell import GitShell, joined, shell_git
from looma_git.ingest.agent_text import (
    RAW_JSON_MAX,
    as_dict,
    as_list,
    as_str,
    command_test_outcome,
    raw_json,
)
from looma_git.model import ToolCall

AGENT = "gemini-cli"
ROLE_BY_TYPE = {"user": "user", "gemini": "assistant", "model": "assistant",
                "info": "system", "error": "system", "warning": "system"}
EXIT_RE = re.compile(r"Exit Code:\s*(-?\d+)", re.IGNORECASE)
# tool name -> (kind, argument keys that name a path)
TOOL_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "run_shell_command": ("shell", ()),
    "replace": ("edit", ("file_path", "absolute_path", "path")),
    "edit": ("edit", ("file_path", "absolute_path", "path")),
    "smart_edit": ("edit", ("file_path", "absolute_path", "path")),
    "write_file": ("write", ("file_path", "absolute_path", "path")),
    "read_file": ("read", ("absolute_path", "file_path", "path")),
    "read_many_files": ("read", ("paths", "include")),
    "list_directory": ("read", ("dir_path", "path")),
    "ls": ("read", ("dir_path", "path")),
    "glob": ("search", ()),
    "search_file_content": ("search", ()),
    "grep_search": ("search", ()),
    "grep": ("search", ()),
    "web_fetch": ("web", ()),
    "google_web_search": ("web", ()),
    "invoke_agent": ("task", ()),
    "delegate_to_agent": ("task", ()),
    "codebase_investigator": ("task", ()),
}
ERROR_STATUSES = {"error", "cancelled", "canceled", "failed", "rejected"}


@dataclass(frozen=True)
class MessageView:
    """What one Gemini message contributes to an event."""

    role: str | None  # None: not a conversational message (unknown type)
    text: str
    tool_calls: tuple[ToolCall, ...]
    model: str | None
    noise: str | None = None  # set when the whole message is noise (and not emitted)
    git: GitShell | None = None  # what its shell calls' git output said (no branch recorded)


def parts_text(content: Any) -> str:
    """Text of a PartListUnion: a string, a part, or a list of parts (`{text}` only)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return as_str(content.get("text")) or ""
    texts = [parts_text(p) for p in as_list(content) if isinstance(p, str | dict)]
    return "\n".join(t for t in texts if t)


def _paths(args: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, ...]:
    found: list[str] = []
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            found.append(value)
        else:
            found.extend(v for v in as_list(value) if isinstance(v, str) and v)
        if found and key != "paths":
            break
    return tuple(dict.fromkeys(found))


def _result_text(result: Any) -> str:
    """The output/error text inside `result: [{functionResponse: {response: {output}}}]`."""
    texts: list[str] = []
    for part in as_list(result):
        response = as_dict(as_dict(as_dict(part).get("functionResponse")).get("response"))
        for key in ("output", "error"):
            value = response.get(key)
            if isinstance(value, str):
                texts.append(value)
        text = as_str(as_dict(part).get("text"))
        if text:
            texts.append(text)
    return "\n".join(texts)


_SHELL_WRAP = re.compile(r"(?m)^(?:</?untrusted_context>|(?:Output|Command|Directory): ?)")


def shell_output(result: Any) -> str:
    """A run_shell_command result as the command printed it: the `Output: ` label and the
    `<untrusted_context>` wrapper Gemini adds are taken off each line they start."""
    return _SHELL_WRAP.sub("", _result_text(result))


# Parts of a record that are what a tool read or returned, never what it wrote: dropped from
# an oversized record's raw copy so the edit arguments (content evidence) stay within bound.
_BULKY = ("result", "originalContent", "newContent")


def _slim(value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict) and depth < 8:
        return {k: _slim(v, depth + 1) for k, v in value.items() if k not in _BULKY}
    if isinstance(value, list) and depth < 8:
        return [_slim(v, depth + 1) for v in value]
    return value


def record_raw(record: dict[str, Any]) -> str:
    """The raw copy of a message record: verbatim when it fits RAW_JSON_MAX, else without
    tool results, file snapshots and thoughts (a `replace` on a large file carries the whole
    file twice in `resultDisplay`), else the usual truncation stub."""
    text = raw_json(record)
    if not text.startswith('{"truncated": true') or not record.get("toolCalls"):
        return text
    slim = {**_slim(record), "slimmed": True}
    slim.pop("thoughts", None)
    text = raw_json(slim)
    return text if len(text) <= RAW_JSON_MAX else raw_json(record)


def tool_call(record: Any) -> ToolCall | None:
    """One ToolCallRecord normalized (tolerating missing id/result/status)."""
    tc = as_dict(record)
    name = as_str(tc.get("name"))
    if not name:
        return None
    args = as_dict(tc.get("args"))
    kind, keys = TOOL_KINDS.get(name, ("other", ()))
    status = (as_str(tc.get("status")) or "").lower()
    command = as_str(args.get("command")) if kind == "shell" else None
    exit_code = None
    if kind == "shell":
        result = _result_text(tc.get("result"))
        match = EXIT_RE.search(result[-4000:])
        exit_code = int(match.group(1)) if match else None
        if exit_code is None and status == "success" and "Output:" in result:
            exit_code = 0  # since ~0.5x a clean exit prints no "Exit Code:" line at all
    is_error = status in ERROR_STATUSES or exit_code not in (None, 0)
    return ToolCall(name=name, kind=kind, paths=_paths(args, keys), command=command,
                    exit_code=exit_code, is_error=is_error,
                    test_outcome=command_test_outcome(command, exit_code),
                    call_id=as_str(tc.get("id")))


def todos_text(record: Any) -> str:
    """write_todos arguments as a checklist (the plan is where todos live)."""
    lines = []
    for todo in as_list(as_dict(as_dict(record).get("args")).get("todos")):
        item = as_dict(todo)
        text = as_str(item.get("description"))
        if text:
            lines.append(f"- [{as_str(item.get('status')) or 'pending'}] {text}")
    return "\n".join(lines)


def _answer_text(args: Any) -> str:
    """The text of `complete_task` arguments (`{"result": "..."}` or `{"result": {...}}`)."""
    value: Any = as_dict(args).get("result", args)
    if isinstance(value, dict):
        value = value.get("response") or next(
            (v for v in value.values() if isinstance(v, str) and v.strip()), "")
    return value.strip() if isinstance(value, str) else ""


def view(msg: dict[str, Any]) -> MessageView:
    """Classify and flatten one MessageRecord."""
    mtype = msg.get("type")
    role = ROLE_BY_TYPE.get(mtype) if isinstance(mtype, str) else None
    model = as_str(msg.get("model"))
    if role is None:
        return MessageView(None, "", (), model, noise=None)
    text = parts_text(msg.get("content")).strip()
    calls: list[ToolCall] = []
    plans: list[str] = []
    git: list[GitShell] = []
    for record in as_list(msg.get("toolCalls")):
        call = tool_call(record)
        if call:
            calls.append(call)
            if call.kind == "shell":
                git.append(shell_git(call.command, shell_output(as_dict(record).get("result"))))
            if call.name == "write_todos":
                plans.append(todos_text(record))
            elif call.name == "complete_task":  # a subagent's final answer lives in its args
                plans.append(_answer_text(as_dict(record).get("args")))
    if plans:
        text = "\n\n".join(t for t in (text, *plans) if t)
    if role == "user" and text.startswith("<session_context>"):
        return MessageView(role, text, (), model, noise="session_context")
    if role == "assistant" and not text and not calls:
        reason = "thought_only" if as_list(msg.get("thoughts")) else "empty_message"
        return MessageView(role, "", (), model, noise=reason)
    if not text and not calls:
        return MessageView(role, "", (), model, noise="empty_message")
    return MessageView(role, text, tuple(calls), model, git=joined(git))
