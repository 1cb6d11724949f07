"""Drainer bookkeeping: hooks.log (append, rotate, last error) and hooks-state.json."""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG = "hooks.log"
STATE = "hooks-state.json"
MAX_LOG_BYTES = 1 << 20  # rotated to hooks.log.1 past this, so a broken setup cannot fill a disk
MAX_SAMPLES = 256
_TAIL_BYTES = 64 * 1024


def utc_now() -> str:
    """Wall clock as an ISO-8601 UTC string (second precision, like the shims' lines)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def log(state_dir: Path, message: str) -> None:
    """Append one line (or a traceback block) to hooks.log; never raises."""
    path = state_dir / LOG
    with contextlib.suppress(OSError):
        if path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(LOG + ".1"))
    text = f"looma-drain {utc_now()} {message.rstrip()}\n"
    with contextlib.suppress(OSError), path.open("a", encoding="utf-8") as fh:
        fh.write(text)


@dataclass(frozen=True)
class LogError:
    """The most recent error recorded in hooks.log."""

    line: str
    traceback: bool  # a Python traceback (e.g. looma failing to import), not a logged error


def last_log_error(state_dir: Path) -> LogError | None:
    """The last error in the tail of hooks.log: a shim/drainer `error:` line or the final line
    of a Python traceback (what an import error in the drainer leaves behind)."""
    try:
        with (state_dir / LOG).open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - _TAIL_BYTES))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    found: LogError | None = None
    in_tb = False
    for line in lines:
        if line.startswith("Traceback (most recent call last)"):
            in_tb = True
            continue
        if in_tb:
            if line.startswith((" ", "\t")) or not line.strip():
                continue
            in_tb = False
            if line.startswith("During handling") or line.startswith("The above exception"):
                in_tb = True
                continue
            found = LogError(line.strip(), True)
            continue
        if line.startswith(("looma-hook ", "looma-drain ")) and " error: " in line:
            found = LogError(line.strip(), False)
        elif line.startswith("looma: ") and "error" in line:
            found = LogError(line.strip(), False)  # the CLI's own rendering of a LoomaError
    return found


def read_state(state_dir: Path) -> dict[str, Any]:
    """hooks-state.json, or {} when absent or unreadable (it is only bookkeeping)."""
    try:
        data = json.loads((state_dir / STATE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(state_dir: Path, data: dict[str, Any]) -> None:
    """Replace hooks-state.json atomically (temp file + rename)."""
    path = state_dir / STATE
    tmp = path.with_name(f".{STATE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def add_samples(data: dict[str, Any], key: str, values: list[float]) -> None:
    """Append latency samples under data["samples"][key], keeping the newest MAX_SAMPLES."""
    samples = data.setdefault("samples", {})
    kept = [float(v) for v in samples.get(key, []) if isinstance(v, (int, float))]
    samples[key] = [round(v, 3) for v in (kept + values)[-MAX_SAMPLES:]]


def percentiles(values: list[float]) -> dict[str, float]:
    """p50/p90/p95/p99 (nearest rank) and n of `values`; {} when empty."""
    if not values:
        return {}
    ordered = sorted(values)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]

    return {"p50": rank(0.50), "p90": rank(0.90), "p95": rank(0.95), "p99": rank(0.99),
            "n": float(len(ordered))}
