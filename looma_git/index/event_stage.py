"""One source's event rows staged in a small SQLite image, for the store to copy in C."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

# The attached schema the store copies staged rows from (index/event_writer.write_batch).
SCHEMA = "looma_stage"

# The columns of EventRow a staged row keeps (events' columns but ingested_at), and of its
# tool rows. No declared types: a value keeps its Python type (no affinity) until the insert
# into the store applies that table's, exactly as binding it there would.
EVENT_COLS = ("event_id, agent, session_id, seq, ts, role, model, branch, text, raw_json,"
              " schema_version, extra, content_sig, raw_ref")
TOOL_COLS = "event_id, idx, name, kind, command, exit_code, is_error, test_outcome"
FILE_COLS = "event_id, idx, raw_path, relpath, op"
# The written_lines and written_seen rows (index/written.py) of the rows' edit events, but
# the time they are stored (written_seen.ingested_at).
LINE_COLS = "h, file, session, ts, event_id"
SEEN_COLS = "event_id, session, n"
_DDL = (f"CREATE TABLE ev({EVENT_COLS});"
        f"CREATE TABLE tc({TOOL_COLS});"
        f"CREATE TABLE tf({FILE_COLS});"
        f"CREATE TABLE wl({LINE_COLS});"
        f"CREATE TABLE ws({SEEN_COLS})")
_N_EVENT, _N_TOOL, _N_FILE = 14, 8, 5
_ID, _AGENT, _SESSION, _TOOLS, _FILES = 0, 1, 2, 14, 15


class Staged(NamedTuple):
    """A source's rows as an SQLite image (`sqlite3.Connection.serialize`), deduplicated as
    write_batch deduplicates them, with what write_batch needs to know without reading it."""

    image: bytes
    rows: int  # rows before deduplication (what a transaction's size is counted in)
    n: int  # distinct event ids: the rows of `ev`
    sessions: frozenset[tuple[str, str]]  # (agent, session_id) of the rows
    withdrawn: tuple[str, ...]  # ids the rows supersede or retract (not among their own)
    written: int = 0  # rows of `ws`: edit events keyed (index/written.keyed_at_read)


# Python's sqlite3 has serialize/deserialize only where SQLite was built with them (the
# default since 3.36): elsewhere readers ship their rows pickled, as before.
AVAILABLE = hasattr(sqlite3.Connection, "serialize") and hasattr(sqlite3.Connection,
                                                                 "deserialize")

# Per process: a forked reader must not use a connection its parent opened.
_CONN: list[tuple[int, sqlite3.Connection, bytes]] = []


def _conn() -> tuple[sqlite3.Connection, bytes]:
    pid = os.getpid()
    if _CONN and _CONN[0][0] == pid:
        return _CONN[0][1], _CONN[0][2]
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(_DDL)
    empty = conn.serialize()  # what each source starts from: three empty tables
    _CONN[:] = [(pid, conn, empty)]
    return conn, empty


def stage(rows: Sequence[Sequence[Any]], withdrawn: set[str],
          written: dict[str, Any] | None = None) -> Staged:
    """`rows` (EventRows or their tuples) in write_batch's order: the last occurrence of an
    id wins, in the place of its first. `withdrawn`: event_writer.withdrawn_of(rows).
    `written`: index/written.keyed_at_read(rows), staged as written.store_read stores it
    when every id is new."""
    by_id = {r[_ID]: r for r in rows}
    kept = list(by_id.values())
    conn, empty = _conn()
    conn.execute("BEGIN")
    conn.executemany(f"INSERT INTO ev VALUES({','.join('?' * _N_EVENT)})",
                     [r[:_N_EVENT] for r in kept])
    conn.executemany(f"INSERT INTO tc VALUES({','.join('?' * _N_TOOL)})",
                     [(r[_ID], *t) for r in kept if r[_TOOLS] for t in r[_TOOLS]])
    conn.executemany(f"INSERT INTO tf VALUES({','.join('?' * _N_FILE)})",
                     [(r[_ID], *f) for r in kept if r[_FILES] for f in r[_FILES]])
    if written:
        conn.executemany("INSERT INTO wl VALUES(?,?,?,?,?)",
                         [(k, f, w[0], w[1], e) for e, w in written.items() for k in w[2]
                          for f in w[3]])
        conn.executemany("INSERT INTO ws VALUES(?,?,?)",
                         [(e, w[0], len(w[2])) for e, w in written.items()])
    conn.execute("COMMIT")
    image = conn.serialize()
    conn.deserialize(empty)
    return Staged(image, len(rows), len(kept), frozenset((r[_AGENT], r[_SESSION]) for r in kept),
                  tuple(sorted(withdrawn - by_id.keys())), len(written or ()))


def attach(conn: sqlite3.Connection) -> None:
    """Give the store's connection the schema staged images are loaded into."""
    names = {row[1] for row in conn.execute("PRAGMA database_list")}
    if SCHEMA not in names:
        conn.execute(f"ATTACH ':memory:' AS {SCHEMA}")


def load(conn: sqlite3.Connection, staged: Staged) -> None:
    """Make `staged` the content of the attached schema."""
    conn.deserialize(staged.image, name=SCHEMA)


def rows_of(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """The loaded image's rows as write_batch takes them (EventRow's field order)."""
    tools: dict[str, list[tuple[Any, ...]]] = {}
    for r in conn.execute(f"SELECT {TOOL_COLS} FROM {SCHEMA}.tc ORDER BY rowid"):
        tools.setdefault(r[0], []).append(tuple(r)[1:])
    files: dict[str, list[tuple[Any, ...]]] = {}
    for r in conn.execute(f"SELECT {FILE_COLS} FROM {SCHEMA}.tf ORDER BY rowid"):
        files.setdefault(r[0], []).append(tuple(r)[1:])
    return [(*r, tuple(tools.get(r[0], ())), tuple(files.get(r[0], ())))
            for r in conn.execute(f"SELECT {EVENT_COLS} FROM {SCHEMA}.ev ORDER BY rowid")]


def written_of(conn: sqlite3.Connection) -> dict[str, Any]:
    """The loaded image's `written` (index/written.keyed_at_read's form) as staged: the keys
    and files of each event from its line rows (keys x files, in that order). An event that
    wrote no line gets no time and a placeholder file: neither is stored without a line."""
    lines: dict[str, list[tuple[Any, ...]]] = {}
    for r in conn.execute(f"SELECT {LINE_COLS} FROM {SCHEMA}.wl ORDER BY rowid"):
        lines.setdefault(r[4], []).append(r)
    out: dict[str, Any] = {}
    for eid, session, n in conn.execute(f"SELECT {SEEN_COLS} FROM {SCHEMA}.ws ORDER BY rowid"):
        got = lines.get(eid, [])
        if not n or not got:
            out[eid] = (session, 0.0, (), ("",))
            continue
        per = len(got) // n
        out[eid] = (session, got[0][3], tuple(got[i * per][0] for i in range(n)),
                    tuple(g[1] for g in got[:per]))
    return out
