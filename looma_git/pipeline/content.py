"""Content evidence: the lines a session wrote through edit/write tools, as comparable keys."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
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
_TEXT_KEYS = (_NEW_KEYS | _DIFF_KEYS | _NESTED) - _SKIP_KEYS  # a string under these is looked at
_MAX_DEPTH = 12


# Lines every module has, whoever writes it: a bare return of a constant or a name, a keyword
# alone, the commonest decorators and imports, a super() call. They say nothing about whose
# work a commit is (a teammate's commit in the same module has them too).
_BOILERPLATE = re.compile(
    r"(?:return|yield)(?:\s+(?:None|True|False|self|cls|\w{1,3}|\[\]|\{\}|\(\)))?;?|"
    r"(?:pass|continue|break|raise|else|try|finally|except(?:\s+Exception)?|\.\.\.)\s*:?|"
    r"@(?:property|staticmethod|classmethod|abstractmethod|override|"
    r"(?:typing\.|t\.)?overload|functools\.\w+|pytest\.fixture(?:\(\))?)|"
    r"from\s+__future__\s+import\s+\w+|import\s+(?:os|sys|re|json|typing(?:\s+as\s+t)?|"
    r"logging|dataclasses|functools|itertools|collections|pytest)|"
    r"from\s+typing\s+import\s+(?:TYPE_CHECKING|Any)|if\s+(?:t\.|typing\.)?TYPE_CHECKING:|"
    r"super\(\)\.__init__\(\)|if\s+__name__\s*==\s*['\"]__main__['\"]:")


def line_key(line: str) -> int | None:
    """A 63-bit key of one stripped line, None when the line says too little to count (too
    short, no letter or digit, or boilerplate every module has)."""
    return _stripped_key(line.strip())


# Sessions write the same lines again and again (an edit restates its context, a file is
# rewritten whole): a stripped line's key is computed once per process.
@functools.lru_cache(maxsize=1 << 16)
def _stripped_key(s: str) -> int | None:
    if len(s) < MIN_LINE or not any(ch.isalnum() for ch in s) or _BOILERPLATE.fullmatch(s):
        return None
    digest = hashlib.blake2b(s.encode("utf-8", "replace"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def removed_key(line: str) -> int | None:
    """The key of one line taken out (an edit's replaced text, a diff's `-` line): a key space
    of its own, so a line removed never matches the same line written."""
    k = line_key(line)
    return None if k is None else line_key("\x00-" + line.strip())


def gone_key(path: str) -> int:
    """The key of a whole file removed (`git rm`, `rm`, a commit deleting it)."""
    digest = hashlib.blake2b(("\x00rm " + path).encode("utf-8", "replace"),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


# Keys holding the text an edit replaced, and the text that replaced it.
_OLD_NEW = (("old_string", "new_string"), ("oldString", "newString"), ("old_str", "new_str"),
            ("oldText", "newText"), ("old_text", "new_text"))
_OLD_KEYS = frozenset(old for old, _ in _OLD_NEW)
# `git rm [-r] [-f] [--cached ...] paths`, `rm [-f] [-r] paths` (one command of a shell line).
_RM = re.compile(r"(?:^|[;&|]\s*|\n\s*)(?:git\s+rm|rm)((?:\s+[^\s;&|<>]+)+)")


def _is_diff(text: str) -> bool:
    return (text.startswith(("*** Begin Patch", "--- ", "@@", "diff --git"))
            or "\n@@ " in text or "\n+++ " in text)


def _split(text: str, diff: bool, gone: list[str] | None = None) -> Iterator[str]:
    """The lines written; a diff's `-` lines go to `gone` (when given)."""
    for raw in text.split("\n"):
        if diff:
            if raw.startswith("+") and not raw.startswith("+++"):
                yield raw[1:]
            elif gone is not None and raw.startswith("-") and not raw.startswith("---"):
                gone.append(raw[1:])
        else:
            yield raw


