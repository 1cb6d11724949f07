"""Small helpers shared by the Cursor, OpenCode and Windsurf adapters (time, tools, state)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from looma_git.ingest.base import DiscoveryEnv, Skip
from looma_git.ingest.sqlite_ro import load_json_object

MAX_TEXT = 200_000  # characters of message text kept per event; tool output is never kept
MAX_RAW = 20_000  # characters of raw native JSON kept per event (bounded provenance)


def iso_from_ms(value: Any) -> str | None:
    """Epoch milliseconds (int/float/numeric string) -> `YYYY-MM-DDTHH:MM:SS.fffZ`, else None."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        ms = float(value)
    except (TypeError, ValueError):
        return None
    if ms != ms or ms <= 0 or ms > 1e14:  # NaN, negative, or beyond year ~5000
        return None
    dt = datetime.fromtimestamp(ms / 1000.0, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def iso_from_any(value: Any) -> str | None:
    """An ISO-8601 string (any offset) or epoch ms -> UTC `...Z`, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return iso_from_ms(value)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return iso_from_ms(int(text))
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def mtime_iso(path: Path) -> str | None:
    """A file's modification time as UTC `...Z` (for formats without timestamps)."""
    try:
        return iso_from_ms(path.stat().st_mtime_ns / 1e6)
    except OSError:
        return None


def file_uri_to_path(uri: Any, platform: str = "linux") -> str | None:
    """`file:///abs/path` (percent-encoded) -> `/abs/path`; `file:///c%3A/x` -> `c:/x`."""
    if not isinstance(uri, str) or not uri.startswith("file://"):
        return None
    parsed = urlparse(uri)
    path = unquote(parsed.path)
    if parsed.netloc and parsed.netloc not in ("", "localhost"):
        path = f"//{parsed.netloc}{path}"  # UNC share
    if len(path) >= 3 and path[0] == "/" and path[2] == ":":
        path = path[1:]  # Windows drive letter
    return path or None


def cursor_slug(path: str) -> str:
    """Cursor's project dir name for an absolute path: separators and dots -> '-', no
    leading dash. Used only to *match* known folders, never decoded (it is lossy)."""
    out = []
    for ch in path:
        out.append(ch if ch.isalnum() or ch in "_" else "-")
    return "".join(out).strip("-")


def cursor_slug_ascii(path: str) -> str:
    """The other spelling seen in the wild: every char outside `[A-Za-z0-9]` (`_` too) -> '-'."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in path).strip("-")


def json_str(value: Any) -> str:
    """Compact JSON for raw_json, bounded: an oversized value becomes a valid JSON stub."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      default=str)
    if len(text) <= MAX_RAW:
        return text
    return json.dumps({"truncated": True, "chars": len(text)})


def load_state(raw: str) -> dict[str, Any]:
    """An adapter's private cursor state, or {} when absent/unreadable."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def dump_state(state: dict[str, Any]) -> str:
    """Adapter state as stable compact JSON."""
    return json.dumps(state, sort_keys=True, separators=(",", ":"))


def clip(text: str) -> str:
    """Message text bounded to MAX_TEXT characters."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT]


def user_config_dir(env: DiscoveryEnv) -> Path:
    """Where VS Code forks keep `<App>/User`: XDG config on Linux, Application Support on
    macOS, %APPDATA% on Windows."""
    if env.platform == "darwin":
        return env.home / "Library" / "Application Support"
    if env.platform.startswith("win"):
        appdata = env.environ.get("APPDATA")
        return Path(appdata) if appdata else env.home / "AppData" / "Roaming"
    return env.xdg("XDG_CONFIG_HOME", ".config")


def is_dir(path: Path) -> bool:
    """`path.is_dir()` that never raises (permission errors, broken links)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def is_file(path: Path) -> bool:
    """`path.is_file()` that never raises."""
    try:
        return path.is_file()
    except OSError:
        return False


def list_dir(path: Path) -> list[Path]:
    """Sorted directory entries, [] when the directory is missing or unreadable."""
    try:
        return sorted(Path(path, name) for name in os.listdir(path))
    except OSError:
        return []


# --- tool classification -------------------------------------------------------------------

_KIND_BY_NAME = {
    # Cursor IDE (toolFormerData.name) and Cursor agent transcripts
    "read_file": "read", "read_file_v2": "read", "read": "read", "readfile": "read",
    "edit_file": "edit", "edit_file_v2": "edit", "search_replace": "edit", "strreplace": "edit",
    "str_replace": "edit", "multiedit": "edit", "multi_edit": "edit", "edit": "edit",
    "apply_patch": "edit", "applypatch": "edit", "patch": "edit", "editnotebook": "edit",
    "edit_notebook": "edit", "delete_file": "edit", "delete": "edit", "reapply": "edit",
    "write": "write", "write_file": "write", "create_file": "write", "writefile": "write",
    "run_terminal_cmd": "shell", "run_terminal_command": "shell",
    "run_terminal_command_v2": "shell", "shell": "shell", "bash": "shell", "terminal": "shell",
    "codebase_search": "search", "grep_search": "search", "grep": "search", "glob": "search",
    "file_search": "search", "list_dir": "search", "ls": "search", "list": "search",
    "glob_file_search": "search", "ripgrep": "search", "rg": "search", "semanticsearch": "search",
    "web_search": "web", "websearch": "web", "webfetch": "web", "web_fetch": "web",
    "fetch": "web", "fetch_rules": "other",
    "task": "task", "agent": "task", "subagent": "task",
}

_PATH_KEYS = ("filePath", "file_path", "target_file", "targetFile", "relativeWorkspacePath",
              "path", "file", "filename", "notebook_path", "target_notebook")


def tool_kind(name: str) -> str:
    """The ToolCall kind of a native tool name (case-insensitive); MCP/unknown -> `other`."""
    return _KIND_BY_NAME.get(name.strip().lower(), "other")


def tool_paths(args: Any) -> tuple[str, ...]:
    """File paths named in a tool's argument object (common key spellings; lists too)."""
    if not isinstance(args, dict):
        return ()
    found: list[str] = []
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip() and len(value) < 4096:
            found.append(value.strip())
    for key in ("paths", "files", "filePaths", "target_files"):
        value = args.get(key)
        if isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str) and v.strip() and len(v) < 4096)
    seen: dict[str, None] = {}
    for p in found:
        seen.setdefault(p, None)
    return tuple(seen)


