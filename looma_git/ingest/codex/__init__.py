"""The Codex CLI adapter: discovers rollouts under $CODEX_HOME and reads every format era."""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from looma_git.ingest.agent_text import as_dict, as_list, complete_end
from looma_git.ingest.base import (
    Cursor,
    DiscoveryEnv,
    ReadResult,
    Skip,
    Source,
    head_fingerprint,
    resume_point,
)
from looma_git.ingest.codex.ids import DECODE, floats_decoded
from looma_git.ingest.codex.records import AGENT, CodexSession
from looma_git.ingest.jsonl import iter_jsonl
from looma_git.ingest.names import CODEX_SUFFIXES

UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", re.I)
SUFFIXES = CODEX_SUFFIXES
MAX_JSON_BYTES = 256 * 1024 * 1024  # a legacy single-JSON rollout larger than this is skipped
MAX_ZST_OUTPUT = 4 * 1024 * 1024 * 1024  # decompression bomb guard
CHUNK = 1024 * 1024


def _suffix(path: Path) -> str | None:
    name = path.name
    return next((s for s in SUFFIXES if name.endswith(s)), None)


def session_id_from_name(path: Path) -> str:
    """The uuid in a rollout file name, else the bare file name (the session_meta id wins)."""
    match = UUID_RE.search(path.name)
    if match:
        return match.group(1).lower()
    suffix = _suffix(path) or path.suffix
    return path.name[: -len(suffix)] if suffix else path.name


class CodexAdapter:
    """Codex CLI rollouts: enveloped JSONL, bare JSONL, legacy single JSON and `.jsonl.zst`."""

    name = AGENT

    # -- discovery ---------------------------------------------------------------------------
    def discover(self, env: DiscoveryEnv) -> list[Source]:
        """Rollouts under each $CODEX_HOME (comma-separated allowed) or ~/.codex; overrides win."""
        files: list[Path] = []
        try:
            overrides = env.overrides.get(AGENT)
            if overrides:
                for path in overrides:
                    files.extend(self._scan_override(path))
            else:
                raw = env.environ.get("CODEX_HOME", "")
                homes = [Path(p) for p in raw.split(",") if p.strip()] or [env.home / ".codex"]
                for home in homes:
                    files.extend(self._scan_home(home))
        except OSError:
            pass
        return [Source(AGENT, p, "jsonl" if p.name.endswith(".jsonl") else "json")
                for p in _dedupe(files)]

    def _scan_home(self, home: Path) -> list[Path]:
        found: list[Path] = []
        for sub in ("sessions", "archived_sessions"):
            base = home / sub
            if not base.is_dir():
                continue
            for pattern in ("rollout-*", "*/*/*/rollout-*"):
                found.extend(sorted(p for p in base.glob(pattern)
                                    if _suffix(p) and p.is_file()))
        return found

    def _scan_override(self, path: Path) -> list[Path]:
        if path.is_file():
            return [path]
        if not path.is_dir():
            return []
        if (path / "sessions").is_dir() or (path / "archived_sessions").is_dir():
            return self._scan_home(path)
        return sorted(p for p in path.rglob("rollout-*") if _suffix(p) and p.is_file())

    # -- reading -----------------------------------------------------------------------------
    def read(self, source: Source, cursor: Cursor | None) -> ReadResult:
        """New events after `cursor`; never raises on bad data (Skips instead)."""
        path = source.path
        try:
            if path.name.endswith(".jsonl.zst"):
                return self._read_zst(path, cursor)
            if path.name.endswith(".json"):
                return self._read_legacy_json(path, cursor)
            return self._read_jsonl(path, cursor)
        except OSError as exc:
            return ReadResult([], cursor or Cursor(), [Skip("unreadable", f"{path} ({exc})")])

    def _read_jsonl(self, path: Path, cursor: Cursor | None) -> ReadResult:
        size = path.stat().st_size
        start, state, notes = resume_point(path, cursor)
        if cursor and start and start == size:
            return ReadResult([], cursor)
        sess = CodexSession(session_id_from_name(path), state)
        skips: list[Skip] = []
        end = start
        floats = floats_decoded()
        for line in iter_jsonl(path, start, skips, decoder=DECODE):
            seen, floats = floats, floats_decoded()
            as_read = type(line.data) is bytes
            sess.feed(line.obj, line.end,
                      f"{path}:{line.lineno if not start else f'@{start}+{line.lineno}'}",
                      line.start, plain=seen == floats and as_read, carry=as_read)
            end = line.end
        end = complete_end(path, end, size)
        new_cursor = Cursor(offset=end, head_fp=head_fingerprint(path, end),
                            state=sess.to_state())
        return ReadResult(sess.events, new_cursor, skips + sess.skips, sess.noise, notes,
                          sess.records)

    def _read_zst(self, path: Path, cursor: Cursor | None) -> ReadResult:
        # Offsets into a compressed stream mean nothing to a tail reader: the whole file is
        # re-read when its bytes change, and events dedupe by id (same decompressed offsets).
        digest = _file_hash(path)
        if cursor and cursor.content_hash == digest:
            return ReadResult([], cursor)
        import zstandard  # lazy: only when a compressed rollout exists

        skips: list[Skip] = []
        sess = CodexSession(session_id_from_name(path))
        with tempfile.NamedTemporaryFile(prefix="looma-codex-", suffix=".jsonl") as tmp:
            written = 0
            try:
                written = _decompress(path, tmp, zstandard)
            except zstandard.ZstdError as exc:
                skips.append(Skip("bad_compression", f"{path} ({exc})"))
                written = tmp.tell()
            except _Truncated:
                skips.append(Skip("bad_compression", f"{path} (truncated frame)"))
                written = tmp.tell()
            if written >= MAX_ZST_OUTPUT:
                skips.append(Skip("too_large", str(path)))
            tmp.flush()
            tmp_path = Path(tmp.name)
            inner: list[Skip] = []
            end = 0
            for line in iter_jsonl(tmp_path, 0, inner):
                sess.feed(line.obj, line.end, f"{path}:{line.lineno}")
                end = line.end
            if complete_end(tmp_path, end, written) < written:
                inner.append(Skip("truncated_line", f"{path}:end"))
            skips.extend(Skip(s.reason, s.location.replace(str(tmp_path), str(path)))
                         for s in inner)
        return ReadResult(sess.events, Cursor(content_hash=digest), skips + sess.skips,
                          sess.noise)

    def _read_legacy_json(self, path: Path, cursor: Cursor | None) -> ReadResult:
        """TS-era `{"session": {...}, "items": [...]}`, written once, re-read by content hash."""
        if path.stat().st_size > MAX_JSON_BYTES:
            return ReadResult([], cursor or Cursor(), [Skip("too_large", str(path))])
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if cursor and cursor.content_hash == digest:
            return ReadResult([], cursor)
        done = Cursor(content_hash=digest)
        try:
            doc = json.loads(data.decode("utf-8", "replace"))
        except RecursionError:
            return ReadResult([], done, [Skip("too_deep", str(path))])
        except ValueError:
            return ReadResult([], done, [Skip("bad_json", str(path))])
        if not isinstance(doc, dict):
            return ReadResult([], done, [Skip("not_object", str(path))])
        sess = CodexSession(session_id_from_name(path))
        sess.era = "legacy_json"
        session = as_dict(doc.get("session"))
        if session:
            sess.meta(session, None)
        items = doc.get("items")
        if not isinstance(items, list):
            return ReadResult([], done, [Skip("unknown_type", f"{path}#items")])
        for i, item in enumerate(as_list(items)):
            loc = f"{path}#items[{i}]"
            if isinstance(item, dict):
                sess.feed(item, i + 1, loc)
            else:
                sess.skips.append(Skip("not_object", loc))
        return ReadResult(sess.events, done, sess.skips, sess.noise)


