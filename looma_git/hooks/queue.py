"""The hook queues: line formats, atomic take (rename aside), put-back and crash leftovers.

`queue` holds `<sha> <unix time>` lines appended by the post-commit shim; `rewrites` holds
`<old> <new> <amend|rebase> <unix time>` lines appended by post-rewrite. The drainer renames a
queue to `<name>.<ns>.draining` before reading it, so shims keep appending to a fresh file; a
drainer that dies leaves its `.draining` files for the next one to pick up.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

COMMITS = "queue"
REWRITES = "rewrites"
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


@dataclass(frozen=True)
class QueuedCommit:
    """A commit the post-commit hook saw."""

    sha: str
    queued_at: int
    line: str


@dataclass(frozen=True)
class QueuedRewrite:
    """One `<old> <new>` pair from post-rewrite."""

    old: str
    new: str
    kind: str
    queued_at: int
    line: str


@dataclass(frozen=True)
class Taken:
    """Lines moved out of a queue, and the files they came from (with the size read)."""

    path: Path
    files: tuple[tuple[Path, int], ...]
    lines: tuple[str, ...]


def parse_commit(line: str) -> QueuedCommit | None:
    """A queue line, or None when malformed."""
    parts = line.split()
    if len(parts) != 2 or not _SHA.match(parts[0]) or not parts[1].isdigit():
        return None
    return QueuedCommit(parts[0], int(parts[1]), line)


def parse_rewrite(line: str) -> QueuedRewrite | None:
    """A rewrites line, or None when malformed."""
    parts = line.split()
    if (len(parts) != 4 or not _SHA.match(parts[0]) or not _SHA.match(parts[1])
            or not parts[3].isdigit()):
        return None
    return QueuedRewrite(parts[0], parts[1], parts[2], int(parts[3]), line)


def _draining(path: Path) -> list[Path]:
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    prefix = path.name + "."
    return sorted(path.parent / n for n in names
                  if n.startswith(prefix) and n.endswith(".draining"))


def _lines(data: bytes) -> list[str]:
    # Only complete lines: a partial last line would be a write still in flight.
    text = data.decode("utf-8", "replace")
    return [ln for ln in text.split("\n")[:-1] if ln.strip()]


def take(path: Path) -> Taken:
    """Move `path` aside atomically and read it, together with leftovers of a dead drainer.

    Call only while holding the drainer lock.
    """
    if path.is_file():
        os.replace(path, path.with_name(f"{path.name}.{time.time_ns()}.draining"))
    files: list[tuple[Path, int]] = []
    lines: list[str] = []
    for f in _draining(path):
        data = f.read_bytes()
        complete = data[:data.rfind(b"\n") + 1]
        files.append((f, len(complete)))
        lines.extend(_lines(complete))
    return Taken(path, tuple(files), tuple(lines))


def late_lines(taken: Taken) -> list[str]:
    """Lines a shim appended to a taken file after it was read (it opened the file just
    before the rename); they go back into the queue instead of being lost."""
    late: list[str] = []
    for f, size in taken.files:
        try:
            with f.open("rb") as fh:
                fh.seek(size)
                data = fh.read()
        except OSError:
            continue
        late.extend(_lines(data if data.endswith(b"\n") else data + b"\n"))
    return late


def put_back(path: Path, lines: list[str]) -> None:
    """Append `lines` to the live queue (O_APPEND, like the shims)."""
    if not lines:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, "".join(ln + "\n" for ln in lines).encode("utf-8"))
    finally:
        os.close(fd)


def finish(taken: Taken) -> None:
    """Remove the taken files (after their unprocessed lines were put back)."""
    for f, _ in taken.files:
        try:
            f.unlink()
        except FileNotFoundError:
            pass


def pending(path: Path) -> list[str]:
    """Every line waiting in `path` and in leftover `.draining` files (for status)."""
    out: list[str] = []
    for f in [path, *_draining(path)]:
        try:
            out.extend(_lines(f.read_bytes()))
        except OSError:
            continue
    return out
