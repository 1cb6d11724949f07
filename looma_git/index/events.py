"""Reading ingested sessions and events back from store.db (what the refinery consumes)."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from looma_git.model import NormalizedEvent, ToolCall


@dataclass(frozen=True)
class SessionRow:
    """One attributed session."""

    agent: str
    session_id: str
    project_root: str | None
    git_remote: str | None
    git_branch: str | None
    first_ts: str | None
    last_ts: str | None
    event_count: int
    source_path: str | None
    parent_session: str | None
    is_subagent: bool


@dataclass(frozen=True)
class StoredEvent:
    """An event with its repo-relative files: (relpath, op) for every edit/write/read path
    that lies inside the repository (paths escaping it are kept only as raw tool paths)."""

    event: NormalizedEvent
    files: tuple[tuple[str, str], ...]
    ingested_at: int


def list_sessions(conn: sqlite3.Connection) -> list[SessionRow]:
    """Every stored session, oldest activity first."""
    rows = conn.execute(
        "SELECT agent, session_id, project_root, git_remote, git_branch, first_ts, last_ts,"
        " event_count, source_path, parent_session, is_subagent FROM sessions"
        " ORDER BY coalesce(first_ts, ''), agent, session_id").fetchall()
    return [SessionRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], int(r[7] or 0), r[8], r[9],
                       bool(r[10])) for r in rows]


_EVENT_COLS = ("e.event_id, e.agent, e.session_id, e.seq, e.ts, e.role, e.model, e.branch,"
               " e.text, e.raw_json, e.schema_version, e.extra, e.ingested_at,"
               " s.project_root, s.git_remote")


def _hydrate(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[StoredEvent]:
    ids = [r[0] for r in rows]
    calls: dict[str, list[tuple]] = defaultdict(list)
    paths: dict[tuple[str, int], list[str]] = defaultdict(list)
    files: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for c in conn.execute(
                "SELECT event_id, idx, name, kind, command, exit_code, is_error, test_outcome"
                f" FROM tool_calls WHERE event_id IN ({marks}) ORDER BY event_id, idx", chunk):
            calls[c[0]].append(tuple(c))
        for f in conn.execute(
                "SELECT event_id, idx, raw_path, relpath, op FROM tool_files"
                f" WHERE event_id IN ({marks}) ORDER BY event_id, idx, rowid", chunk):
            paths[(f[0], f[1])].append(f[2])
            if f[3] is not None:
                files[f[0]].append((f[3], f[4]))
    out: list[StoredEvent] = []
    for r in rows:
        eid = r[0]
        tcs = tuple(ToolCall(name=c[2], kind=c[3], paths=tuple(paths.get((eid, c[1]), ())),
                             command=c[4], exit_code=c[5], is_error=bool(c[6]),
                             test_outcome=c[7]) for c in calls.get(eid, ()))
        extra: tuple[tuple[str, str], ...] = ()
        if r[11]:
            try:
                extra = tuple(sorted((str(k), str(v)) for k, v in json.loads(r[11]).items()))
            except (ValueError, AttributeError):
                extra = ()
        ev = NormalizedEvent(event_id=eid, source=r[1], session_native_id=r[2],
                             project_root=r[13], git_remote=r[14], git_branch=r[7], seq=r[3],
                             ts=r[4], role=r[5], agent_model=r[6], text=r[8] or "",
                             tool_calls=tcs, raw_json=r[9] or "", schema_version=r[10] or "1",
                             extra=extra)
        out.append(StoredEvent(ev, tuple(dict.fromkeys(files.get(eid, ()))), int(r[12] or 0)))
    return out


def session_events(conn: sqlite3.Connection, agent: str, session_id: str) -> list[StoredEvent]:
    """One session's events in order, with tool calls and repo-relative files reattached."""
    rows = conn.execute(
        f"SELECT {_EVENT_COLS} FROM events e LEFT JOIN sessions s"
        " ON s.agent = e.agent AND s.session_id = e.session_id"
        " WHERE e.agent=? AND e.session_id=? ORDER BY e.seq, e.event_id",
        (agent, session_id)).fetchall()
    return _hydrate(conn, rows)


def events_since(conn: sqlite3.Connection, ingested_after: int) -> list[StoredEvent]:
    """Events stored or updated after the unix time `ingested_after`, in session order."""
    rows = conn.execute(
        f"SELECT {_EVENT_COLS} FROM events e LEFT JOIN sessions s"
        " ON s.agent = e.agent AND s.session_id = e.session_id"
        " WHERE e.ingested_at > ? ORDER BY e.agent, e.session_id, e.seq, e.event_id",
        (ingested_after,)).fetchall()
    return _hydrate(conn, rows)


def raw_record(conn: sqlite3.Connection, event_id: str) -> str | None:
    """The raw record(s) behind one stored event, redacted; None when unknown or gone.

    Records of JSONL transcripts (Claude Code) are stored by reference (`raw_ref`: the file
    and each line's byte span), not copied: the transcript on disk is the source of truth for
    raw events (DESIGN §2). Reading one back redacts it like any text leaving the store; a
    span that no longer holds a JSON object (the file was rewritten) gives None.
    """
    row = conn.execute("SELECT raw_json, raw_ref FROM events WHERE event_id=?",
                       (event_id,)).fetchone()
    if row is None:
        return None
    text = stored_raw(row[0], row[1])
    if not row[1] or text is None:
        return text  # an inline copy was redacted when it was stored
    from looma_git.redact import redact

    return redact(text).text


