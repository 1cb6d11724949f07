"""The refinery's inputs: sessions and their events read from store.db as frozen values."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolUse:
    """One tool call of an event, with the repo-relative files it touched."""

    kind: str  # edit | write | read | shell | search | task | web | other
    name: str
    command: str | None
    exit_code: int | None
    is_error: bool
    test_outcome: str | None
    files: tuple[str, ...]  # repo-relative; escaping paths are never here


@dataclass(frozen=True)
class Event:
    """One stored message of a session."""

    event_id: str
    seq: int
    ts: str
    role: str
    text: str
    branch: str | None
    tools: tuple[ToolUse, ...]
    # What git printed in the event's shell calls, for agents that record no branch
    # (gitshell.py, stored in `extra` by the adapter): branches in the order the calls
    # were on them, and the shas of commits they made or pushed.
    shown_branches: tuple[str, ...] = ()
    shown_commits: tuple[str, ...] = ()


@dataclass(frozen=True)
class Session:
    """An attributed session with its ordered events."""

    agent: str
    session_id: str
    branch: str | None
    events: tuple[Event, ...]

    @property
    def key(self) -> str:
        return f"{self.agent}:{self.session_id}"


# The `extra` entries of gitshell (SHELL_BRANCHES, SHELL_COMMITS), read in SQL; most
# events have none, so the LIKE keeps json_extract off their rows.
_SHOWN = ("CASE WHEN extra LIKE '%\"shell_%' THEN json_extract(extra, '$.shell_branches') END, "
          "CASE WHEN extra LIKE '%\"shell_%' THEN json_extract(extra, '$.shell_commits') END")


def _words(value: str | None) -> tuple[str, ...]:
    return tuple(value.split()) if value else ()


def load_sessions(conn: sqlite3.Connection) -> list[Session]:
    """Every stored session in a deterministic order (first event time, agent, id)."""
    tools: dict[str, list[tuple[int, ToolUse]]] = defaultdict(list)
    files: dict[tuple[str, int], list[str]] = defaultdict(list)
    for row in conn.execute(
        "SELECT event_id, idx, relpath FROM tool_files WHERE relpath IS NOT NULL "
        "ORDER BY event_id, idx, relpath"
    ):
        files[(row[0], row[1])].append(row[2])
    for row in conn.execute(
        "SELECT event_id, idx, name, kind, command, exit_code, is_error, test_outcome "
        "FROM tool_calls ORDER BY event_id, idx"
    ):
        fs = tuple(dict.fromkeys(files.get((row[0], row[1]), ())))
        tools[row[0]].append((row[1], ToolUse(
            kind=row[3] or "other", name=row[2] or "", command=row[4],
            exit_code=row[5], is_error=bool(row[6]), test_outcome=row[7], files=fs)))
    by_session: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for row in conn.execute(
        f"SELECT event_id, agent, session_id, seq, ts, role, text, branch, {_SHOWN} FROM events "
        "ORDER BY agent, session_id, seq, event_id"
    ):
        by_session[(row[1], row[2])].append(Event(
            event_id=row[0], seq=row[3] or 0, ts=row[4] or "", role=row[5] or "",
            text=row[6] or "", branch=row[7],
            tools=tuple(t for _, t in sorted(tools.get(row[0], []), key=lambda x: x[0])),
            shown_branches=_words(row[8]), shown_commits=_words(row[9])))
    branches: dict[tuple[str, str], str | None] = {}
    for row in conn.execute("SELECT agent, session_id, git_branch FROM sessions"):
        branches[(row[0], row[1])] = row[2]
    sessions = [
        Session(agent=a, session_id=s, branch=branches.get((a, s)) or _first_branch(evs),
                events=tuple(evs))
        for (a, s), evs in by_session.items()
    ]
    sessions.sort(key=lambda s: (_first_ts(s), s.agent, s.session_id))
    return sessions


def _first_branch(events: Sequence[Event]) -> str | None:
    for ev in events:
        if ev.branch:
            return ev.branch
    return None


def _first_ts(s: Session) -> str:
    return min((e.ts for e in s.events if e.ts), default="")


def session_versions(conn: sqlite3.Connection) -> dict[str, str]:
    """"agent:session" -> a version string that changes whenever the session grows or an
    event of it is rewritten (count, last seq, last ingest time)."""
    return {f"{r[0]}:{r[1]}": f"{r[2]}/{r[3]}/{r[4]}" for r in conn.execute(
        "SELECT agent, session_id, COUNT(*), MAX(seq), MAX(ingested_at) FROM events "
        "GROUP BY agent, session_id")}


def session_versions_of(conn: sqlite3.Connection,
                        sessions: list[tuple[str, str]]) -> dict[str, str]:
    """`session_versions` of these (agent, session id) pairs only."""
    out: dict[str, str] = {}
    for agent, sid in sessions:
        r = conn.execute("SELECT COUNT(*), MAX(seq), MAX(ingested_at) FROM events "
                         "WHERE agent=? AND session_id=?", (agent, sid)).fetchone()
        if r[0]:
            out[f"{agent}:{sid}"] = f"{r[0]}/{r[1]}/{r[2]}"
    return out


def load_session(conn: sqlite3.Connection, agent: str, session_id: str) -> Session:
    """One session with its events and tool calls (what a pass holds at a time)."""
    rows = conn.execute(
        f"SELECT event_id, seq, ts, role, text, branch, {_SHOWN} FROM events WHERE agent=? AND "
        "session_id=? ORDER BY seq, event_id", (agent, session_id)).fetchall()
    # Each call with its files, in one join: a row per (call, file), in (event, idx) order
    # (the primary key's: each event's calls in call order as read, with no sort) and the
    # files of a call sorted, without repeats (a dict keeps insertion order). Two queries
    # over the session's events (calls, then files) probed the files' index once per event,
    # not once per call: 0.66 -> 0.50 CPU-s for a cold pass's 1,500 sessions.
    tools: dict[str, list[ToolUse]] = {}
    new = object.__new__
    last: tuple[str, int] | None = None
    fs: dict[str, None] = {}
    use: Any = None
    for eid, idx, name, kind, command, code, err, outcome, rel in conn.execute(
            "SELECT t.event_id, t.idx, t.name, t.kind, t.command, t.exit_code, t.is_error, "
            "t.test_outcome, f.relpath FROM events e JOIN tool_calls t ON t.event_id = "
            "e.event_id LEFT JOIN tool_files f ON f.event_id = t.event_id AND f.idx = t.idx "
            "AND f.relpath IS NOT NULL WHERE e.agent=? AND e.session_id=? "
            "ORDER BY t.event_id, t.idx, f.relpath", (agent, session_id)):
        if (eid, idx) == last:
            fs[rel] = None
            continue
        if use is not None:
            use.__dict__["files"] = tuple(fs)
        last = (eid, idx)
        fs = {} if rel is None else {rel: None}
        use = new(ToolUse)  # (as the events below: the fields in `_TOOL_FIELDS` order)
        d = use.__dict__
        (d["kind"], d["name"], d["command"], d["exit_code"], d["is_error"], d["test_outcome"]
         ) = (kind or "other", name or "", command, code, bool(err), outcome)
        calls = tools.get(eid)
        if calls is None:
            tools[eid] = [use]
        else:
            calls.append(use)
    if use is not None:
        use.__dict__["files"] = tuple(fs)
    # Each event's fields set in its __dict__ in field order, not through the frozen
    # dataclass's __init__ (one object.__setattr__ a field: 1.1 -> 0.4 us an event, 145k
    # events in a cold pass); the same values, so the same Event (`_FIELDS` is checked).
    events: list[Event] = []
    for r in rows:
        ev = new(Event)
        d = ev.__dict__
        (d["event_id"], d["seq"], d["ts"], d["role"], d["text"], d["branch"], d["tools"],
         d["shown_branches"], d["shown_commits"]) = (
            r[0], r[1] or 0, r[2] or "", r[3] or "", r[4] or "", r[5],
            tuple(tools.get(r[0], ())), _words(r[6]), _words(r[7]))
        events.append(ev)
    got = conn.execute("SELECT git_branch FROM sessions WHERE agent=? AND session_id=?",
                       (agent, session_id)).fetchone()
    branch = (got[0] if got else None) or _first_branch(events)
    return Session(agent=agent, session_id=session_id, branch=branch, events=tuple(events))


_FIELDS = ("event_id", "seq", "ts", "role", "text", "branch", "tools", "shown_branches",
           "shown_commits")
_TOOL_FIELDS = ("kind", "name", "command", "exit_code", "is_error", "test_outcome", "files")
if tuple(Event.__dataclass_fields__) != _FIELDS or tuple(
        ToolUse.__dataclass_fields__) != _TOOL_FIELDS:  # load_session sets exactly these
    raise RuntimeError("pipeline/inputs.py: load_session must set every field it builds")


def iter_sessions(conn: sqlite3.Connection, keys: list[str]) -> Iterator[Session]:
    """The named sessions, one at a time, in the given order."""
    for key in keys:
        agent, _, sid = key.partition(":")
        yield load_session(conn, agent, sid)
