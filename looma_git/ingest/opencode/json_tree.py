"""The legacy OpenCode JSON tree (`storage/session|message|part/...`), read as a fallback to the DB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from looma_git.ingest.base import Cursor, ReadResult, Skip, Source
from looma_git.ingest.ide_common import dump_state, is_dir, list_dir, load_state, read_json_file
from looma_git.ingest.opencode.parts import SessionInfo
from looma_git.ingest.sqlite_ro import ReadOnlyDb, bytes_to_text


def _db_session_ids(storage: Path, busy_timeout: float) -> set[str]:
    """Sessions already migrated into a sibling `opencode*.db` (the DB wins over JSON)."""
    ids: set[str] = set()
    for db_path in list_dir(storage.parent):
        if not (db_path.suffix == ".db" and db_path.name.startswith("opencode")):
            continue
        with ReadOnlyDb(db_path, busy_timeout=busy_timeout) as db:
            if db.has("session", "id"):
                ids.update(bytes_to_text(r[0]) for r in db.rows("SELECT id FROM session"))
    return ids


def _worktree(storage: Path, project_id: str, skips: list[Skip]) -> str | None:
    path = storage / "project" / f"{project_id}.json"
    if not path.is_file():
        return None
    obj = read_json_file(path, skips)
    wt = obj.get("worktree") if obj else None
    return wt if isinstance(wt, str) and wt and wt != "/" else None


def read_storage(source: Source, cursor: Cursor | None, busy_timeout: float) -> ReadResult:
    """Finished messages of every legacy session not present in a database, after `cursor`.

    IDs come from file paths, not from the JSON (OpenCode moved files without rewriting them).
    """
    from looma_git.ingest.opencode import Progress, emit_session

    storage = source.path
    old = cursor or Cursor()
    result = ReadResult(events=[], cursor=old)
    progress = Progress(load_state(old.state).get("s", {}))
    in_db = _db_session_ids(storage, busy_timeout)
    for project_dir in list_dir(storage / "session"):
        if not is_dir(project_dir):
            continue
        for ses_file in list_dir(project_dir):
            if ses_file.suffix != ".json":
                continue
            sid = ses_file.stem
            if sid in in_db:
                result.noise["in_db"] = result.noise.get("in_db", 0) + 1
                continue
            _read_session(storage, project_dir.name, ses_file, progress, result, emit_session)
    result.cursor = Cursor(content_hash="", state=dump_state({"s": progress.sessions}))
    return result


def _read_session(storage: Path, project_id: str, ses_file: Path, progress: Any,
                  result: ReadResult, emit_session: Any) -> None:
    sid = ses_file.stem
    info = read_json_file(ses_file, result.skips) or {}
    directory = info.get("directory")
    root = directory if isinstance(directory, str) and directory else None
    parent = info.get("parentID")
    version = info.get("version")
    session = SessionInfo(id=sid, project_root=root or _worktree(storage, project_id, result.skips),
                          parent_id=parent if isinstance(parent, str) else None,
                          version=version if isinstance(version, str) else None)
    messages: list[tuple[str, int, Any]] = []
    for msg_file in list_dir(storage / "message" / sid):
        if msg_file.suffix != ".json":
            continue
        data = read_json_file(msg_file, result.skips)
        if data is None:
            continue
        time_obj = data.get("time")
        created = time_obj.get("created") if isinstance(time_obj, dict) else None
        t = int(created) if isinstance(created, int | float) and not isinstance(created, bool) \
            else 0
        messages.append((msg_file.stem, t, data))

    def parts_of(mid: str) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        for part_file in list_dir(storage / "part" / mid):
            if part_file.suffix != ".json":
                continue
            obj = read_json_file(part_file, result.skips)
            if obj is not None:
                out.append((part_file.stem, obj))
        return out

    emit_session(session, messages, parts_of, progress, str(ses_file), result)