class _Truncated(Exception):
    """The compressed stream ended inside a frame."""


def _decompress(path: Path, out: Any, zstandard: Any) -> int:
    """Stream every zstd frame of `path` into `out`; returns bytes written (bounded)."""
    dctx = zstandard.ZstdDecompressor()
    dobj, fed, written = dctx.decompressobj(), False, 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(64 * 1024), b""):
            data = chunk
            while data:
                fed = True
                piece = dobj.decompress(data)
                out.write(piece)
                written += len(piece)
                if written >= MAX_ZST_OUTPUT:
                    return written
                if dobj.eof:
                    data = dobj.unused_data
                    dobj, fed = dctx.decompressobj(), False
                else:
                    data = b""
    if fed:
        raise _Truncated()
    return written


def _dedupe(files: Iterable[Path]) -> list[Path]:
    """Plain rollouts win over `.zst` twins; `sessions/` wins over `archived_sessions/`."""
    by_stem: dict[str, Path] = {}
    for path in files:
        suffix = _suffix(path) or ""
        stem = path.name[: -len(suffix)] if suffix else path.name
        key = f"{stem}{'.json' if suffix == '.json' else ''}"
        current = by_stem.get(key)
        if current is None or _rank(path) < _rank(current):
            by_stem[key] = path
    return sorted(by_stem.values())


def _rank(path: Path) -> tuple[int, int]:
    archived = 1 if "archived_sessions" in path.parts else 0
    compressed = 1 if path.name.endswith(".zst") else 0
    return archived, compressed



def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()
