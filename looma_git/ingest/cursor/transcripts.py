"""Cursor agent transcripts (`agent-transcripts/*.jsonl|.txt`) and CLI chat stores -> events."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looma_git.ingest.base import Cursor, ReadResult, Skip, event_id, head_fingerprint
from looma_git.ingest.ide_common import (
    clip,
    dump_state,
    json_str,
    load_state,
    mtime_iso,
    tool_command,
    tool_kind,
    tool_paths,
)
from looma_git.ingest.jsonl import iter_jsonl
from looma_git.model import NormalizedEvent, ToolCall

SOURCE = "cursor"
MAX_TXT_BYTES = 32 * 1024 * 1024
_QUERY_RE = re.compile(r"<user_query>(.*?)</user_query>", re.S)


@dataclass(frozen=True)
class Origin:
    """Which session a transcript file holds and the project it belongs to (None: unknown)."""

    session_id: str
    project_root: str | None
    parent_session: str | None = None
    slug: str | None = None  # the `projects/<slug>/` dir name, when the root is not known


def origin_of(path: Path, roots: dict[str, str]) -> Origin:
    """Session id from the file name; project root via a known folder whose slug matches
    the `projects/<slug>/` dir (the slug itself is lossy and never decoded). Without one, the
    slug travels in `extra.project_slug`, and the engine matches it against the slugs of the
    repository being ingested and its worktrees."""
    parts = path.parts
    parent = None
    if path.parent.name == "subagents":
        parent = path.parent.parent.name
    root = slug = None
    if "agent-transcripts" in parts:
        idx = len(parts) - 1 - parts[::-1].index("agent-transcripts")
        if idx >= 1:
            slug = parts[idx - 1]
            root = roots.get(slug)
    return Origin(path.stem, root, parent, None if root else slug)


def user_text(text: str) -> tuple[str, bool]:
    """The user's own words: the `<user_query>` bodies when present; (text, was_wrapped)."""
    found = _QUERY_RE.findall(text)
    if found:
        return "\n\n".join(q.strip() for q in found), True
    return text.strip(), False


def _call(name: str, args: Any) -> ToolCall:
    kind = tool_kind(name)
    return ToolCall(name=name, kind=kind, paths=tool_paths(args),
                    command=tool_command(args) if kind == "shell" else None)


def _event(origin: Origin, key: str, seq: int, role: str, text: str, calls: list[ToolCall],
           ts: str | None, raw: Any, store: str) -> NormalizedEvent:
    call_sig = [(c.name, c.kind, list(c.paths), c.command) for c in calls]
    text = clip(text)
    extra = [("store", store)]
    if origin.parent_session:
        extra.append(("parent_session", origin.parent_session))
    if origin.slug:
        extra.append(("project_slug", origin.slug))
    return NormalizedEvent(
        event_id=event_id(SOURCE, origin.session_id, key, role, text, call_sig),
        source=SOURCE, session_native_id=origin.session_id, project_root=origin.project_root,
        git_remote=None, git_branch=None, seq=seq, ts=ts, role=role, agent_model=None,
        text=text, tool_calls=tuple(calls), raw_json=json_str(raw), extra=tuple(extra))


def _noise(result: ReadResult, reason: str) -> None:
    result.noise[reason] = result.noise.get(reason, 0) + 1


def content_event(origin: Origin, key: str, seq: int, role: Any, content: Any, ts: str | None,
                  raw: Any, store: str, result: ReadResult) -> NormalizedEvent | None:
    """A `{role, content:[text|tool_use|tool-call...]}` message -> event (None: noise)."""
    if role not in ("user", "assistant"):
        _noise(result, "unknown_type" if role is None else f"role_{str(role)[:20]}")
        return None
    texts: list[str] = []
    calls: list[ToolCall] = []
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif btype in ("tool_use", "tool-call", "tool_call"):
            name = block.get("name") or block.get("toolName")
            if isinstance(name, str) and name:
                calls.append(_call(name, block.get("input", block.get("args"))))
    text = "\n\n".join(t for t in texts if t.strip())
    if role == "user":
        text, _wrapped = user_text(text)
    if not text and not calls:
        _noise(result, "empty")
        return None
    return _event(origin, key, seq, role, text, calls, ts, raw, store)