def stored_raw(raw_json: str | None, raw_ref: str | None) -> str | None:
    """An event's raw record(s) as stored: the inline copy (already redacted), else the lines
    its `raw_ref` names read back from the transcript, NOT redacted: for local derivations
    that keep no text (content line keys), never for output."""
    if not raw_ref:
        return raw_json or None
    lines = read_spans(raw_ref)
    return None if lines is None else "\n".join(lines)


def stored_records_many(refs: list[str]) -> list[list[Any] | None]:
    """The records each `raw_ref` names, parsed (None: unreadable, or not JSON objects any
    more), NOT redacted: for local derivations that keep no text (content line keys). Each
    transcript is opened once and read in offset order (a cold store's content index reads
    ~30,000 edit records from ~1,500 files: one open and a random seek per record was most of
    its time), and each record parsed once (its check is its parse)."""
    out: list[list[Any] | None] = [None] * len(refs)
    by_path: dict[str, list[tuple[int, list[tuple[int, int]]]]] = {}
    for n, raw_ref in enumerate(refs):
        parsed = _parse_ref(raw_ref)
        if parsed is not None:
            by_path.setdefault(parsed[0], []).append((n, parsed[1]))
    for path, wanted in by_path.items():
        try:
            with open(path, "rb") as fh:
                for n, spans in sorted(wanted, key=lambda x: x[1][:1]):
                    out[n] = _read_records(fh, spans)
        except OSError:
            continue
    return out


def _parse_ref(ref: str) -> tuple[str, list[tuple[int, int]]] | None:
    try:
        doc = _fast_decode(ref.encode("utf-8", "surrogatepass"))
        if doc is None:
            doc = json.loads(ref)
        return str(doc["path"]), [(int(a), int(b)) for a, b in doc["spans"]]
    except (ValueError, KeyError, TypeError):
        return None


def _objects(fh: Any, spans: list[tuple[int, int]]) -> Iterator[bytes | None]:
    """Each span's bytes, stripped; None for one that is not a JSON object's braces."""
    for offset, length in spans:
        fh.seek(offset)
        data = fh.read(length).strip()
        yield data if data.startswith(b"{") and data.endswith(b"}") else None


def _read_lines(fh: Any, spans: list[tuple[int, int]]) -> list[str] | None:
    """Each span's line; None unless every span is a JSON object (checked by msgspec from
    the bytes, json.loads what it refuses)."""
    out: list[str] = []
    try:
        for data in _objects(fh, spans):
            if data is None:
                return None
            line = data.decode("utf-8", "replace")
            if not _valid_json(data):
                json.loads(line)  # what msgspec refuses json may still take (NaN, \ud800)
            out.append(line)
    except (OSError, ValueError):
        return None
    return out


def _read_records(fh: Any, spans: list[tuple[int, int]]) -> list[Any] | None:
    """Each span's record, parsed; None unless every span is a JSON object. msgspec decodes
    it from the bytes (what it accepts json.loads reads alike: tests/ingest/test_fast_json.py),
    json.loads what it refuses (NaN, `\\ud800`, invalid UTF-8 replaced): 3x faster, and no
    decoded line is made (a cold store's content index reads back ~30,000 edit records)."""
    out: list[Any] = []
    try:
        for data in _objects(fh, spans):
            if data is None:
                return None
            record = _fast_decode(data)
            out.append(json.loads(data.decode("utf-8", "replace")) if record is None
                       else record)
    except (OSError, ValueError):
        return None
    return out


def _fast_decoder() -> Any:
    """msgspec's decoder: the value, or None where it refuses the bytes (json decides; what
    msgspec accepts json.loads reads alike: the rule tests/ingest/test_fast_json.py checks for
    transcript lines)."""
    try:
        from msgspec import DecodeError
        from msgspec.json import Decoder
    except ImportError:  # a dependency; without it every span takes json.loads
        return lambda data: None
    decode = Decoder().decode

    def fast(data: bytes) -> Any:
        try:
            return decode(data)
        except (DecodeError, ValueError, RecursionError):
            return None

    return fast


_fast_decode = _fast_decoder()


# A span is checked to still hold a JSON object (a rewritten transcript gives None): with
# msgspec, from the bytes, twice as fast as decoding and json.loads (a cold store's content
# index reads back ~45,000 edit records).
def _valid_json(data: bytes) -> bool:
    return _fast_decode(data) is not None


def read_spans(ref: str) -> list[str] | None:
    """The lines a `raw_ref` names, as read (None: unreadable, or not JSON objects any more)."""
    parsed = _parse_ref(ref)
    if parsed is None:
        return None
    try:
        with open(parsed[0], "rb") as fh:
            return _read_lines(fh, parsed[1])
    except OSError:
        return None
