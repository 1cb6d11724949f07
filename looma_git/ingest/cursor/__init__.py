"""The Cursor adapter: discovery of every Cursor store and dispatch to the right reader."""

from __future__ import annotations

import hashlib
from pathlib import Path

from looma_git.ingest.base import Cursor, DiscoveryEnv, ReadResult, Skip, Source
from looma_git.ingest.ide_common import (
    cursor_slug,
    is_dir,
    is_file,
    list_dir,
    read_json_file,
    user_config_dir,
)
from looma_git.ingest.sqlite_ro import DEFAULT_BUSY_TIMEOUT

NAME = "cursor"


def cursor_user_dir(env: DiscoveryEnv) -> Path:
    """`<config>/Cursor/User` for the platform (XDG_CONFIG_HOME / Application Support / APPDATA)."""
    return user_config_dir(env) / "Cursor" / "User"


def _user_dir_sources(user: Path) -> list[Source]:
    found: list[Source] = []
    gdb = user / "globalStorage" / "state.vscdb"
    if is_file(gdb):
        found.append(Source(NAME, gdb, "sqlite", "global"))
    for ws in list_dir(user / "workspaceStorage"):
        if is_file(ws / "state.vscdb"):
            found.append(Source(NAME, ws / "state.vscdb", "sqlite", "workspace"))
    return found


def _transcript_sources(transcripts: Path) -> list[Source]:
    found: list[Source] = []
    for entry in list_dir(transcripts):
        if entry.suffix == ".jsonl" and is_file(entry):
            found.append(Source(NAME, entry, "jsonl"))
        elif entry.suffix == ".txt" and is_file(entry):
            found.append(Source(NAME, entry, "text"))
        elif is_dir(entry):
            nested = entry / f"{entry.name}.jsonl"
            if is_file(nested):
                found.append(Source(NAME, nested, "jsonl"))
            for sub in list_dir(entry / "subagents"):
                if sub.suffix == ".jsonl" and is_file(sub):
                    found.append(Source(NAME, sub, "jsonl"))
    return found


def _dot_cursor_sources(dot: Path) -> list[Source]:
    found: list[Source] = []
    for project in list_dir(dot / "projects"):
        found.extend(_transcript_sources(project / "agent-transcripts"))
    for hash_dir in list_dir(dot / "chats"):
        for chat in list_dir(hash_dir):
            if is_file(chat / "store.db"):
                found.append(Source(NAME, chat / "store.db", "sqlite", "chat"))
    return found


def _override_sources(path: Path) -> list[Source]:
    """An explicit `--source cursor=PATH`: a file of a known kind or a directory to scan."""
    if is_file(path):
        if path.suffix == ".jsonl":
            return [Source(NAME, path, "jsonl")]
        if path.suffix == ".txt":
            return [Source(NAME, path, "text")]
        if path.name == "store.db":
            return [Source(NAME, path, "sqlite", "chat")]
        if path.suffix == ".vscdb":
            key = "workspace" if path.parent.parent.name == "workspaceStorage" else "global"
            return [Source(NAME, path, "sqlite", key)]
        return []
    if path.name == "agent-transcripts":
        return _transcript_sources(path)
    found = _user_dir_sources(path) + _dot_cursor_sources(path)
    if is_dir(path / "User"):
        found += _user_dir_sources(path / "User")
    return found


def known_roots(user_dirs: list[Path], dot_cursor: Path) -> dict[str, str]:
    """Folders Cursor itself recorded (workspace.json folders, CLI chat meta.json cwd), keyed
    by their project slug and by md5 of the path: how transcript/chat dirs are matched."""
    skips: list[Skip] = []
    folders: set[str] = set()
    from looma_git.ingest.cursor.sqlite import workspace_folder

    for user in user_dirs:
        for ws in list_dir(user / "workspaceStorage"):
            folder = workspace_folder(ws, skips)
            if folder:
                folders.add(folder)
    for hash_dir in list_dir(dot_cursor / "chats"):
        for chat in list_dir(hash_dir):
            if is_file(chat / "meta.json"):
                meta = read_json_file(chat / "meta.json", skips) or {}
                if isinstance(meta.get("cwd"), str) and meta["cwd"]:
                    folders.add(meta["cwd"])
    roots: dict[str, str] = {}
    for folder in sorted(folders):
        trimmed = folder.rstrip("/\\") or folder
        for key in (cursor_slug(trimmed), hashlib.md5(trimmed.encode()).hexdigest()):
            roots.setdefault(key, trimmed)
    return roots


def _home_of(path: Path) -> Path | None:
    for parent in path.parents:
        if parent.name == ".cursor":
            return parent.parent
    return None


class CursorAdapter:
    """Cursor IDE composers (global state.vscdb), legacy workspace chats, agent transcripts and
    `cursor-agent` CLI chats."""

    name = NAME

    def __init__(self, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.busy_timeout = busy_timeout
        self._roots: dict[str, str] | None = None

    def discover(self, env: DiscoveryEnv) -> list[Source]:
        """Every Cursor store under `env` (or under the `--source cursor=PATH` overrides)."""
        overrides = env.overrides.get(NAME)
        user = cursor_user_dir(env)
        dot = env.home / ".cursor"
        if overrides:
            found: list[Source] = []
            for path in overrides:
                found.extend(_override_sources(path))
            users = [p for p in overrides if is_dir(p / "workspaceStorage")]
            users += [p / "User" for p in overrides if is_dir(p / "User" / "workspaceStorage")]
            self._roots = known_roots([*users, user], dot)
            return found
        self._roots = known_roots([user], dot)
        return _user_dir_sources(user) + _dot_cursor_sources(dot)

    def _roots_for(self, path: Path) -> dict[str, str]:
        if self._roots is not None:
            return self._roots
        # read() without discover(): look where Cursor keeps folders on any platform.
        home = _home_of(path)
        if home is None:
            return {}
        users = [home / ".config" / "Cursor" / "User",
                 home / "Library" / "Application Support" / "Cursor" / "User",
                 home / "AppData" / "Roaming" / "Cursor" / "User"]
        self._roots = known_roots(users, home / ".cursor")
        return self._roots

    def read(self, source: Source, cursor: Cursor | None) -> ReadResult:
        """Events after `cursor` from one Cursor store; bad data becomes Skips."""
        if source.kind == "jsonl" or source.kind == "text":
            from looma_git.ingest.cursor.transcripts import origin_of, read_jsonl, read_txt

            origin = origin_of(source.path, self._roots_for(source.path))
            if source.kind == "jsonl":
                return read_jsonl(source.path, cursor, origin)
            return read_txt(source.path, cursor, origin)
        if source.key == "chat":
            from looma_git.ingest.cursor.chats import read_chat

            return read_chat(source.path, cursor, self._roots_for(source.path),
                             self.busy_timeout)
        from looma_git.ingest.cursor.sqlite import read_global, read_workspace

        if source.key == "workspace":
            return read_workspace(source.path, cursor, self.busy_timeout)
        return read_global(source.path, cursor, self.busy_timeout)
