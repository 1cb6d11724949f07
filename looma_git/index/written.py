"""What sessions wrote and what commits added, as line keys in store.db (a local cache).

`written_lines` holds, for every stored event with an edit/write tool call, the keys of the
lines its tools wrote (pipeline/content.py), with the files the call named, the session and
the time (keyed by the ingest's readers as the events are stored, `keyed_at_read`; what they
did not key, by `update_written`). `commit_lines` holds the keys of the lines each commit
adds, per file (commits are immutable, so a commit is read from git once). Both are filled
incrementally; the linker asks only for the keys of the commits it scores."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from looma_git.index import schema
from looma_git.index.events import stored_records_many
from looma_git.index.storedb import transaction
from looma_git.isotime import parse_ts
from looma_git.pipeline.content import line_key, records_keys, written_keys
from looma_git.pipeline.link_content import Content, Write

SCHEMA = schema.WRITTEN  # every store.db table is declared in index/schema.py
_CHUNK = 500
MARK = "written_mark"  # store.db meta: "<largest ingested_at> <largest event rowid>" last run
_EVENTS = 2000  # edit events read back and written per batch (bounded memory)


def ensure(conn: sqlite3.Connection) -> None:
    from looma_git.index.schema import META

    conn.executescript(SCHEMA + META + ";")


def update_written(conn: sqlite3.Connection, full: bool = False) -> int:
    """Index the edit/write events not indexed yet (or re-ingested since); returns how many.

    Only events stored since the last run are looked at (`MARK`: the last run's largest
    `ingested_at` and event rowid), so a drain's cost does not grow with the history; `full`
    (a full refinery pass, `looma reprocess`) looks at every edit event, as the first run does.
    """
    from looma_git.index import storedb
    from looma_git.store import gcpause

    ensure(conn)
    cols = ("SELECT e.event_id, e.agent, e.session_id, e.ts, e.raw_json, e.ingested_at, "
            "e.raw_ref, w.event_id IS NOT NULL "
            "FROM events e LEFT JOIN written_seen w ON w.event_id = e.event_id ")
    fresh = "AND (w.event_id IS NULL OR w.ingested_at IS NOT e.ingested_at)"
    # (two subqueries: SQLite reads a MAX from its index only when it is the query's one
    # aggregate; `MAX(a), MAX(rowid)` together scan every event)
    top = tuple(conn.execute("SELECT (SELECT MAX(ingested_at) FROM events), "
                             "(SELECT MAX(rowid) FROM events)").fetchone())
    raw = storedb.get_meta(conn, MARK)
    mark = [int(x) for x in raw.split()] if raw and not full else None
    if mark is None or len(mark) != 2:  # every edit event
        rows = conn.execute(
            cols + "WHERE e.event_id IN (SELECT event_id FROM tool_calls WHERE kind IN "
            "('edit','write') OR (kind = 'shell' AND (command LIKE '%<<%' OR command LIKE "
            "'%rm %'))) " + fresh).fetchall()
    else:  # stored (or re-stored: a new ingested_at) since the last run
        # Two seeks, not `ingested_at >= ? AND (ingested_at > ? OR rowid > ?)`: a cold ingest
        # stamps all its events with one ingested_at, and that form walked every one of them
        # to test its rowid (36-65 ms at 5,000 sessions, the first ingest after a cold one);
        # `ingested_at = ? AND rowid > ?` is one range of the index (rowid is its last key).
        edits = ("AND EXISTS (SELECT 1 FROM tool_calls t WHERE t.event_id = e.event_id AND "
                 "(t.kind IN ('edit','write') OR (t.kind = 'shell' AND (t.command LIKE '%<<%' "
                 "OR t.command LIKE '%rm %')))) " + fresh + " ORDER BY e.ingested_at, e.rowid")
        rows = conn.execute(cols + "WHERE e.ingested_at = ? AND e.rowid > ? " + edits,
                            (mark[0], mark[1])).fetchall()
        rows += conn.execute(cols + "WHERE e.ingested_at > ? " + edits, (mark[0],)).fetchall()
    if not rows:
        _set_mark(conn, top)
        return 0
    # By transcript (then offset): each is opened once and read forward. The order of the
    # rows stored changes nothing: every reader of `written_lines` takes them as a set.
    rows.sort(key=lambda r: r[6] or "")
    files: dict[str, set[str]] = {}
    commands: dict[str, list[str]] = {}
    for eid, relpath in _calls(conn, [r[0] for r in rows], _FILES):
        files.setdefault(eid, set()).add(relpath)
    for eid, cmd in _calls(conn, [r[0] for r in rows], _COMMANDS):
        commands.setdefault(eid, []).append(cmd)
    batches = [rows[i:i + _EVENTS] for i in range(0, len(rows), _EVENTS)]
    # (a cold store's ~50,000 line rows per 1,500 sessions: no collection walks them)
    with transaction(conn), gcpause.paused():  # an event seen before has its old lines replaced
        for batch, (lines, seen) in zip(batches, _keyed(batches, files, commands), strict=True):
            _store(conn, batch, lines, seen)
    _set_mark(conn, top)
    return len(rows)


_FILES = ("f.event_id", "SELECT f.event_id, f.relpath FROM tool_files f JOIN tool_calls t ON t.event_id = "
          "f.event_id AND t.idx = f.idx WHERE f.relpath IS NOT NULL AND t.kind IN "
          "('edit','write')")
_COMMANDS = ("event_id", "SELECT event_id, command FROM tool_calls WHERE kind = 'shell' AND (command LIKE "
             "'%<<%' OR command LIKE '%rm %')")
_SCAN_FROM = 5000  # events from which one pass over the tool tables beats lists of ids


def _calls(conn: sqlite3.Connection, ids: list[str], query: tuple[str, str]
           ) -> Iterator[tuple[str, str]]:
    """`query`'s (event id, value) rows of these events: by lists of ids for a few (a drain),
    in one scan for many (a cold store's ~30,000 edit events)."""
    column, sql = query
    if len(ids) >= _SCAN_FROM:
        want = set(ids)
        yield from ((eid, v) for eid, v in conn.execute(sql) if eid in want)
        return
    for i in range(0, len(ids), _CHUNK):
        part = ids[i:i + _CHUNK]
        yield from conn.execute(f"{sql} AND {column} IN ({','.join('?' * len(part))})", part)


# Batches of edit events from which their line keys are computed by forked workers (a cold
# store: ~30,000 edit events at 1,500 sessions, each record re-read and walked): the keys of an
# event depend on that event alone, and the parent stores them in order.
_PARALLEL_BATCHES = 4
Keyed = tuple[list[tuple[int, str, str, float, str]], list[tuple[str, int, str, int]]]


def _keyed(batches: list[list[Any]], files: dict[str, set[str]],
           commands: dict[str, list[str]]) -> Iterator[Keyed]:
    """`_keys_of` each batch, in order: in worker processes when there are enough of them."""
    from looma_git.ingest import parallel

    workers = parallel.default_workers()
    if len(batches) < _PARALLEL_BATCHES or workers < 2 or not parallel.fork_available():
        for batch in batches:
            yield _keys_of(batch, files, commands)
        return
    for _, keyed in parallel.ordered_map(lambda i: _keys_of(batches[i], files, commands),
                                         range(len(batches)), workers):
        yield keyed


def _set_mark(conn: sqlite3.Connection, top: tuple[int | None, int | None]) -> None:
    """Events stored from now on have a larger `ingested_at`, or the same one (a run in the
    same second) and a larger rowid. An event re-stored in that same second keeps its rowid
    and is missed, as it was before marks (its `written_seen` time is the same); a full pass
    (`full`) catches it."""
    from looma_git.index import storedb

    if top[0] is not None and top[1] is not None:
        with transaction(conn):
            storedb.set_meta(conn, MARK, f"{int(top[0])} {int(top[1])}")


def _keys_of(rows: list[Any], files: dict[str, set[str]],
             commands: dict[str, list[str]]) -> Keyed:
    """The written_lines and written_seen rows of these edit events (pure: no store access)."""
    # Only hashed line keys are kept, so the unredacted read-back is fine here.
    refs = [r[6] for r in rows if r[6]]
    read = iter(stored_records_many(refs))
    lines: list[tuple[int, str, str, float, str]] = []
    seen: list[tuple[str, int, str, int]] = []
    for eid, agent, sid, ts, raw, ingested, ref, _ in rows:
        cmds = tuple(commands.get(eid, ()))
        # A record kept by reference is parsed once, as it is read back (its check).
        if ref:
            records: list[Any] | None = next(read)
            keys = records_keys(records or (), cmds)
        else:
            keys = written_keys(raw or "", cmds)
        where = sorted(files.get(eid, ())) or [""]  # "" : a shell write, any file
        session = f"{agent}:{sid}"
        t = parse_ts(ts or "")
        lines.extend((k, f, session, t, eid) for k in sorted(keys) for f in where)
        seen.append((eid, ingested, session, len(keys)))
    return lines, seen


# A reader's keys of one event (`keyed_at_read`): (session, time, line keys, files).
ReadKeys = tuple[str, float, tuple[int, ...], tuple[str, ...]]
_EDITS = frozenset({"edit", "write"})


def _shell_writes(command: str | None) -> bool:
    # What `command LIKE '%<<%' OR command LIKE '%rm %'` picks (LIKE folds ASCII case only).
    return command is not None and ("<<" in command or "rm " in command.lower())


def keyed_at_read(rows: list[Any], spans: Sequence[tuple[tuple[int, int], ...]] = (),
                  records: Mapping[int, Any] | None = None) -> dict[str, ReadKeys]:
    """What `update_written` would store for each edit event of one source's rows (event id:
    session, time, keys, files), computed by the reader that made the rows, so a cold store's
    work model does not read every edit record back: the same keys from the same records
    (the stored, redacted `raw_json` of an event kept inline; the records of one kept by
    reference as the reader decoded them, `records` by byte offset (ReadResult.records) for
    the spans each row keeps (`spans`, parallel to `rows`), else read back and parsed by
    `stored_records_many`) and the same stored commands. The last row of an id wins, as the
    store keeps it."""
    picked: dict[str, tuple[Any, tuple[str, ...], tuple[str, ...], int]] = {}
    for i, r in enumerate(rows):
        tools = r[14] or ()
        picked.pop(r[0], None)
        if not any(t[2] in _EDITS or (t[2] == "shell" and _shell_writes(t[3])) for t in tools):
            continue
        edits = {t[0] for t in tools if t[2] in _EDITS}
        files = tuple(sorted({f[2] for f in r[15] or () if f[2] is not None and f[0] in edits}))
        cmds = tuple(t[3] for t in tools if t[2] == "shell" and _shell_writes(t[3]))
        picked[r[0]] = (r, files, cmds, i)
    by_id: dict[str, list[Any] | None] = {}
    refs: list[tuple[str, str]] = []
    for eid, (r, _, _, i) in picked.items():
        if not r[13]:
            continue
        carried = _carried(spans[i] if i < len(spans) else (), records)
        if carried is None:
            refs.append((eid, r[13]))
        else:
            by_id[eid] = carried
    if refs:
        by_id.update(zip([e for e, _ in refs], stored_records_many([x for _, x in refs]),
                         strict=True))
    out: dict[str, ReadKeys] = {}
    for eid, (r, files, cmds, _) in picked.items():
        if r[13]:
            keys = records_keys(by_id.get(eid) or (), cmds)
        else:
            keys = written_keys(r[9] or "", cmds)
        out[eid] = (f"{r[1]}:{r[2]}", parse_ts(r[4] or ""), tuple(sorted(keys)), files or ("",))
    return out


def _carried(spans: tuple[tuple[int, int], ...], records: Mapping[int, Any] | None
             ) -> list[Any] | None:
    """The records at these spans as the reader decoded them; None unless it has all."""
    if not spans or not records:
        return None
    out = []
    for offset, _ in spans:
        record = records.get(offset)
        if record is None:
            return None
        out.append(record)
    return out


def store_read(conn: sqlite3.Connection, keyed: dict[str, ReadKeys], ids: Any, now: int
               ) -> None:
    """Store the reader's keys (`keyed_at_read`) of these events, just stored or re-stored
    with `ingested_at` `now`, as `update_written` stores them (an event's old lines
    replaced), so it finds them current."""
    want = [eid for eid in ids if eid in keyed]
    if not want:
        return
    # Only an event seen before has old lines (as in `_store`): a cold ingest's have none,
    # and one lookup per chunk is cheaper than a delete per event.
    seen: list[str] = []
    for i in range(0, len(want), _CHUNK):
        part = want[i:i + _CHUNK]
        seen += [r[0] for r in conn.execute(
            f"SELECT event_id FROM written_seen WHERE event_id IN ({','.join('?' * len(part))})",
            part)]
    conn.executemany("DELETE FROM written_lines WHERE event_id=?", [(e,) for e in seen])
    conn.executemany(
        "INSERT INTO written_lines(h, file, session, ts, event_id) VALUES (?,?,?,?,?)",
        [(k, f, keyed[e][0], keyed[e][1], e) for e in want for k in keyed[e][2]
         for f in keyed[e][3]])
    conn.executemany("INSERT OR REPLACE INTO written_seen(event_id, ingested_at, session, n) "
                     "VALUES (?,?,?,?)",
                     [(e, now, keyed[e][0], len(keyed[e][2])) for e in want])


def store_staged(conn: sqlite3.Connection, now: int) -> None:
    """`store_read` of the keys staged with a batch whose every id was new (index/event_stage:
    loaded, all of them stored), copied by SQLite in the order `store_read` takes them."""
    from looma_git.index.event_stage import LINE_COLS
    from looma_git.index.event_stage import SCHEMA as STAGE

    conn.execute(f"DELETE FROM written_lines WHERE event_id IN (SELECT s.event_id FROM "
                 f"{STAGE}.ws s JOIN written_seen w ON w.event_id = s.event_id)")
    conn.execute(f"INSERT INTO written_lines(h, file, session, ts, event_id) SELECT {LINE_COLS}"
                 f" FROM {STAGE}.wl ORDER BY rowid")
    conn.execute("INSERT OR REPLACE INTO written_seen(event_id, ingested_at, session, n) "
                 f"SELECT event_id, {int(now)}, session, n FROM {STAGE}.ws ORDER BY rowid")


def _store(conn: sqlite3.Connection, rows: list[Any], lines: list[tuple[int, str, str, float, str]],
           seen: list[tuple[str, int, str, int]]) -> None:
    conn.executemany("DELETE FROM written_lines WHERE event_id=?", [(r[0],) for r in rows if r[7]])
    conn.executemany(
        "INSERT INTO written_lines(h, file, session, ts, event_id) VALUES (?,?,?,?,?)", lines)
    conn.executemany("INSERT OR REPLACE INTO written_seen(event_id, ingested_at, session, n) "
                     "VALUES (?,?,?,?)", seen)


def writing_sessions(conn: sqlite3.Connection, among: Iterable[str] | None = None
                     ) -> frozenset[str]:
    """Sessions whose stored records show what their tools wrote (of `among`, when given:
    looked up by session, not a scan of every edit event)."""
    ensure(conn)
    if among is None:
        return frozenset(r[0] for r in conn.execute(
            "SELECT DISTINCT session FROM written_seen WHERE n > 0"))
    want = sorted(set(among))
    out: set[str] = set()
    for i in range(0, len(want), _CHUNK):
        part = want[i:i + _CHUNK]
        out.update(r[0] for r in conn.execute(
            f"SELECT DISTINCT session FROM written_seen WHERE session IN "
            f"({','.join('?' * len(part))}) AND n > 0", part))
    return frozenset(out)


def earliest_write(conn: sqlite3.Connection) -> float | None:
    ensure(conn)
    row = conn.execute("SELECT MIN(ts) FROM written_lines WHERE ts > 0").fetchone()
    return float(row[0]) if row and row[0] is not None else None


def commit_keys(conn: sqlite3.Connection, worktree: Path, shas: Iterable[str]
                ) -> dict[str, tuple[tuple[str, int], ...]]:
    """(file, line key) of what each commit adds, removes (`removed_key`) and deletes
    (`gone_key`), reading from git only commits not seen."""
    from looma_git.pipeline.content import gone_key, removed_key
    from looma_git.store.gitfacts import changed_by_file

    ensure(conn)
    want = sorted(set(shas))
    seen: set[str] = set()
    for i in range(0, len(want), _CHUNK):
        part = want[i:i + _CHUNK]
        seen.update(r[0] for r in conn.execute(
            f"SELECT sha FROM commit_seen WHERE sha IN ({','.join('?' * len(part))})", part))
    missing = [s for s in want if s not in seen]
    if missing:
        got = changed_by_file(worktree, missing)
        with transaction(conn):
            for sha in missing:
                # A line removed and a file deleted are keyed apart from lines added
                # (pipeline/content.py): what a session took out is evidence too.
                keys = sorted({(f, k) for f, line, how in got.get(sha, ())
                               if (k := (line_key(line) if how == "+" else removed_key(line)
                                         if how == "-" else gone_key(f))) is not None})
                conn.executemany("INSERT INTO commit_lines(sha, file, h) VALUES (?,?,?)",
                                 [(sha, f, k) for f, k in keys])
                conn.execute("INSERT OR REPLACE INTO commit_seen(sha, n) VALUES (?,?)",
                             (sha, len(keys)))
    out: dict[str, list[tuple[str, int]]] = {s: [] for s in want}
    for i in range(0, len(want), _CHUNK):
        part = want[i:i + _CHUNK]
        for sha, f, h in conn.execute(
                f"SELECT sha, file, h FROM commit_lines WHERE sha IN "
                f"({','.join('?' * len(part))})", part):
            out[sha].append((f, int(h)))
    return {s: tuple(sorted(v)) for s, v in out.items()}


def content_for(conn: sqlite3.Connection, worktree: Path, commits: Iterable[tuple[str, float]],
                capable_among: Iterable[str] | None = None) -> Content:
    """The content evidence of these (sha, commit time) pairs: the lines they add, and who
    wrote each of those lines. Commits made before any session wrote anything are skipped
    (nothing can match them); the index must be current (`update_written`). `capable_among`
    limits `capable` to those sessions (the linker asks only of its targets' sessions)."""
    first = earliest_write(conn)
    capable = writing_sessions(conn, capable_among)
    if first is None:
        return Content(added={}, writes={}, capable=capable)
    shas = [sha for sha, ts in commits if ts >= first - 3600]
    added = commit_keys(conn, worktree, shas)
    keys = sorted({k for v in added.values() for _, k in v})
    writes: dict[int, list[Write]] = {}
    for i in range(0, len(keys), _CHUNK):
        part = keys[i:i + _CHUNK]
        for h, f, session, ts in conn.execute(
                f"SELECT h, file, session, ts FROM written_lines WHERE h IN "
                f"({','.join('?' * len(part))})", part):
            writes.setdefault(int(h), []).append(Write(f or None, session, float(ts or 0.0)))
    return Content(added=added, writes={k: tuple(v) for k, v in writes.items()},
                   capable=capable)
