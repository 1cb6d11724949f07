"""The persistent parsed-op cache: op-file blob id -> the validated op, in the local state dir.

Parsing an op file (read the blob from the packs, YAML fast path, pydantic, content hash) costs
~0.3 ms, and every fresh process (`looma sync`, `verify`, `log`, each hook drain) used to pay it
for every op of the ledger. Op files are content-addressed, so an entry can never go stale.

The file is `<git-common-dir>/looma/ops-cache`: one line per op file,
`<40-hex blob id> <op as compact JSON>\\n`, appended with one write per batch. It is local
(never shared or pushed: it lives outside every ref) and only ever holds ops that passed
validation. It is not trusted either: an entry is used only when it rebuilds an Op whose id
is both the id its path names and the hash of its content, so a truncated, damaged or edited
cache can only cause a re-parse, never a different op. Damaged lines are dropped and the
file is rewritten on the next flush.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from looma_git.ledger.ops import Op
from looma_git.store.objects import write_all

FILE_NAME = "ops-cache"
_MAX_BYTES = 512 * 1024 * 1024  # a larger file is not read (and gets rebuilt)
_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class OpsCache:
    """One state dir's cache: lazily loaded, new entries buffered until `flush`."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE_NAME
        self._lines: dict[bytes, bytes] | None = None  # blob hex -> JSON (validated on use)
        self._pending: list[bytes] = []
        self._rewrite = False

    def _load(self) -> dict[bytes, bytes]:
        if self._lines is not None:
            return self._lines
        lines: dict[bytes, bytes] = {}
        try:
            if self.path.stat().st_size <= _MAX_BYTES:
                data = self.path.read_bytes()
            else:
                data, self._rewrite = b"", True
        except OSError:
            data = b""
        for line in data.split(b"\n"):
            if not line:
                continue
            if len(line) < 43 or line[40:41] != b" ":
                self._rewrite = True  # e.g. a line cut short by a crash mid-append
                continue
            lines[line[:40]] = line[41:]
        if data and not data.endswith(b"\n"):
            self._rewrite = True
        self._lines = lines
        return lines

    def get(self, blob: bytes, path: str) -> Op | None:
        """The op stored in `blob` at `path`, or None (not cached, or the entry is damaged)."""
        raw = self._load().get(blob)
        if raw is None:
            return None
        try:
            op = Op.from_dict(json.loads(raw))
        except ValueError:  # bad JSON or a bad envelope (OpFieldError)
            op = None
        if op is None or op.computed_id() != op.id:
            self._lines.pop(blob, None)  # type: ignore[union-attr]
            self._rewrite = True
            return None
        # the name check parse_op_file makes: the same bytes under another op's name are
        # parsed (and rejected) as usual, and a wrong entry is replaced by `put`
        return op if path == f"ops/{op.id[:2]}/{op.id}.yaml" else None

    def put(self, blob: bytes, op: Op, fields: dict[str, object] | None = None) -> None:
        """Remember a validated op (`fields`: its `op.fields()`, when the caller has it)."""
        lines = self._lines  # not loaded by a writer that only appends (it needs no lookup)
        try:
            raw = _DUMPS(fields if fields is not None else op.fields()).encode()
        except (TypeError, ValueError):
            return
        if b"\n" in raw:
            return  # cannot happen with compact JSON; never risk a split line
        if lines is not None:
            known = lines.get(blob)
            if known == raw:
                return
            if known is not None:
                self._rewrite = True  # a blob holds one op: the parse is right, the entry not
            lines[blob] = raw
        self._pending.append(blob + b" " + raw + b"\n")

    def flush(self) -> None:
        """Append the new entries (one write), or rewrite the file if it held damaged lines.

        Best effort: a cache that cannot be written only costs the next process a re-parse.
        """
        if not self._pending and not self._rewrite:
            return
        with contextlib.suppress(OSError):
            if self._rewrite:
                if not self.path.parent.is_dir():
                    return
                tmp = self.path.with_name(f"{FILE_NAME}.{os.getpid()}.tmp")
                body = b"".join(k + b" " + v + b"\n" for k, v in self._load().items())
                tmp.write_bytes(body)
                os.replace(tmp, self.path)
            elif self.path.parent.is_dir():  # never create the state dir just for a cache
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    write_all(fd, b"".join(self._pending))
                finally:
                    os.close(fd)
            self._pending.clear()
            self._rewrite = False


_CACHES: dict[str, OpsCache] = {}


def for_state_dir(state_dir: Path) -> OpsCache:
    """The process-wide cache object of one state dir."""
    key = str(state_dir)
    cache = _CACHES.get(key)
    if cache is None:
        cache = _CACHES[key] = OpsCache(state_dir)
    return cache
