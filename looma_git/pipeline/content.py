"""Content evidence: the lines a session wrote through edit/write tools, as comparable keys."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

# The same rule as `store.gitfacts.patch_facts`: a line is evidence only if it says something
# (stripped, at least this long, with a letter or digit), so braces and blank lines never match.
MIN_LINE = 6
# Keys of a native tool call (any agent) whose string value is text the tool wrote: Claude
# Edit/Write/MultiEdit (`new_string`, `content`), Cursor (`contents`, `code_edit`), Gemini
# (`new_string`, `content`), OpenCode (`newString`, `content`), str_replace editors (`new_str`).
_NEW_KEYS = frozenset({"new_string", "newString", "new_str", "content", "contents", "code_edit",
                       "newText", "new_text", "file_text", "streamContent", "code"})
# Keys whose value is a unified diff or an apply_patch body (only its `+` lines were written);
# `patchText` is OpenCode's `apply_patch`/`patch` tool input.
_DIFF_KEYS = frozenset({"patch", "patchText", "diff", "fileDiff", "unified_diff", "lines"})
# Keys that carry what was there before, or reasoning: never evidence of what was written.
_SKIP_KEYS = frozenset({"old_string", "oldString", "old_str", "originalFile", "oldText",
                        "old_text", "oldTodos", "newTodos", "todos", "thinking", "signature",
                        "encrypted_content", "text", "output", "stdout", "stderr"})
_NESTED = frozenset({"arguments", "input"})  # JSON (or a patch) packed in a string
_MAX_DEPTH = 12


def line_key(line: str) -> int | None:
    """A 63-bit key of one stripped line, None when the line says too little to count."""
    s = line.strip()
    if len(s) < MIN_LINE or not any(ch.isalnum() for ch in s):
        return None
    digest = hashlib.blake2b(s.encode("utf-8", "replace"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def _is_diff(text: str) -> bool:
    return (text.startswith(("*** Begin Patch", "--- ", "@@", "diff --git"))
            or "\n@@ " in text or "\n+++ " in text)


def _split(text: str, diff: bool) -> Iterator[str]:
    for raw in text.split("\n"):
        if diff:
            if raw.startswith("+") and not raw.startswith("+++"):
                yield raw[1:]
        else:
            yield raw


def _walk(obj: Any, key: str | None, depth: int, out: list[str]) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in _SKIP_KEYS:
                _walk(v, k, depth + 1, out)
    elif isinstance(obj, list):
        for v in obj:
            _walk(v, key, depth + 1, out)
    elif isinstance(obj, str) and len(obj) >= MIN_LINE:
        if key in _NESTED:
            s = obj.lstrip()
            if s.startswith(("{", "[")):
                try:
                    _walk(json.loads(s), None, depth + 1, out)
                except ValueError:
                    pass
                return
            if _is_diff(s):
                out.extend(_split(s, True))
            return
        if key in _DIFF_KEYS:
            out.extend(_split(obj, True))
        elif key in _NEW_KEYS:
            out.extend(_split(obj, _is_diff(obj)))


def _records(raw: str) -> Iterator[Any]:
    """The stored record(s): one JSON value, or JSON lines (one event may span records)."""
    if not raw:
        return
    try:
        yield json.loads(raw)
        return
    except ValueError:
        pass
    for line in raw.split("\n"):
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                yield json.loads(line)
            except ValueError:
                continue


_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\s*(?:\n|$)", re.S)


def written_keys(raw_json: str, commands: tuple[str, ...] = ()) -> set[int]:
    """Keys of the lines one event's edit/write tool calls wrote, from its stored native
    record (whatever the agent; the text the tool replaced is never counted), plus the body
    of any here-document a shell command wrote (`cat > f <<EOF ... EOF`)."""
    lines: list[str] = []
    for obj in _records(raw_json):
        if not (isinstance(obj, dict) and obj.get("truncated")):
            _walk(obj, None, 0, lines)
    for cmd in commands:
        for m in _HEREDOC.finditer(cmd or ""):
            lines.extend(m.group(2).split("\n"))
    return {k for line in lines if (k := line_key(line)) is not None}
