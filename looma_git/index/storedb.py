"""The local store.db connection (stdlib sqlite3, WAL) and applying index/schema.py's migrations."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from looma_git.errors import InvalidDataError, ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.index import schema

# The connection type the layers above annotate with (they never import sqlite3 themselves).
Connection = sqlite3.Connection

SCHEMA_VERSION = "1"  # the meta row older loomas wrote; the migrations table supersedes it
BUSY_TIMEOUT_MS = 10_000
NEWER_HINT = ("upgrade looma to the version that wrote it, or run `looma reindex`: it sets "
              "this store.db aside and rebuilds the local cache with this version")


_MAGIC = b"SQLite format 3\x00"


def damage(db: Path) -> str | None:
    """Why `db` cannot be a whole SQLite database (not SQLite, or shorter than the page count
    its header records: truncated), or None. Reads 100 bytes; no SQL."""
    try:
        size = db.stat().st_size
        if size == 0:
            return None  # created, never written: SQLite starts it afresh
        with db.open("rb") as fh:
            head = fh.read(100)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read {db}: {exc.strerror or exc}"
    if not head.startswith(_MAGIC):
        return f"{db} is corrupt (not an SQLite database)"
    if len(head) < 100:
        return f"{db} is truncated ({size} bytes)"
    # While the WAL holds frames another connection may be checkpointing them: SQLite copies
    # them in page order, so page 1 (this header, with the new page count) lands before the
    # pages that extend the file. A healthy store then looked truncated in ~4% of checks
    # beside a writer, and a writable open moved it aside under that writer ("disk I/O
    # error"). The last connection to close empties the WAL once the file is whole; a store
    # truly cut short with frames beside it fails in SQLite itself (cli/main._known_failure).
    if _frames(db.with_name(db.name + "-wal")):
        return None
    # The size as it is now, after the header was read and the WAL found empty: a checkpoint
    # that wrote this header had finished extending the file before it emptied the WAL.
    try:
        size = db.stat().st_size
    except OSError:
        return None
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the header's page count is current
    if valid and pages and size < pages * page_size:
        return f"{db} is truncated ({size} of {pages * page_size} bytes)"
    return None


def _frames(wal: Path) -> bool:
    try:
        return wal.stat().st_size > 0
    except OSError:
        return False


def set_aside(db: Path) -> Path:
    """Move a damaged store.db (and its -wal/-shm) aside, kept for inspection; returns where.
    store.db is a cache of the refs and the transcripts, so a new one is rebuilt from them."""
    import time

    dest = db.with_name(f"{db.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        src = db.with_name(db.name + suffix)
        if src.exists():
            os.replace(src, dest.with_name(dest.name + suffix))
    return dest


def check_integrity(paths: RepoPaths) -> str | None:
    """`looma reindex`'s deeper check: damage(), SQLite's own `PRAGMA quick_check` and
    migrations this version does not know; sets such a store aside (a new one is built) and
    returns what was wrong, or None."""
    db = paths.store_db
    problem = damage(db)
    if problem is None and db.exists() and db.stat().st_size:
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                row = conn.execute("PRAGMA quick_check(1)").fetchone()
                names = applied(conn)
            finally:
                conn.close()
            if row is None or row[0] != "ok":
                problem = f"{db} is damaged ({row[0] if row else 'no answer'})"
            else:  # a store a newer looma wrote: set aside too, this version rebuilds its own
                problem = _newer_problem(db, names)
        except sqlite3.DatabaseError as exc:
            problem = f"{db} is damaged ({exc})"
    if problem:
        try:
            set_aside(db)
        except OSError as exc:
            raise ReadOnlyError(f"{problem}, and it cannot be moved aside: {exc}") from exc
    return problem


def connect(paths: RepoPaths, *, readonly: bool = False) -> sqlite3.Connection:
    """Open `<git-common-dir>/looma/store.db` (creating the state dir and meta table when writable).

    WAL journal, synchronous=NORMAL, busy_timeout, rows as sqlite3.Row. A read-only connection
    never creates anything; it fails with InvalidDataError when the store does not exist yet
    or is damaged. A writable one sets a damaged (truncated, not SQLite) store aside and
    starts a new one: it is a cache, rebuilt from the refs and the transcripts.
    """
    db = paths.store_db
    problem = damage(db)
    if readonly:
        if not db.exists():
            raise InvalidDataError(f"no looma store at {db}", hint="run `looma ingest` first")
        if problem:
            raise InvalidDataError(problem, hint="run `looma reindex`: it rebuilds the local "
                                                 "cache from the refs (and re-reads transcripts)")
        conn = _open(f"file:{db}?mode=ro", uri=True)
        try:
            refuse_newer(conn, db)
        except InvalidDataError:
            conn.close()
            raise
    else:
        if problem:
            try:
                set_aside(db)
            except OSError as exc:
                raise ReadOnlyError(f"{problem}, and it cannot be moved aside: {exc}") from exc
        try:
            paths.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ReadOnlyError(f"cannot create {paths.state_dir}: {exc}") from exc
        conn = _open(str(db))
        try:
            _wal(conn)
            migrate(conn, db)
            # A write on every writable open, as before migrations: a store that cannot be
            # written fails here as ReadOnlyError, not at the caller's first write.
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?)",
                         (SCHEMA_VERSION,))
        except InvalidDataError:
            conn.close()
            raise
        except sqlite3.OperationalError as exc:
            conn.close()
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise ReadOnlyError(f"{db} is not writable: {exc}") from exc
            # (SQLite's extended code names which I/O failed: "disk I/O error" alone does not)
            code = getattr(exc, "sqlite_errorname", None)
            raise InvalidDataError(f"cannot use {db}: {exc}" + (f" ({code})" if code else "")
                                   ) from exc
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise InvalidDataError(f"{db} is not a usable SQLite database: {exc}",
                                   hint="delete it and run `looma reindex`") from exc
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One transaction around these writes (committed, or rolled back on an error). A store
    connection is in autocommit mode (`isolation_level=None`), where `with conn:` begins
    none: each row written is then a transaction of its own (~10x the CPU of a batch: a cold
    store's ~50,000 content keys cost ~4 CPU-s). Inside an open transaction: part of it.

    It takes the write lock when it begins (waiting up to the busy timeout for another
    writer), not at its first write: a transaction that read first holds a snapshot, and
    once another process committed after that snapshot SQLite refuses the upgrade at once
    ("database is locked", no busy wait). A cold ingest's settling pass read its rows while
    the message index beside it stored its mark, and failed so in ~1 of 6 runs (exit 70)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _wal(conn: sqlite3.Connection) -> None:
    """Put the store in WAL mode (persistent in the file: usually already so). Switching the
    journal mode is one of the few statements SQLite does not retry under busy_timeout, so
    two first opens of a new store at once (a hook's drain and an ingest) would see
    "database is locked": retry it here for as long as the busy timeout."""
    import time

    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.002
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _open(target: str, *, uri: bool = False) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(target, uri=uri, timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise InvalidDataError(f"cannot open {target}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=OFF")
    return conn


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Every table of store.db exists (a writable `connect` already saw to it; kept for the
    callers that open a connection some other way, e.g. tests on `:memory:`)."""
    migrate(conn)


def applied(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations this store has seen, in the order applied (empty: a store from
    before named migrations, or a new one)."""
    try:
        rows = conn.execute("SELECT name FROM migrations ORDER BY seq").fetchall()
    except sqlite3.OperationalError:  # no migrations table
        return []
    return [str(r[0]) for r in rows]


def _newer_problem(db: Path | str, names: list[str]) -> str | None:
    known = {m.name for m in schema.MIGRATIONS}
    unknown = [n for n in names if n not in known]
    if not unknown:
        return None
    return (f"{db} was written by a newer looma: it has store.db migrations this version does "
            f"not know ({', '.join(unknown)})")


def refuse_newer(conn: sqlite3.Connection, db: Path | str = "store.db") -> list[str]:
    """The applied migration names; InvalidDataError when one of them is not in this
    version's schema.MIGRATIONS (a newer looma wrote the store)."""
    names = applied(conn)
    problem = _newer_problem(db, names)
    if problem:
        raise InvalidDataError(problem, hint=NEWER_HINT)
    return names


def _statements(sql: str) -> list[str]:
    """`sql` split into whole statements (executescript would commit the open transaction);
    a `;` inside a string literal does not end one (sqlite3.complete_statement decides)."""
    out, start = [], 0
    for i, ch in enumerate(sql):
        if ch == ";" and sqlite3.complete_statement(sql[start:i + 1]):
            stmt = sql[start:i + 1].strip()
            if stmt != ";":
                out.append(stmt)
            start = i + 1
    rest = sql[start:].strip()
    if rest:
        out.append(rest)
    return out


def migrate(conn: sqlite3.Connection, db: Path | str = "store.db") -> list[str]:
    """Apply the migrations this store has not seen, in order, each recorded in `migrations`
    in the same transaction; returns the names applied now (usually none: one SELECT).

    A store from before named migrations has no `migrations` table: every step runs, and the
    early ones are written to leave its tables and rows as they are. Concurrent openers
    serialise on the write lock and re-read what is applied once they hold it."""
    import time

    done = set(refuse_newer(conn, db))
    if all(m.name in done for m in schema.MIGRATIONS):
        return []
    if conn.in_transaction:  # as executescript did when this was one script
        conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(schema.MIGRATIONS_TABLE)
        done = set(refuse_newer(conn, db))  # another process may have migrated meanwhile
        now = int(time.time())
        ran = []
        for seq, m in enumerate(schema.MIGRATIONS, 1):
            if m.name in done:
                continue
            for stmt in _statements(m.sql):
                conn.execute(stmt)
            if m.run is not None:
                m.run(conn)
            conn.execute("INSERT INTO migrations(name, seq, applied_at) VALUES(?, ?, ?)",
                         (m.name, seq, now))
            ran.append(m.name)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return ran


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """One value of the meta table (None when absent)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set one meta value (the caller owns the transaction)."""
    conn.execute("INSERT INTO meta(key, value) VALUES(?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (key, value))


def store_path(paths: RepoPaths) -> Path:
    """Where store.db lives for this clone (shared by all worktrees)."""
    return paths.store_db
