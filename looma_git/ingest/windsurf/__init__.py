"""The Windsurf adapter: Cascade hook transcripts are read; encrypted `.pb` bodies are reported."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from looma_git.ingest.base import Cursor, DiscoveryEnv, ReadResult, Skip, Source
from looma_git.ingest.ide_common import (
    dump_state,
    is_dir,
    is_file,
    list_dir,
    load_state,
    user_config_dir,
)
from looma_git.ingest.sqlite_ro import (
    DEFAULT_BUSY_TIMEOUT,
    ReadOnlyDb,
    bytes_to_text,
    load_json_object,
)

NAME = "windsurf"
SAMPLE_BYTES = 4096
ENCRYPTED_ENTROPY = 7.0  # bits/byte; Windsurf's .pb files measure 7.9-8.0, plain protobuf < 6.5
# ItemTable keys that old builds or third-party readers probed for chat data.
_CHAT_KEYS = ("cascade.chatdata", "aiChat.chatdata", "chat.ChatSessionStore.index",
              "workbench.panel.aichat.view.aichat.chatdata")


def windsurf_roots(env: DiscoveryEnv) -> tuple[Path, Path]:
    """(`~/.codeium/windsurf`, `<config>/Windsurf/User`) for the platform."""
    return env.home / ".codeium" / "windsurf", user_config_dir(env) / "Windsurf" / "User"


def entropy(data: bytes) -> float:
    """Shannon entropy in bits per byte (0 for empty data)."""
    if not data:
        return 0.0
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in Counter(data).values())


def transcripts_dir(env: DiscoveryEnv) -> Path:
    """`~/.windsurf/transcripts`: where the `post_cascade_response_with_transcript` hook's
    plain-text JSONL transcripts are written (one `<trajectory_id>.jsonl` per conversation)."""
    return env.home / ".windsurf" / "transcripts"


def _transcript_sources(directory: Path) -> list[Source]:
    return [Source(NAME, p, "jsonl") for p in list_dir(directory)
            if p.suffix == ".jsonl" and not p.name.startswith(".") and is_file(p)]


def _sources_in(root: Path, user: Path) -> list[Source]:
    found: list[Source] = []
    for sub, key in (("cascade", "cascade"), ("implicit", "implicit")):
        if is_dir(root / sub):
            found.append(Source(NAME, root / sub, "dir", key))
    if is_dir(root / "cascade" / "implicit"):
        found.append(Source(NAME, root / "cascade" / "implicit", "dir", "implicit"))
    gdb = user / "globalStorage" / "state.vscdb"
    if is_file(gdb):
        found.append(Source(NAME, gdb, "sqlite", "global"))
    return found


def _has_content(value: object) -> bool:
    """Whether a probed value holds data: JSON with a non-empty list/object inside, or any
    non-JSON text (the empty `{"version":1,"entries":{}}` index Windsurf writes does not)."""
    text = bytes_to_text(value).strip()
    if len(text) <= 2:
        return False
    obj, err = load_json_object(text)
    if obj is None:
        return err not in ("empty",)
    return any(isinstance(v, list | dict) and v for v in obj.values())


class WindsurfAdapter:
    """Windsurf (Codeium; "Devin Desktop" in 2026 builds): the Cascade hook transcripts, and a
    plain statement of what cannot be read (the encrypted `.pb` conversations)."""

    name = NAME

    def __init__(self, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.busy_timeout = busy_timeout

    def discover(self, env: DiscoveryEnv) -> list[Source]:
        """The Cascade conversation dirs and Windsurf's global state.vscdb, if present."""
        overrides = env.overrides.get(NAME)
        if overrides:
            found: list[Source] = []
            for path in overrides:
                if is_file(path) and path.suffix == ".jsonl":
                    found.append(Source(NAME, path, "jsonl"))
                elif is_dir(path) and path.name == "transcripts":
                    found.extend(_transcript_sources(path))
                elif is_dir(path / "transcripts") and path.name == ".windsurf":
                    found.extend(_transcript_sources(path / "transcripts"))
                elif is_file(path) and path.suffix == ".vscdb":
                    found.append(Source(NAME, path, "sqlite", "global"))
                elif is_dir(path) and any(p.suffix == ".pb" for p in list_dir(path)):
                    found.append(Source(NAME, path, "dir", "cascade"))
                elif is_dir(path):
                    found.extend(_sources_in(path, path / "User"))
            return found
        root, user = windsurf_roots(env)
        return _transcript_sources(transcripts_dir(env)) + _sources_in(root, user)

    def read(self, source: Source, cursor: Cursor | None) -> ReadResult:
        """Hook transcripts -> events; `.pb` dirs and the state DB -> no events, only
        Skip("encrypted") per new/changed conversation and plain-language notes."""
        if source.kind == "jsonl":
            from looma_git.ingest.windsurf.transcripts import read_transcript

            return read_transcript(source.path, cursor)
        if source.kind == "sqlite":
            return self._read_state_db(source, cursor)
        return self._read_cascade(source, cursor)

    def _read_cascade(self, source: Source, cursor: Cursor | None) -> ReadResult:
        old = cursor or Cursor()
        seen = load_state(old.state).get("pb", {})
        seen = seen if isinstance(seen, dict) else {}
        result = ReadResult(events=[], cursor=old)
        now: dict[str, str] = {}
        total_bytes = 0
        opaque = 0
        for path in list_dir(source.path):
            if path.suffix != ".pb" or not is_file(path):
                continue
            try:
                st = path.stat()
                with path.open("rb") as fh:
                    sample = fh.read(SAMPLE_BYTES)
            except OSError:
                result.skips.append(Skip("unreadable", str(path)))
                continue
            total_bytes += st.st_size
            stamp = f"{st.st_size}:{st.st_mtime_ns}"
            now[path.stem] = stamp
            high = entropy(sample) >= ENCRYPTED_ENTROPY or len(sample) < 64
            if not high:
                opaque += 1
            if seen.get(path.stem) != stamp:
                result.skips.append(Skip("encrypted" if high else "unknown_format",
                                         str(path)))
        changed = sum(1 for k, v in now.items() if seen.get(k) != v)
        if now:
            where = source.path
            text = (f"windsurf: {len(now)} Cascade conversation(s) found in {where} "
                    f"({total_bytes} bytes, {changed} new or changed since the last run); "
                    "their bodies are encrypted by Windsurf and cannot be read; looma read "
                    "metadata only (conversation ids, sizes, modification times)")
            if opaque:
                text += f"; {opaque} file(s) do not look encrypted but their protobuf schema " \
                        "is undocumented, so they were not decoded either"
            result.notes.append(text)
        result.cursor = Cursor(state=dump_state({"pb": now}))
        return result

    def _read_state_db(self, source: Source, cursor: Cursor | None) -> ReadResult:
        old = cursor or Cursor()
        result = ReadResult(events=[], cursor=old)
        with ReadOnlyDb(source.path, busy_timeout=self.busy_timeout) as db:
            tables = db.tables() if db.ok else {}
            found: list[str] = []
            keys = 0
            if db.ok and "ItemTable" in tables:
                keys = int(db.rows("SELECT count(*) FROM ItemTable")[0][0] or 0) \
                    if db.ok else 0
                for key in _CHAT_KEYS:
                    rows = db.rows("SELECT value FROM ItemTable WHERE key = ?", (key,))
                    if rows and _has_content(rows[0][0]):
                        found.append(f"{key} ({len(bytes_to_text(rows[0][0]))} bytes)")
            if db.skip is not None:
                return ReadResult(events=[], cursor=old, skips=[db.skip])
        if "cursorDiskKV" in tables:
            found.append("cursorDiskKV table")
        digest = f"{keys}|{'|'.join(found)}"
        if cursor is None or old.content_hash != digest:
            if found:
                result.notes.append(
                    f"windsurf: {source.path} has {keys} UI-state keys; possible chat keys "
                    f"{', '.join(found)} have no documented format and were not read")
            else:
                result.notes.append(
                    f"windsurf: {source.path} holds UI state only ({keys} keys); no "
                    "conversation data is stored there")
        result.cursor = Cursor(content_hash=digest)
        return result
