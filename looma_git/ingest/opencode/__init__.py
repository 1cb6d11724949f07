"""The OpenCode adapter: discovery, and reading `opencode.db` (SQLite, read-only) incrementally."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from looma_git.ingest.base import Cursor, DiscoveryEnv, ReadResult, Skip, Source
from looma_git.ingest.ide_common import dump_state, is_dir, is_file, list_dir, load_state
from looma_git.ingest.opencode.parts import SessionInfo, convert
from looma_git.ingest.sqlite_ro import (
    DEFAULT_BUSY_TIMEOUT,
    ReadOnlyDb,
    bytes_to_text,
    file_signature,
    load_json_object,
)

NAME = "opencode"


def data_dirs(env: DiscoveryEnv) -> list[Path]:
    """OpenCode data dirs: `$OPENCODE_DATA_DIR` (comma list), else `$XDG_DATA_HOME/opencode`,
    else `~/.local/share/opencode` (OpenCode uses the XDG layout on every OS)."""
    explicit = env.environ.get("OPENCODE_DATA_DIR", "")
    dirs = [Path(p.strip()) for p in explicit.split(",") if p.strip()]
    if dirs:
        return dirs
    return [env.xdg("XDG_DATA_HOME", ".local/share") / "opencode"]


def _db_files(directory: Path) -> list[Path]:
    return [p for p in list_dir(directory)
            if p.suffix == ".db" and (p.name == "opencode.db" or p.name.startswith("opencode-"))
            and is_file(p)]


def _sources_in(directory: Path, env: DiscoveryEnv) -> list[Source]:
    found = [Source(NAME, p, "sqlite") for p in _db_files(directory)]
    override = env.environ.get("OPENCODE_DB", "").strip()
    if override and override != ":memory:":
        db = Path(override) if Path(override).is_absolute() else directory / override
        if is_file(db) and all(s.path != db for s in found):
            found.append(Source(NAME, db, "sqlite"))
    storage = directory / "storage"
    if is_dir(storage / "session"):
        found.append(Source(NAME, storage, "dir"))
    return found


@dataclass
class Progress:
    """Per-session reading position: messages consumed and the last (time_created, id)."""

    sessions: dict[str, list[Any]] = field(default_factory=dict)

    def get(self, sid: str) -> tuple[int, int, str]:
        value = self.sessions.get(sid)
        if (isinstance(value, list) and len(value) == 3 and isinstance(value[0], int)
                and isinstance(value[1], int) and isinstance(value[2], str)):
            return value[0], value[1], value[2]
        return 0, -1, ""

    def set(self, sid: str, n: int, t: int, mid: str) -> None:
        self.sessions[sid] = [n, t, mid]


def emit_session(session: SessionInfo, messages: list[tuple[str, int, Any]],
                 load_parts: Callable[[str], list[tuple[str, dict[str, Any]]]],
                 progress: Progress, where: str, result: ReadResult) -> None:
    """Convert the messages of one session that come after its recorded progress, in order;
    stop at an unfinished last message so it is read whole next time."""
    n, last_t, last_id = progress.get(session.id)
    pending = [m for m in messages if (m[1], m[0]) > (last_t, last_id)]
    pending.sort(key=lambda m: (m[1], m[0]))
    for i, (mid, t, raw) in enumerate(pending):
        data, err = load_json_object(raw) if not isinstance(raw, dict) else (raw, None)
        if data is None:
            result.skips.append(Skip(err or "bad_json", f"{where}#message:{mid}"))
            n += 1
            progress.set(session.id, n, t, mid)
            continue
        parts = load_parts(mid)
        conv = convert(session, mid, data, parts, n, row_ts=t, has_later=i + 1 < len(pending))
        if not conv.settled:
            break
        for reason in conv.noise:
            result.noise[reason] = result.noise.get(reason, 0) + 1
        if conv.event is not None:
            result.events.append(conv.event)
        n += 1
        progress.set(session.id, n, t, mid)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


class OpenCodeAdapter:
    """OpenCode sessions from `opencode*.db` and the legacy `storage/` JSON tree."""

    name = NAME

    def __init__(self, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.busy_timeout = busy_timeout

    def discover(self, env: DiscoveryEnv) -> list[Source]:
        """Databases and legacy trees under each data dir (or the `--source` overrides)."""
        found: list[Source] = []
        overrides = env.overrides.get(NAME)
        if overrides:
            for path in overrides:
                if is_file(path):
                    found.append(Source(NAME, path, "sqlite"))
                elif is_dir(path / "session") and path.name == "storage":
                    found.append(Source(NAME, path, "dir"))
                elif is_dir(path):
                    found.extend(_sources_in(path, env))
            return found
        for directory in data_dirs(env):
            found.extend(_sources_in(directory, env))
        return found

    def read(self, source: Source, cursor: Cursor | None) -> ReadResult:
        """New finished messages since `cursor`; never raises on bad data."""
        if source.kind == "dir":
            from looma_git.ingest.opencode.json_tree import read_storage

            return read_storage(source, cursor, self.busy_timeout)
        return self._read_db(source, cursor)

    def _read_db(self, source: Source, cursor: Cursor | None) -> ReadResult:
        old = cursor or Cursor()
        sig = file_signature(source.path)
        result = ReadResult(events=[], cursor=old)
        if cursor is not None and old.content_hash == sig and old.state:
            return result  # nothing was written since the last read
        progress = Progress(load_state(old.state).get("s", {}))
        where = str(source.path)
        with ReadOnlyDb(source.path, busy_timeout=self.busy_timeout) as db:
            if db.ok and not (db.has("session", "id")
                              and db.has("message", "id", "session_id", "data")):
                result.skips.append(Skip("unknown_schema", where))
            elif db.ok:
                self._read_sessions(db, progress, where, result)
            if db.skip is not None:
                # Locked or corrupt: report, keep the old cursor so nothing is lost.
                return ReadResult(events=[], cursor=old, skips=[*result.skips, db.skip])
        result.cursor = Cursor(content_hash=sig,
                               state=dump_state({"s": progress.sessions}))
        return result

    def _read_sessions(self, db: ReadOnlyDb, progress: Progress, where: str,
                       result: ReadResult) -> None:
        worktrees: dict[str, str] = {}
        if db.has("project", "id", "worktree"):
            for pid, wt in db.rows("SELECT id, worktree FROM project"):
                path = bytes_to_text(wt)
                if path and path != "/":
                    worktrees[bytes_to_text(pid)] = path
        cols = db.tables().get("session", set())
        wanted = [c for c in ("project_id", "directory", "parent_id", "version") if c in cols]
        select = ", ".join(["id", *wanted])
        part_cols = db.tables().get("part", set())
        has_parts = {"id", "message_id", "data"} <= part_cols
        for row in db.rows(f"SELECT {select} FROM session ORDER BY id"):
            values = dict(zip(["id", *wanted], (bytes_to_text(v) for v in row), strict=True))
            sid = values["id"]
            root = values.get("directory") or worktrees.get(values.get("project_id", ""))
            session = SessionInfo(id=sid, project_root=root or None,
                                  parent_id=values.get("parent_id") or None,
                                  version=values.get("version") or None)
            _n, last_t, last_id = progress.get(sid)
            time_col = "time_created" if "time_created" in db.tables()["message"] else "0"
            msgs = [(bytes_to_text(mid), _int(t), data) for mid, t, data in db.iter_rows(
                f"SELECT id, {time_col}, data FROM message WHERE session_id = ? "
                f"AND ({time_col} > ? OR ({time_col} = ? AND id > ?))",
                (sid, last_t, last_t, last_id))]

            def parts_of(mid: str) -> list[tuple[str, dict[str, Any]]]:
                if not has_parts:
                    return []
                out: list[tuple[str, dict[str, Any]]] = []
                for pid, pdata in db.iter_rows(
                        "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (mid,)):
                    obj, err = load_json_object(pdata)
                    if obj is None:
                        result.skips.append(Skip(err or "bad_json",
                                                 f"{where}#part:{bytes_to_text(pid)}"))
                        continue
                    out.append((bytes_to_text(pid), obj))
                return out

            emit_session(session, msgs, parts_of, progress, where, result)

