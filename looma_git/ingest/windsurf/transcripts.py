"""Windsurf Cascade hook transcripts (`~/.windsurf/transcripts/<trajectory_id>.jsonl`) -> events.

Windsurf writes one such file per Cascade conversation when the
`post_cascade_response_with_transcript` hook is configured (mode 0600; Windsurf keeps the most
recent 100). Each line is one trajectory step: `{"status", "type", <type>: {...}}` with
`user_input.user_response`, `planner_response.response`, `code_action.path`/`new_content`,
`run_command.command`(`command_line`)/`cwd`/`output`/`exit_code`, `view_file.path`,
`mcp_tool.tool_name`/`arguments`/`result`, … The steps carry no timestamps, no model and no
working directory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from looma_git.ingest.base import (
    Cursor,
    ReadResult,
    Skip,
    event_id,
    head_fingerprint,
    resume_point,
)
from looma_git.ingest.ide_common import (
    clip,
    dump_state,
    file_uri_to_path,
    json_str,
    load_state,
    mtime_iso,
)
from looma_git.ingest.jsonl import iter_jsonl
from looma_git.ingest.toolcalls import exit_code_from_output, test_outcome
from looma_git.model import NormalizedEvent, ToolCall

SOURCE = "windsurf"
_REQUEST_RE = re.compile(r"<USER_REQUEST>(.*?)</USER_REQUEST>", re.S)
_EDIT_STEPS = {"code_action": "edit", "write_to_file": "write", "edit_file": "edit",
               "propose_code": "edit", "replace_file_content": "edit"}
_READ_STEPS = {"view_file": "read", "view_code_item": "read", "read_file": "read",
               "view_file_outline": "read"}
_SEARCH_STEPS = {"grep_search": "search", "find": "search", "find_by_name": "search",
                 "codebase_search": "search", "list_dir": "search", "search_web": "web",
                 "read_url_content": "web"}
_QUIET = {"checkpoint", "memory", "ephemeral_message", "error_message", "retrieve_memory",
          "ack", "suggested_responses", "conversation_history"}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _first(body: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = _str(body.get(key))
        if value is not None:
            return value
    return None


def _path(body: dict[str, Any]) -> str | None:
    raw = _first(body, "path", "absolute_path", "file_path", "target_file", "file",
                 "absolute_path_uri", "uri", "file_uri")
    if raw is None:
        return None
    raw = raw.strip()
    return file_uri_to_path(raw) if raw.startswith("file://") else raw


def _step(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = obj.get("type")
    kind = kind.lower() if isinstance(kind, str) else ""
    body = obj.get(kind) if kind else None
    return kind, body if isinstance(body, dict) else obj


def convert_step(obj: dict[str, Any]) -> tuple[str, str, ToolCall | None, str | None] | str:
    """(role, text, tool call, cwd) of one step, or the noise reason it is dropped for."""
    kind, body = _step(obj)
    if not kind:
        return "unknown_type"
    if kind == "user_input":
        text = _first(body, "user_response", "content", "text", "prompt")
        if text is None:
            return "empty"
        found = _REQUEST_RE.findall(text)
        return ("user", "\n\n".join(f.strip() for f in found) if found else text.strip(),
                None, None)
    if kind == "planner_response":
        text = _first(body, "response", "content", "text")
        return ("assistant", text.strip(), None, None) if text else "empty"
    if kind == "run_command":
        command = _first(body, "command_line", "command", "CommandLine", "commandLine")
        if command is None:
            return "empty"
        output = _first(body, "output", "combined_output", "stdout") or ""
        code = body.get("exit_code", body.get("exitCode"))
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) \
            else exit_code_from_output(output)
        call = ToolCall(name="run_command", kind="shell", command=command.strip(),
                        exit_code=exit_code, is_error=exit_code not in (None, 0),
                        test_outcome=test_outcome(command, exit_code, output))
        # One step holds the call and its outcome: a `tool` event (its text is the output).
        return "tool", clip(output), call, _first(body, "cwd", "working_directory")
    for table in (_EDIT_STEPS, _READ_STEPS, _SEARCH_STEPS):
        if kind in table:
            path = _path(body)
            paths = (path,) if path else ()
            if table is _SEARCH_STEPS:
                call = ToolCall(name=kind, kind=table[kind], paths=())
            else:
                call = ToolCall(name=kind, kind=table[kind], paths=paths)
            return "assistant", "", call, None
    if kind == "mcp_tool":
        name = _first(body, "tool_name", "name") or "mcp_tool"
        return "assistant", "", ToolCall(name=name, kind="other"), None
    if kind in _QUIET:
        return kind
    return "unknown_step"


def read_transcript(path: Path, cursor: Cursor | None) -> ReadResult:
    """New complete steps of one transcript (byte offset + head fingerprint; Windsurf
    appends). A truncated or replaced file is rescanned (events dedupe by id)."""
    try:
        start, state_text, notes = resume_point(path, cursor)
    except OSError:
        return ReadResult(events=[], cursor=cursor or Cursor(),
                          skips=[Skip("unreadable", str(path))])
    state = load_state(state_text)
    seq = int(state.get("seq", 0) or 0) if start else 0
    root = state.get("root") if start and isinstance(state.get("root"), str) else None
    result = ReadResult(events=[], cursor=cursor or Cursor(), notes=notes)
    ts = mtime_iso(path)  # the steps carry no timestamps
    sid = path.stem
    end = start
    pending: list[tuple[str, str, ToolCall | None, str, int]] = []
    cwd_seen = hint = None
    for line in iter_jsonl(path, start, result.skips):
        end = line.end
        conv = convert_step(line.obj)
        if isinstance(conv, str):
            result.noise[conv] = result.noise.get(conv, 0) + 1
            continue
        role, text, call, cwd = conv
        cwd_seen = cwd_seen or cwd
        hint = hint or _root_hint(call)
        pending.append((role, text, call, line.raw, line.start))
    root = root or cwd_seen or hint
    if root is None and pending:
        # No step has named a directory yet (the first response of a conversation is often
        # prompt + plan only): hold everything back, unread, so the events are emitted with the
        # project once a command or file path shows where the conversation works.
        return ReadResult(events=[], cursor=cursor or Cursor(), skips=result.skips,
                          notes=notes)
    for role, text, call, raw, offset in pending:
        calls = (call,) if call else ()
        sig = [(c.name, c.kind, list(c.paths), c.command, c.exit_code) for c in calls]
        result.events.append(NormalizedEvent(
            event_id=event_id(SOURCE, sid, offset, role, text, sig), source=SOURCE,
            session_native_id=sid, project_root=root, git_remote=None, git_branch=None,
            seq=seq, ts=ts, role=role, agent_model=None, text=clip(text), tool_calls=calls,
            raw_json=json_str({"line": raw[:4096]}),
            extra=(("store", "hook-transcript"), ("ts_inferred", "1"))))
        seq += 1
    if end == start and cursor is not None and not notes:
        return result
    result.cursor = Cursor(offset=end, head_fp=head_fingerprint(path, end),
                           state=dump_state({"seq": seq, "root": root}))
    return result


def _root_hint(call: ToolCall | None) -> str | None:
    """Where the conversation worked, when no step names a cwd: the directory of the first
    absolute file path a step touched (attribution then checks it lies in this repository)."""
    if call is None:
        return None
    for p in call.paths:
        if p.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", p):
            return str(Path(p).parent)
    return None