def tool_command(args: Any) -> str | None:
    """The shell command line in a tool's argument object, if any."""
    if not isinstance(args, dict):
        return None
    for key in ("command", "cmd", "commandLine", "command_line"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None


def exit_code_of(*objs: Any) -> int | None:
    """The first integer exit code found under the usual keys of the given objects."""
    for obj in objs:
        if not isinstance(obj, dict):
            continue
        for key in ("exitCode", "exit_code", "exit", "returncode", "returnCode"):
            value = obj.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lstrip("-").isdigit() and len(value) < 6:
                return int(value)
    return None


def parse_json_maybe(value: Any) -> Any:
    """A JSON-encoded string decoded (objects/lists only), anything else returned as is."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


_PATCH_MARKERS = ("*** Update File:", "*** Add File:", "*** Delete File:", "*** Move to:")


def patch_paths(text: Any) -> tuple[str, ...]:
    """Files named by an apply_patch-style envelope (`*** Update File: path` lines)."""
    if not isinstance(text, str):
        return ()
    found: dict[str, None] = {}
    for line in text.splitlines():
        stripped = line.strip()
        for marker in _PATCH_MARKERS:
            if stripped.startswith(marker):
                path = stripped[len(marker):].strip()
                if path:
                    found.setdefault(path, None)
    return tuple(found)


MAX_JSON_BYTES = 16 * 1024 * 1024


def read_json_file(path: Path, skips: list[Skip]) -> dict[str, Any] | None:
    """One JSON object file, or None with a Skip (too large, unreadable, bad JSON, not object)."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            skips.append(Skip("too_large", str(path)))
            return None
        raw = path.read_bytes()
    except OSError:
        skips.append(Skip("unreadable", str(path)))
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        skips.append(Skip("invalid_utf8", str(path)))
    obj, err = load_json_object(raw)
    if obj is None:
        skips.append(Skip(err or "bad_json", str(path)))
    return obj
