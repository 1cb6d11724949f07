"""Read-only access to other programs' live SQLite databases (Cursor, OpenCode, Windsurf)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from looma_git.ingest.base import Skip

# The owning app (Cursor, OpenCode) may hold a write transaction; a reader in WAL mode is not
# blocked by it, but a rollback-journal writer or an EXCLUSIVE lock blocks us. We wait a little,
# then give up with a Skip("locked") and try again on the next ingest.
DEFAULT_BUSY_TIMEOUT = 2.0

_LOCKED_MARKERS = ("locked", "busy")
_CORRUPT_MARKERS = ("not a database", "malformed", "corrupt", "disk image", "file is encrypted")


def classify_error(exc: BaseException) -> str:
    """Map a sqlite3 error to a Skip reason: `locked`, `corrupt_db` or `unreadable`."""
    msg = str(exc).lower()
    if any(m in msg for m in _LOCKED_MARKERS):
        return "locked"
    if any(m in msg for m in _CORRUPT_MARKERS):
        return "corrupt_db"
    return "unreadable"


def _uri(path: Path) -> str:
    # `immutable=0`: the file may change under us (never trust it to be frozen); `mode=ro`: no
    # write can ever reach the app's database. Percent-escape what URIs treat specially.
    quoted = str(path.resolve()).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{quoted}?mode=ro&immutable=0"


class ReadOnlyDb:
    """One read-only connection holding one read snapshot; failures become `self.skip`.

    Every query method returns an empty result instead of raising once the database proved
    locked or corrupt; callers check `ok` / `skip` to report it.
    """

    def __init__(self, path: Path, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = path
        self.skip: Skip | None = None
        self._conn: sqlite3.Connection | None = None
        self._tables: dict[str, set[str]] | None = None
        try:
            conn = sqlite3.connect(_uri(path), uri=True, timeout=busy_timeout,
                                   isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            self.skip = Skip(classify_error(exc), str(path))
            return
        # Values are decoded by us (bytes_to_text): Cursor stores JSON as BLOB or TEXT and a
        # TEXT cell with invalid UTF-8 must not abort the whole query.
        conn.text_factory = bytes
        self._conn = conn
        try:
            # One snapshot for the whole read: rows of different tables agree with each other.
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            self._fail(exc)

    @property
    def ok(self) -> bool:
        return self._conn is not None and self.skip is None

    def _fail(self, exc: BaseException) -> None:
        if self.skip is None:
            self.skip = Skip(classify_error(exc), str(self.path))
        self.close()

    def close(self) -> None:
        """End the snapshot and close; safe to call twice."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def __enter__(self) -> ReadOnlyDb:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tables(self) -> dict[str, set[str]]:
        """Table name -> column names, from sqlite_master (empty when unreadable)."""
        if self._tables is not None:
            return self._tables
        found: dict[str, set[str]] = {}
        for row in self.rows("SELECT name FROM sqlite_master WHERE type = 'table'"):
            name = bytes_to_text(row[0])
            cols = self.rows(f'PRAGMA table_info("{name.replace(chr(34), "")}")')
            found[name] = {bytes_to_text(c[1]) for c in cols}
        if self.ok:
            self._tables = found
        return found

    def has(self, table: str, *columns: str) -> bool:
        """Whether `table` exists with all of `columns`."""
        cols = self.tables().get(table)
        return cols is not None and all(c in cols for c in columns)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """All rows of a query, or [] once the database failed (the failure is in `skip`)."""
        return list(self.iter_rows(sql, params))

    def iter_rows(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        """Rows one at a time (Cursor values can be many MB each); stops on failure."""
        if not self.ok or self._conn is None:
            return
        try:
            cur = self._conn.execute(sql, params)
            while True:
                row = cur.fetchone()
                if row is None:
                    return
                yield row
        except sqlite3.Error as exc:
            self._fail(exc)


def bytes_to_text(value: Any) -> str:
    """A cell as text: bytes decoded as UTF-8 (bad bytes replaced), None as ''."""
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def load_json_object(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A cell holding a JSON object -> (obj, None), else (None, reason) with reason one of
    `bad_json`, `not_object`, `too_deep`, `empty`."""
    text = bytes_to_text(value).strip()
    if not text:
        return None, "empty"
    try:
        obj = json.loads(text)
    except RecursionError:
        return None, "too_deep"
    except ValueError:
        return None, "bad_json"
    if not isinstance(obj, dict):
        return None, "not_object"
    return obj, None


def file_signature(path: Path) -> str:
    """A cheap fingerprint of a live database: size and mtime of the file, its -wal and -shm.

    Any committed write changes the main file or the WAL, so an unchanged signature means
    there is nothing new to read.
    """
    parts: list[str] = []
    for suffix in ("", "-wal"):
        try:
            st = Path(str(path) + suffix).stat()
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
