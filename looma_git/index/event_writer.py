"""Writing one source's ingested batch (events, tool rows, sessions, cursor) in one transaction."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from looma_git.index import event_stage


class EventRow(NamedTuple):
    """One event ready for storage: already filtered, attributed and redacted.

    A NamedTuple rather than a frozen dataclass: ingest builds one per event and ships them
    from reader processes, and tuples construct and unpickle several times faster.
    `write_batch` reads rows by position (the `_ID`.. constants below), so a plain tuple in
    this field order is as good as an EventRow there: rows shipped from a reader process are
    stored as the tuples they unpickle to, without one more object per event. The first
    `_INSERTED` fields are the events table's columns in the order of `_INSERT`.
    """

    event_id: str
    agent: str
    session_id: str
    seq: int
    ts: str | None
    role: str
    model: str | None
    branch: str | None
    text: str
    raw_json: str
    schema_version: str
    extra: str | None
    content_sig: str
    raw_ref: str | None = None  # the raw record by reference (`raw_ref()`); raw_json is "" then
    tools: tuple[tuple[int, str, str, str | None, int | None, int, str | None], ...] = ()
    files: tuple[tuple[int, str, str | None, str], ...] = ()  # (idx, raw_path, relpath, op)


# What write_batch stores: an EventRow, or the plain tuple of its fields (shipped rows).
Row = EventRow | tuple[Any, ...]
# Positions of the fields write_batch reads (EventRow's order).
_ID, _AGENT, _SESSION, _TS, _ROLE, _MODEL, _BRANCH = 0, 1, 2, 4, 5, 6, 7
_TEXT, _RAW, _SCHEMA, _EXT, _SIG, _REF, _TOOLS, _FILES = 8, 9, 10, 11, 12, 13, 14, 15
_INSERTED = 14
_INSERT = ("INSERT OR IGNORE INTO events(event_id, agent, session_id, seq, ts, role, model,"
           " branch, text, raw_json, schema_version, extra, content_sig, raw_ref, ingested_at)"
           " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,%d)")
# The same rows from a staged image (index/event_stage), in the order they were staged.
_INSERT_STAGED = (f"INSERT OR IGNORE INTO events({event_stage.EVENT_COLS}, ingested_at)"
                  f" SELECT {event_stage.EVENT_COLS}, %d FROM {event_stage.SCHEMA}.ev"
                  " ORDER BY rowid")
_INSERT_STAGED_TOOLS = (f"INSERT OR REPLACE INTO tool_calls({event_stage.TOOL_COLS})"
                        f" SELECT {event_stage.TOOL_COLS} FROM {event_stage.SCHEMA}.tc"
                        " ORDER BY rowid")
_INSERT_STAGED_FILES = (f"INSERT INTO tool_files({event_stage.FILE_COLS})"
                        f" SELECT {event_stage.FILE_COLS} FROM {event_stage.SCHEMA}.tf"
                        " ORDER BY rowid")


@dataclass(frozen=True)
class SessionUpsert:
    """Facts about one session seen in a batch; aggregates are recomputed from events."""

    agent: str
    session_id: str
    project_root: str | None
    git_remote: str | None
    git_branch: str | None
    source_path: str
    parent_session: str | None
    is_subagent: bool


@dataclass(frozen=True)
class CursorRow:
    """The persisted cursor of one source."""

    source_id: str
    agent: str
    path: str
    offset: int
    head_fp: str
    content_hash: str
    state: str
    size: int | None
    mtime_ns: int | None


@dataclass
class WriteResult:
    """What a batch write changed."""

    added: int = 0
    updated: int = 0
    sessions_with_new: set[tuple[str, str]] = field(default_factory=set)


def _chunks(items: Sequence[str], n: int = 500) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def existing_sigs(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, str | None]:
    """content_sig of the events among `ids` that are already stored."""
    out: dict[str, str | None] = {}
    for chunk in _chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
                f"SELECT event_id, content_sig FROM events WHERE event_id IN ({marks})", chunk):
            out[row[0]] = row[1]
    return out


def _stored_before(conn: sqlite3.Connection, ids: Sequence[str], top: int
                   ) -> dict[str, str | None]:
    """content_sig of the events among `ids` whose rows existed before an insert that only
    added rowids above `top`."""
    out: dict[str, str | None] = {}
    for chunk in _chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT event_id, content_sig, rowid FROM events"
                                f" WHERE event_id IN ({marks})", chunk):
            if row[2] <= top:
                out[row[0]] = row[1]
    return out


def write_batch(conn: sqlite3.Connection, rows: Sequence[Sequence[Any]],
                sessions: list[SessionUpsert], cursor: CursorRow, counts: list[tuple[int, str, str, int]],
                now: int, *, own_transaction: bool = True,
                staged: event_stage.Staged | None = None,
                written: dict[str, Any] | None = None) -> WriteResult:
    """Store a source's events and its new cursor atomically (BEGIN IMMEDIATE ... COMMIT).

    With `own_transaction=False` the caller has already begun a transaction and commits it
    (several sources per commit); events and cursors still land together or not at all.

    New ids are inserted, ids whose content_sig changed (a streaming reply completed in a later
    run) are updated with their tool rows replaced, unchanged ids are left alone. `rows` are
    EventRows or plain tuples in EventRow's field order. `staged` (then `rows` is empty): the
    rows as a reader process staged them (index/event_stage, the schema attached with
    event_stage.attach); copied by SQLite itself when every id is new, the common case.
    `written`: the reader's line keys of the rows' edit events (index/written.keyed_at_read),
    stored for the events inserted or updated here (then `update_written` has nothing left);
    or staged with the rows (`staged.written`, then `written` is None).
    """
    res = WriteResult()
    if own_transaction:
        conn.execute("BEGIN IMMEDIATE")
    try:
        # Insert every id not stored yet in one statement; only when some were already there
        # (a re-read, a replayed continuation file) is it worth asking which. New rows get
        # rowids above the largest one before this insert (no AUTOINCREMENT, and this
        # transaction holds the write lock), which is how they are told from the old ones.
        top = conn.execute("SELECT max(rowid) FROM events").fetchone()[0] or 0
        touched: set[tuple[str, str]] | None = None
        changed: Iterable[str] | None = None
        if staged is not None:
            touched = _write_staged(conn, staged, now)
            if touched is None:  # some ids were stored before: sorted out row by row below
                rows = event_stage.rows_of(conn)
                if staged.written:
                    written = event_stage.written_of(conn)
            else:
                res.added = staged.n
                res.sessions_with_new = set(touched)
                changed = list(written or ())  # every id was new
                if staged.written:  # and so every staged key is stored
                    from looma_git.index.written import store_staged

                    store_staged(conn, now)
        if touched is None:
            touched, changed = _write_rows(conn, rows, now, top, res)
        if written:
            from looma_git.index.written import store_read

            store_read(conn, written, changed or (), now)
        _write_rest(conn, sessions, touched, cursor, counts, now)
        if own_transaction:
            conn.execute("COMMIT")
    except BaseException:
        if own_transaction:
            conn.execute("ROLLBACK")
        raise
    return res


def _write_staged(conn: sqlite3.Connection, staged: event_stage.Staged, now: int
                  ) -> set[tuple[str, str]] | None:
    """Insert a staged batch; its sessions when every id was new (then it is all written
    but sessions and cursor), None when some were stored before (nothing but the new events
    is written then)."""
    event_stage.load(conn, staged)
    before = conn.total_changes
    conn.execute(_INSERT_STAGED % int(now))
    if conn.total_changes - before != staged.n:
        return None
    # What _write_rows does when every row is an insert, in the same order.
    _delete_withdrawn(conn, staged.withdrawn)
    conn.execute(_INSERT_STAGED_TOOLS)
    conn.execute(_INSERT_STAGED_FILES)
    return set(staged.sessions)


def _write_rows(conn: sqlite3.Connection, rows: Sequence[Sequence[Any]], now: int, top: int,
                res: WriteResult) -> tuple[set[tuple[str, str]], list[str]]:
    """Insert or update the events of `rows` with their tool rows; the sessions touched and
    the ids inserted or updated."""
    # Last occurrence of an id in the batch wins (a merged reply re-emitted later).
    by_id: dict[str, Sequence[Any]] = {r[_ID]: r for r in rows}
    before = conn.total_changes
    # The columns are a prefix of the row; `now` is an int, written into the statement.
    conn.executemany(_INSERT % int(now), [r[:_INSERTED] for r in by_id.values()])
    if conn.total_changes - before == len(by_id):
        inserts, updates = list(by_id.values()), []
    else:
        have = _stored_before(conn, list(by_id), top)
        inserts = [r for r in by_id.values() if r[_ID] not in have]
        updates = [r for r in by_id.values()
                   if r[_ID] in have and have[r[_ID]] != r[_SIG]]
    if updates:
        conn.executemany(
            "UPDATE events SET ts=?, role=?, model=?, branch=?, text=?, raw_json=?,"
            " schema_version=?, ingested_at=?, extra=?, content_sig=?, raw_ref=?"
            " WHERE event_id=?",
            [(r[_TS], r[_ROLE], r[_MODEL], r[_BRANCH], r[_TEXT], r[_RAW], r[_SCHEMA], now,
              r[_EXT], r[_SIG], r[_REF], r[_ID]) for r in updates])
        conn.executemany("DELETE FROM tool_calls WHERE event_id=?",
                         [(r[_ID],) for r in updates])
        conn.executemany("DELETE FROM tool_files WHERE event_id=?",
                         [(r[_ID],) for r in updates])
    changed = inserts + updates
    _delete_withdrawn(conn, sorted(withdrawn_of(changed) - set(by_id)))
    conn.executemany(
        "INSERT OR REPLACE INTO tool_calls(event_id, idx, name, kind, command, exit_code,"
        " is_error, test_outcome) VALUES(?,?,?,?,?,?,?,?)",
        [(r[_ID], *t) for r in changed if r[_TOOLS] for t in r[_TOOLS]])
    conn.executemany(
        "INSERT INTO tool_files(event_id, idx, raw_path, relpath, op) VALUES(?,?,?,?,?)",
        [(r[_ID], *f) for r in changed if r[_FILES] for f in r[_FILES]])
    res.added, res.updated = len(inserts), len(updates)
    res.sessions_with_new = {(r[_AGENT], r[_SESSION]) for r in inserts}
    return {(r[_AGENT], r[_SESSION]) for r in changed}, [r[_ID] for r in changed]


def _delete_withdrawn(conn: sqlite3.Connection, withdrawn: Sequence[str]) -> None:
    if withdrawn:
        # An adapter re-emitted an edited message (extra.supersedes) or a rewind dropped
        # messages (extra.retracts): the old versions must not linger in the store.
        # Their written lines go too: a withdrawn version wrote nothing a commit can show.
        for table in ("events", "tool_calls", "tool_files", "written_lines", "written_seen"):
            conn.executemany(f"DELETE FROM {table} WHERE event_id=?",
                             [(x,) for x in withdrawn])


def _write_rest(conn: sqlite3.Connection, sessions: list[SessionUpsert],
                touched: set[tuple[str, str]], cursor: CursorRow,
                counts: list[tuple[int, str, str, int]], now: int) -> None:
    """The sessions a batch touched, its cursor and its counts."""
    for s in sessions:
        if (s.agent, s.session_id) not in touched:
            continue
        conn.execute(
            "INSERT INTO sessions(agent, session_id, project_root, git_remote, git_branch,"
            " source_path, parent_session, is_subagent, event_count) VALUES(?,?,?,?,?,?,?,?,0)"
            " ON CONFLICT(agent, session_id) DO UPDATE SET"
            " project_root=coalesce(sessions.project_root, excluded.project_root),"
            " git_remote=coalesce(excluded.git_remote, sessions.git_remote),"
            " git_branch=coalesce(excluded.git_branch, sessions.git_branch),"
            " source_path=coalesce(sessions.source_path, excluded.source_path),"
            " parent_session=coalesce(sessions.parent_session, excluded.parent_session),"
            " is_subagent=max(sessions.is_subagent, excluded.is_subagent)",
            (s.agent, s.session_id, s.project_root, s.git_remote, s.git_branch,
             s.source_path, s.parent_session, int(s.is_subagent)))
        conn.execute(
            "UPDATE sessions SET (first_ts, last_ts, event_count) = (SELECT min(ts), max(ts),"
            " count(*) FROM events WHERE agent=? AND session_id=?)"
            " WHERE agent=? AND session_id=?",
            (s.agent, s.session_id, s.agent, s.session_id))
    c = cursor
    conn.execute(
        'INSERT OR REPLACE INTO cursors(source_id, agent, path, "offset", head_fp,'
        " content_hash, state, size, mtime_ns, updated_at) VALUES(?,?,?,?,?,?,?,?,?,?)",
        (c.source_id, c.agent, c.path, c.offset, c.head_fp, c.content_hash, c.state, c.size,
         c.mtime_ns, now))
    if counts:
        conn.executemany("INSERT INTO ingest_counts(run_id, kind, key, n) VALUES(?,?,?,?)",
                         counts)


def withdrawn_of(rows: Sequence[Sequence[Any]]) -> set[str]:
    """Event ids that rows declare superseded or retracted."""
    out: set[str] = set()
    for r in rows:
        # Most rows name neither key: skip parsing their JSON.
        x = r[_EXT]
        if not x or ("supersedes" not in x and "retracts" not in x):
            continue
        try:
            extra = json.loads(x)
        except ValueError:
            continue
        if extra.get("supersedes"):
            out.add(str(extra["supersedes"]))
        out.update(x for x in str(extra.get("retracts") or "").split(",") if x)
    return out


def raw_ref(path: str, spans: tuple[tuple[int, int], ...]) -> str:
    """The stored form of a raw record kept by reference: the transcript's path and the
    (byte offset, length) of each of its lines, as compact JSON."""
    # The same text as json.dumps({"path": path, "spans": [...]}, compact), built directly:
    # one is made per stored event.
    if len(spans) == 1:  # most events: one line
        (a, b), = spans
        return '{"path":%s,"spans":[[%d,%d]]}' % (_path_json(path), a, b)  # noqa: UP031
    body = ",".join(["[%d,%d]" % span for span in spans])  # noqa: UP031 - %d is int()
    return f'{{"path":{_path_json(path)},"spans":[{body}]}}'


@functools.lru_cache(maxsize=64)
def _path_json(path: str) -> str:
    return json.dumps(path, ensure_ascii=False)


def extra_json(extra: tuple[tuple[str, str], ...]) -> str | None:
    """The stored form of NormalizedEvent.extra (None when empty): the text of
    json.dumps(dict(extra), sort_keys=True, ensure_ascii=False). The answer for the last
    tuple asked about is kept for that very object (tuples are immutable)."""
    if not extra:
        return None
    last, text = _LAST_EXTRA[0]
    if extra is last:  # the Codex adapter hands every event of a session the same facts
        return text
    text = "".join(_EXTRA_C(dict(extra), 0)) if _EXTRA_C is not None \
        else _EXTRA.encode(dict(extra))
    _LAST_EXTRA[0] = (extra, text)  # one assignment: a concurrent caller sees a pair
    return text


def c_encoder(encoder: json.JSONEncoder) -> Callable[[Any, int], Any] | None:
    """`encoder`'s C encoder, made once (None where the C accelerator is missing):
    `"".join(c(obj, 0)) == encoder.encode(obj)` for a dict or list `obj`.

    JSONEncoder.encode builds a new C encoder on every call, most of its cost for a small
    object (one is encoded per stored event). Without circular-reference checks: objects
    decoded from JSON cannot hold a cycle (one would end in RecursionError, not ValueError).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return None
    return make(None, encoder.default, encoder_str(encoder), None, encoder.key_separator,
                encoder.item_separator, encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)


def encoder_str(encoder: json.JSONEncoder) -> Callable[[str], str]:
    """The string encoder `encoder` uses."""
    return json.encoder.encode_basestring_ascii if encoder.ensure_ascii else _STR_JSON


# json.dumps(..., sort_keys=True, ensure_ascii=False) without building an encoder per call.
_STR_JSON = json.encoder.encode_basestring
_EXTRA = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
_EXTRA_C = c_encoder(_EXTRA)
_LAST_EXTRA: list[tuple[tuple[tuple[str, str], ...], str | None]] = [((), None)]
