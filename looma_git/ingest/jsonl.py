"""Bounded, resumable reading of JSONL files: complete lines only, bad lines become Skips."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from looma_git.ingest.base import Skip

MAX_LINE_BYTES = 16 * 1024 * 1024  # a longer line is skipped ("too_large") without loading it
CHUNK = 1024 * 1024
_BUFFER = 256 * 1024


class Line(NamedTuple):
    """One complete JSONL record: its parsed object, 1-based line number and end offset.

    A NamedTuple (immutable like a frozen dataclass, several times cheaper to build): one is
    made per transcript line.
    """

    obj: dict[str, Any]
    lineno: int
    end: int  # byte offset just past this line's newline
    start: int = -1  # byte offset of the line's first byte
    # The line: its UTF-8 bytes as read (valid UTF-8; maybe with the newline and other
    # whitespace around it), or its decoded, stripped text when it took the json path. Most
    # readers never look at it (a record is kept by its byte span), so it is stripped and
    # decoded only when asked for (`raw`): one copy and one decode per line saved.
    data: bytes | str = ""

    @property
    def raw(self) -> str:
        """The decoded line text (as read, stripped)."""
        d = self.data
        return d.strip().decode("utf-8") if isinstance(d, bytes) else d


def _decode(raw: bytes) -> tuple[str, bool]:
    """UTF-8 decode; invalid bytes are replaced (and reported) rather than losing the line."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


def _scrub_surrogates(value: Any) -> Any:
    """Replace lone surrogates (from JSON `\\ud800` escapes) so text is valid UTF-8 downstream."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_scrub_surrogates(k): _scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_surrogates(v) for v in value]
    return value


# Lone surrogates can only enter through a JSON `\\uD8xx`..`\\uDFxx` escape (decoded UTF-8 never
# holds one), so only lines containing such an escape need the (recursive) scrub.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


# The scanner json.loads itself runs (the C one where available), same default settings.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_WS = " \t\n\r"


def _fast_decoder() -> Callable[[bytes], Any] | None:
    """msgspec's JSON decoder, straight from UTF-8 bytes (None without msgspec)."""
    # The lines it accepts it decodes to the same objects as json.loads (ints of any size up
    # to Python's digit limit, correctly rounded floats: tests/ingest/test_fast_json.py);
    # everything it refuses (NaN/Infinity, lone surrogates, invalid UTF-8, bad JSON, too
    # deep) goes through the json path, which has the last word. Only a line nested within a
    # level or two of the interpreter's recursion limit (~1,000, counted from the caller's
    # stack, so never a fixed boundary) may parse here where json gave up. Twice as fast as
    # decode + json.loads, and a line it accepts is valid UTF-8 without lone surrogates, so
    # the defect checks of that path have nothing to find in it.
    try:
        from msgspec.json import Decoder
    except ImportError:  # msgspec is a dependency; without it every line takes the json path
        return None
    return Decoder().decode


_FAST = _fast_decoder()


def parse_json_line(text: str) -> tuple[Any, str | None]:
    """json.loads with the failure reason instead of an exception (deep nesting included)."""
    if text and text[0] not in _JSON_WS and text[-1] not in _JSON_WS:
        # json.loads minus its whitespace skipping (lines arrive stripped): the scanner and
        # an "extra data" check are what it runs for such text.
        try:
            obj, end = _SCAN(text, 0)
        except StopIteration:
            return None, "bad_json"
        except RecursionError:
            return None, "too_deep"
        except ValueError:
            return None, "bad_json"
        return (obj, None) if end == len(text) else (None, "bad_json")
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "too_deep"
    except ValueError:
        return None, "bad_json"