def read_jsonl(path: Path, cursor: Cursor | None, origin: Origin) -> ReadResult:
    """New complete lines of a `.jsonl` transcript (byte offset + head fingerprint)."""
    old = cursor or Cursor()
    start, seq = old.offset, int(load_state(old.state).get("seq", 0) or 0)
    if start and (head_fingerprint(path, start) != old.head_fp or _size(path) < start):
        start, seq = 0, 0  # truncated or replaced: rescan (events dedupe by id)
    result = ReadResult(events=[], cursor=old)
    ts = mtime_iso(path)  # these transcripts carry no timestamps at all
    end = start
    for line in iter_jsonl(path, start, result.skips):
        obj = line.obj
        msg = obj.get("message")
        content = msg.get("content") if isinstance(msg, dict) else obj.get("content")
        event = content_event(origin, f"line@{line.end}", seq, obj.get("role"), content, ts,
                              obj, "agent-transcript", result)
        if event is not None:
            result.events.append(event)
            seq += 1
        end = line.end
    if end == start and start == old.offset and cursor is not None:
        result.cursor = old
    else:
        result.cursor = Cursor(offset=end, head_fp=head_fingerprint(path, end),
                               state=dump_state({"seq": seq}))
    return result


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def parse_txt(text: str) -> list[tuple[str, str, list[ToolCall]]]:
    """`user:` / `assistant:` blocks -> (role, visible text, tool calls); thinking and tool
    results are dropped, `[Tool call] Name` + indented `key: value` lines become calls."""
    blocks: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        marker = line.strip()
        if marker in ("user:", "assistant:"):
            blocks.append((marker[:-1], []))
        elif blocks:
            blocks[-1][1].append(line)
    out: list[tuple[str, str, list[ToolCall]]] = []
    for role, lines in blocks:
        if role == "user":
            body, _ = user_text("\n".join(lines))
            out.append((role, body, []))
            continue
        texts: list[str] = []
        calls: list[ToolCall] = []
        mode = "text"  # thinking/tool blocks continue on indented lines only
        name: str = ""
        args: dict[str, str] = {}
        for line in lines:
            s = line.strip()
            if s.startswith(("[Thinking]", "[Tool result]", "[Tool call]")):
                if mode == "call":
                    calls.append(_call(name, args))
                if s.startswith("[Tool call]"):
                    mode, name, args = "call", s[len("[Tool call]"):].strip(), {}
                else:
                    mode = "thinking" if s.startswith("[Thinking]") else "result"
                continue
            indented = line[:1] in (" ", "\t")
            if mode == "thinking" and indented and s:
                continue
            if mode in ("call", "result") and (indented or not s):
                if mode == "call" and ":" in s:
                    k, _, v = s.partition(":")
                    args[k.strip()] = v.strip()
                continue
            if mode == "call":
                calls.append(_call(name, args))
            mode = "text"
            texts.append(line)
        if mode == "call":
            calls.append(_call(name, args))
        out.append((role, "\n".join(texts).strip(), calls))
    return out


def read_txt(path: Path, cursor: Cursor | None, origin: Origin) -> ReadResult:
    """A `.txt` transcript, reparsed whole when it changed; only blocks past the ones
    already emitted (same prefix) are returned."""
    old = cursor or Cursor()
    result = ReadResult(events=[], cursor=old)
    try:
        if path.stat().st_size > MAX_TXT_BYTES:
            result.skips.append(Skip("too_large", str(path)))
            return result
        raw = path.read_bytes()
    except OSError:
        result.skips.append(Skip("unreadable", str(path)))
        return result
    digest = hashlib.sha256(raw).hexdigest()[:32]
    if cursor is not None and old.content_hash == digest:
        return result
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        result.skips.append(Skip("invalid_utf8", str(path)))
    ts = mtime_iso(path)
    events: list[NormalizedEvent] = []
    for i, (role, body, calls) in enumerate(parse_txt(text)):
        if not body and not calls:
            _noise(result, "empty")
            continue
        events.append(_event(origin, f"block{i}", len(events), role, body, calls, ts,
                             {"block": i, "role": role}, "agent-transcript-txt"))
    state = load_state(old.state)
    n = state.get("n", 0)
    prefix = hashlib.sha256("".join(e.event_id for e in events[:n]).encode()).hexdigest()[:16] \
        if isinstance(n, int) and 0 < n <= len(events) else ""
    start = n if prefix and prefix == state.get("p") else 0
    result.events = events[start:]
    p = hashlib.sha256("".join(e.event_id for e in events).encode()).hexdigest()[:16]
    result.cursor = Cursor(content_hash=digest, state=dump_state({"n": len(events), "p": p}))
    return result