def _replaced(obj: dict[str, Any], gone: list[str]) -> None:
    """The lines an edit took out: those of the text it replaced that the new text lacks
    (unchanged context restated on both sides is no removal)."""
    for old_k, new_k in _OLD_NEW:
        old, new = obj.get(old_k), obj.get(new_k)
        if isinstance(old, str) and isinstance(new, str) and old:
            kept = {x.strip() for x in new.split("\n")}
            gone.extend(x for x in old.split("\n") if x.strip() not in kept)


def _text(obj: str, key: str | None, depth: int, out: list[str], gone: list[str] | None) -> None:
    """A string value at `depth` under `key`: what it wrote, if the key says it wrote."""
    if key in _NESTED:
        s = obj.lstrip()
        if s.startswith(("{", "[")):
            try:
                _walk(json.loads(s), None, depth + 1, out, gone)
            except ValueError:
                pass
        elif _is_diff(s):
            out.extend(_split(s, True, gone))
    elif key in _DIFF_KEYS:
        out.extend(_split(obj, True, gone))
    elif key in _NEW_KEYS:
        out.extend(_split(obj, _is_diff(obj), gone))


def _walk(obj: Any, key: str | None, depth: int, out: list[str],
          gone: list[str] | None = None) -> None:
    # The walk visits every value of every record, most of them numbers, ids and texts no
    # tool wrote: scalars are judged here, without a call each (a cold store walks ~30,000
    # edit records), and only containers and strings under a key that names written text
    # go further.
    if depth > _MAX_DEPTH:
        return
    if isinstance(obj, dict):
        if gone is not None and not _OLD_KEYS.isdisjoint(obj):
            _replaced(obj, gone)
        for k, v in obj.items():
            if isinstance(v, str):
                if (len(v) >= MIN_LINE and k in _TEXT_KEYS and depth < _MAX_DEPTH):
                    _text(v, k, depth + 1, out, gone)
            elif isinstance(v, (dict, list)) and k not in _SKIP_KEYS:
                _walk(v, k, depth + 1, out, gone)
    elif isinstance(obj, list):
        texts = key in _TEXT_KEYS
        for v in obj:
            if isinstance(v, str):
                if texts and len(v) >= MIN_LINE and depth < _MAX_DEPTH:
                    _text(v, key, depth + 1, out, gone)
            elif isinstance(v, (dict, list)):
                _walk(v, key, depth + 1, out, gone)
    elif isinstance(obj, str) and len(obj) >= MIN_LINE and key in _TEXT_KEYS:
        _text(obj, key, depth, out, gone)


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


def removed_files(command: str) -> set[str]:
    """The paths a shell command removes with `git rm` or `rm` (options and globs left out)."""
    out: set[str] = set()
    for m in _RM.finditer(command or ""):
        for arg in m.group(1).split():
            arg = arg.strip("'\"")
            if arg and not arg.startswith("-") and not any(ch in arg for ch in "*?$`"):
                out.add(arg.removeprefix("./"))
    return out


def written_keys(raw_json: str, commands: tuple[str, ...] = ()) -> set[int]:
    """Keys of the lines one event's edit/write tool calls wrote, from its stored native
    record (whatever the agent; the text the tool replaced is never counted as written), plus
    the body of any here-document a shell command wrote (`cat > f <<EOF ... EOF`); and, each
    in a key space of its own, the lines its edits took out (`removed_key`) and the files its
    shell commands removed (`gone_key`): a commit that removes what a session removed is
    that session's work as much as one that adds what it wrote."""
    return records_keys(_records(raw_json), commands)


def records_keys(records: Iterable[Any], commands: tuple[str, ...] = ()) -> set[int]:
    """`written_keys` of an event's records already parsed (one JSON value each)."""
    lines: list[str] = []
    gone: list[str] = []
    for obj in records:
        if not (isinstance(obj, dict) and obj.get("truncated")):
            _walk(obj, None, 0, lines, gone)
    files: set[str] = set()
    for cmd in commands:
        for m in _HEREDOC.finditer(cmd or ""):
            lines.extend(m.group(2).split("\n"))
        files |= removed_files(cmd)
    out = {k for line in lines if (k := line_key(line)) is not None}
    out.update(k for line in gone if (k := removed_key(line)) is not None)
    out.update(gone_key(f) for f in files)
    return out