def iter_jsonl(path: Path, start: int = 0, skips: list[Skip] | None = None,
               max_line: int = MAX_LINE_BYTES, pos_out: list[int] | None = None,
               buffering: int = _BUFFER, decoder: Callable[[bytes], Any] | None = None
               ) -> Iterator[Line]:
    """Yield complete object lines from byte offset `start`.

    A final line without a newline is left unread (the agent may still be writing it); its
    offset is not consumed, so the next run sees it whole. Every other bad line is appended to
    `skips` with a reason and consumed. Memory stays bounded by `max_line`. When `pos_out` is
    given, `pos_out[0]` is kept at the offset just past the last consumed line (good or bad),
    which is where the next read should start. `buffering`: the read buffer's size (a caller
    that reads only the first lines asks for a small one: the default reads most transcripts
    whole on the first line). `decoder`: a msgspec decoder to use instead of the plain one
    (it must decode what it accepts as json.loads does; codex/ids.py counts floats with one).
    """
    sink = skips if skips is not None else []
    fast = _FAST if decoder is None or _FAST is None else decoder
    lineno = 0
    try:
        # A large buffer: most lines are read without a refill, and readline copies less.
        fh = open(path, "rb", buffering=buffering)  # noqa: SIM115 - closed by the with below
    except OSError:
        sink.append(Skip("unreadable", str(path)))
        return
    with fh:
        if start:
            # Count lines before `start` only cheaply: line numbers are for humans, so we
            # number from the cursor when resuming (location says "+N").
            fh.seek(start)
        pos = start
        if pos_out is None:
            pos_out = [pos]
        else:
            pos_out[:] = [pos]
        limit = max_line + 1
        readline = fh.readline
        while True:
            pos_out[0] = pos
            raw = readline(limit)
            if not raw:
                return
            n = len(raw)
            if raw[-1] != 10:  # no newline: a partial last line, or one too long
                if n <= max_line:
                    return  # partial last line
                # Too long: skip to the end of this line without holding it in memory.
                consumed = n
                complete = False
                while True:
                    chunk = readline(CHUNK)
                    if not chunk:
                        break
                    consumed += len(chunk)
                    if chunk.endswith(b"\n"):
                        complete = True
                        break
                if not complete:
                    return  # a huge partial last line: wait for it to finish
                lineno += 1
                pos += consumed
                sink.append(Skip("too_large", f"{path}:{_loc(start, lineno)}"))
                continue
            lineno += 1
            pos += n
            if fast is not None:
                # The line as read: JSON allows the newline (and any JSON whitespace) around
                # the object, so most lines are decoded without a stripped copy first.
                try:
                    obj = fast(raw)
                except Exception:  # any refusal (bad JSON, NaN, surrogates): json decides
                    obj = None
                if type(obj) is dict:
                    # Line(...) without the NamedTuple's Python-level __new__ (per line)
                    yield _new_line(Line, (obj, lineno, pos, pos - n, raw))
                    continue
            body = raw.strip()
            if not body:
                continue
            if fast is not None and len(body) < n - 1:
                # stripped of more than its newline (a form feed, say): decode that as before
                try:
                    obj = fast(body)
                except Exception:
                    obj = None
                if type(obj) is dict:
                    yield _new_line(Line, (obj, lineno, pos, pos - n, body))
                    continue
            text, bad_utf8 = _decode(body)
            if bad_utf8:
                sink.append(Skip("invalid_utf8", f"{path}:{_loc(start, lineno)}"))
            obj, err = parse_json_line(text)
            if err:
                sink.append(Skip(err, f"{path}:{_loc(start, lineno)}"))
                continue
            if not isinstance(obj, dict):
                sink.append(Skip("not_object", f"{path}:{_loc(start, lineno)}"))
                continue
            if _SURROGATE_ESCAPE.search(text):
                try:
                    scrubbed = _scrub_surrogates(obj)
                except RecursionError:
                    sink.append(Skip("too_deep", f"{path}:{_loc(start, lineno)}"))
                    continue
                if scrubbed != obj:  # a valid surrogate pair (emoji) is not a defect
                    # Counted, not dropped: the line is kept with U+FFFD in place.
                    sink.append(Skip("lone_surrogate", f"{path}:{_loc(start, lineno)}"))
                    obj = scrubbed
                    text = json.dumps(obj, ensure_ascii=False)
            yield Line(obj=obj, lineno=lineno, end=pos, start=pos - n, data=text)


_new_line = tuple.__new__


def _loc(start: int, lineno: int) -> str:
    return str(lineno) if start == 0 else f"@{start}+{lineno}"
