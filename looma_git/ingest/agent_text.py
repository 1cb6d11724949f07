"""Small helpers shared by the Codex and Gemini adapters: UTC timestamps, bounded text,
raw-record capping, test-command classification and complete-line offsets."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

# Tool output can be megabytes; the head says what ran, the tail says how it ended.
OUTPUT_HEAD = 3000
OUTPUT_TAIL = 1000
RAW_JSON_MAX = 32 * 1024


# A stamp already in the form utc_z writes (4-digit year, up to 3 fraction digits, `Z`, a
# time of day in range): it comes back unchanged once its date is known to be real (asked once
# per date: a rollout writes a new stamp on every record, on a few dates). Any other string
# (hour 24, second 60...) takes the parse, which refuses what fromisoformat refuses.
_CANONICAL_Z = re.compile(
    r"([1-9]\d{3}-\d\d-\d\d)T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,3})?Z")
_REAL_DATES: dict[str, bool] = {}


def utc_z(value: Any) -> str | None:
    """An ISO-8601 UTC `...Z` string from an ISO string (any offset) or epoch s/ms; else None."""
    if type(value) is str:
        m = _CANONICAL_Z.fullmatch(value)
        if m is not None:
            day = m.group(1)
            real = _REAL_DATES.get(day)
            if real is None:
                try:
                    date.fromisoformat(day)
                    real = True
                except ValueError:
                    real = False
                if len(_REAL_DATES) >= 4096:
                    _REAL_DATES.clear()
                _REAL_DATES[day] = real
            return value if real else None
    return parse_utc(value)


def parse_utc(value: Any) -> str | None:
    """utc_z without its fast path for stamps already in canonical form."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000.0 if value > 1e11 else float(value)
        try:
            dt = datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return _fmt(dt, 3 if value > 1e11 else 0)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    frac = re.search(r"T\d\d:\d\d:\d\d\.(\d+)", text)
    digits = min(len(frac.group(1)), 3) if frac else 0
    candidate = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    # Python < 3.11 quirks aside, fromisoformat wants at most 6 fraction digits.
    candidate = re.sub(r"(\.\d{6})\d+", r"\1", candidate)
    try:
        dt = datetime.fromisoformat(candidate)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)  # agents write UTC; a naive stamp is taken as UTC
    return _fmt(dt.astimezone(UTC), digits)


def _fmt(dt: datetime, digits: int) -> str:
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        base += "." + f"{dt.microsecond:06d}"[:digits]
    return base + "Z"


def clip_output(text: str) -> str:
    """Tool output bounded to head + tail, with the omitted size stated."""
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL + 64:
        return text
    omitted = len(text) - OUTPUT_HEAD - OUTPUT_TAIL
    return f"{text[:OUTPUT_HEAD]}\n…[{omitted} chars omitted]…\n{text[-OUTPUT_TAIL:]}"


def raw_json(obj: Any) -> str:
    """The record as compact JSON, or a small stub when it is too large to keep verbatim."""
    try:
        blob = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return '{"unserializable":true}'
    if len(blob) <= RAW_JSON_MAX:
        return blob
    kind = obj.get("type") if isinstance(obj, dict) else None
    return json.dumps({"truncated": True, "type": kind if isinstance(kind, str) else None,
                       "chars": len(blob)})


def as_str(value: Any) -> str | None:
    """`value` if it is a non-empty string, else None (wrong types never raise)."""
    return value if isinstance(value, str) and value else None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# A private stand-in for the shared looma_git.ingest.toolcalls helper (not landed yet).
_TEST_RE = re.compile(
    r"(?:^|[\s;&|(/])(?:"
    r"pytest|py\.test|tox|nox|unittest|"
    r"(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test(?::\S+)?|npx\s+(?:vitest|jest|mocha)|"
    r"vitest|jest|mocha|ava|"
    r"go\s+test|cargo\s+(?:test|nextest)|mvn\s+(?:\S+\s+)*test|gradlew?\s+(?:\S+\s+)*test|"
    r"make\s+(?:test|check)|ctest|rspec|phpunit|dotnet\s+test|mix\s+test|deno\s+test|"
    r"swift\s+test|rake\s+test"
    r")(?=$|[\s;&|)])"
)


def is_test_command(command: str | None) -> bool:
    """Whether a shell command line runs a test suite (pytest, npm test, go test, ...)."""
    return bool(command) and bool(_TEST_RE.search(command or ""))


def command_test_outcome(command: str | None, exit_code: int | None) -> str | None:
    """"passed"/"failed" for a test command with a known exit code, else None."""
    if exit_code is None or not is_test_command(command):
        return None
    return "passed" if exit_code == 0 else "failed"


def complete_end(path: Path, end: int, size: int) -> int:
    """Offset just past the last newline at or after `end`: complete bad lines are consumed
    too, only a partial last line is left for the next read."""
    if end >= size:
        return end
    last = end
    with path.open("rb") as fh:
        fh.seek(end)
        pos = end
        while pos < size:
            chunk = fh.read(min(1024 * 1024, size - pos))
            if not chunk:
                break
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                last = pos + idx + 1
            pos += len(chunk)
    return last
