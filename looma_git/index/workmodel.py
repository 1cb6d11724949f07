"""The work model's local state in store.db: windows and their assignment, seeds, the last
pass's WorkItems and memories (link targets: `link_targets`; per-cluster memo: `refine_memo`).
A cache (`looma reprocess` rebuilds it), never shared."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import fields, is_dataclass, replace
from typing import Any

from looma_git.pipeline.heuristics import MemoryCandidate
from looma_git.pipeline.packed import Decoded
from looma_git.pipeline.signals import WorkSignal
from looma_git.pipeline.views import StoredWindow


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM refine_meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO refine_meta(key, value) VALUES(?,?)", (key, value))


# ----------------------------------------------------------------- serialisation
_FIELDS: dict[type, tuple[str, ...]] = {}


def plain(value: Any) -> Any:
    """`dataclasses.asdict` for the views stored here, without its deep copies: the same JSON
    once dumped (tuples and lists both become arrays; any other value is left for `default`).
    asdict of every WorkItem, memory and window candidate was most of a pass's store time."""
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    if t is tuple or t is list:
        return [plain(v) for v in value]
    if t is dict:
        return {k: plain(v) for k, v in value.items()}
    names = _FIELDS.get(t)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[t] = tuple(f.name for f in fields(value))
    if names is not None:
        return {n: plain(getattr(value, n)) for n in names}
    return value


def _window_json(sw: StoredWindow) -> str:
    from looma_git.pipeline.clusters import alias_of

    prompt = sw.signal.first_prompt
    return json.dumps({"signal": sw.signal.to_json(), "cands": [plain(c) for c in sw.cands],
                       "alias": alias_of(prompt) if prompt else "",
                       "related": [list(r) for r in sw.related], "events": sw.events},
                      sort_keys=True)


def _decision(sw: StoredWindow) -> tuple[str, str | None, int]:
    return (sw.signal.key, None if sw.scored is None else json.dumps(list(sw.scored)),
            int(sw.founded))


# ----------------------------------------------------------------- windows
def _cand(d: dict[str, Any]) -> MemoryCandidate:
    return MemoryCandidate(**d)


class StoredCands(Decoded[MemoryCandidate]):
    """A stored window's memory candidates, decoded on first use: a pass reads the
    candidates only of the clusters whose results it recomputes (most of the history's are
    never looked at). Equal to any sequence of the same candidates."""

    __slots__ = ("_items", "_raw")

    def __init__(self, raw: list[dict[str, Any]]) -> None:
        self._raw: list[dict[str, Any]] | None = raw
        self._items: tuple[MemoryCandidate, ...] = ()

    def _all(self) -> tuple[MemoryCandidate, ...]:
        if self._raw is not None:
            self._items, self._raw = tuple(_cand(c) for c in self._raw), None
        return self._items

    def __len__(self) -> int:
        return len(self._raw) if self._raw is not None else len(self._items)

    def __repr__(self) -> str:
        return repr(self._all())


def stored_windows(conn: sqlite3.Connection, skip: set[str],
                   titles: bool = False) -> list[StoredWindow]:
    """Every stored window except those of the sessions in `skip` (compact: no event text);
    `titles` (the store was written by this code): the title each stored with its opening
    request is remembered (`clusters.alias_of`)."""
    decided = {k: (sc, f) for k, sc, f in conn.execute(
        "SELECT key, scored, founded FROM refine_decisions")}
    rows = conn.execute("SELECT key, session, cluster, json FROM refine_signals ORDER BY key")
    return _decode((r for r in rows if r[1] not in skip), decided, titles)


def windows_in(conn: sqlite3.Connection, clusters: Iterable[str] | None,
               keys: Iterable[str] | None) -> list[StoredWindow]:
    """The stored windows of these clusters and these windows (both None: every one), as
    `stored_windows` with titles."""
    if clusters is None and keys is None:
        return stored_windows(conn, skip=set(), titles=True)
    rows: dict[str, tuple[Any, ...]] = {}
    for col, vals in (("cluster", sorted(set(clusters or ()))), ("key", sorted(set(keys or ())))):
        for i in range(0, len(vals), 500):
            part = vals[i:i + 500]
            marks = ",".join("?" * len(part))
            for r in conn.execute(f"SELECT key, session, cluster, json FROM refine_signals "
                                  f"WHERE {col} IN ({marks})", part):
                rows[r[0]] = tuple(r)
    decided: dict[str, tuple[Any, Any]] = {}
    ks = sorted(rows)
    for i in range(0, len(ks), 500):
        part = ks[i:i + 500]
        marks = ",".join("?" * len(part))
        decided.update((k, (sc, f)) for k, sc, f in conn.execute(
            f"SELECT key, scored, founded FROM refine_decisions WHERE key IN ({marks})", part))
    return _decode((rows[k] for k in ks), decided, True)


def _decode(rows: Iterable[tuple[Any, ...]], decided: dict[str, tuple[Any, Any]],
            titles: bool) -> list[StoredWindow]:
    from looma_git.pipeline.clusters import remember_aliases

    out = []
    aliases = {}
    for key, _session, cluster, raw in rows:
        d = json.loads(raw)
        if titles and d.get("alias") is not None and d["signal"].get("first_prompt"):
            aliases[d["signal"]["first_prompt"]] = d["alias"]
        out.append(StoredWindow(
            signal=WorkSignal.from_json(d["signal"]),
            cands=StoredCands(d["cands"]), cluster=cluster,
            related=tuple((a, float(b)) for a, b in d.get("related", ())),
            events=int(d.get("events", 0)),
            scored=None if decided.get(key, (None, 0))[0] is None
            else tuple(json.loads(decided[key][0])),
            founded=bool(decided.get(key, (None, 0))[1])))
    remember_aliases(aliases)
    return out


def sessions_changed(conn: sqlite3.Connection, versions: dict[str, str]) -> bool:
    """Whether any session is new, grew or vanished since the last pass."""
    return stored_sessions(conn) != versions


def stored_sessions(conn: sqlite3.Connection) -> dict[str, str]:
    return {r[0]: r[1] for r in conn.execute("SELECT key, version FROM refine_sessions")}


def known_paths(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT path FROM refine_known")}


def sessions_touching(conn: sqlite3.Connection, paths: Iterable[str]) -> set[str]:
    """Sessions with a tool call on one of `paths` ("agent:session")."""
    out: set[str] = set()
    batch = sorted(set(paths))
    for i in range(0, len(batch), 500):
        part = batch[i:i + 500]
        marks = ",".join("?" * len(part))
        out.update(f"{r[0]}:{r[1]}" for r in conn.execute(
            f"SELECT DISTINCT e.agent, e.session_id FROM tool_files f JOIN events e "
            f"ON e.event_id = f.event_id WHERE f.relpath IN ({marks})", part))
    return out


def save_windows(conn: sqlite3.Connection, stored: tuple[StoredWindow, ...],
                 versions: dict[str, str], known: frozenset[str],
                 prior: tuple[StoredWindow, ...] = (), partial: bool = False) -> None:
    """Replace the stored windows, session versions and known paths with this pass's.

    `prior`: the windows this pass loaded (`stored_windows`); a window equal to its loaded
    self keeps its row, so an incremental pass writes only what changed (serialising every
    window of the history was most of one new session's cost). `partial`: `stored` holds
    only the windows that changed (an appending pass, pipeline/resolve_append.py), every
    other window was routed (no decision) and keeps its row."""
    if partial:
        conn.execute("UPDATE refine_decisions SET scored=NULL, founded=0 "
                     "WHERE scored IS NOT NULL OR founded != 0")
        conn.executemany("INSERT OR REPLACE INTO refine_decisions(key, scored, founded) "
                         "VALUES (?,?,?)", [_decision(sw) for sw in stored])
        conn.executemany(
            "INSERT OR REPLACE INTO refine_signals(key, session, cluster, json) VALUES (?,?,?,?)",
            [(sw.signal.key, sw.signal.session_key, sw.cluster, _window_json(sw))
             for sw in stored])
        _save_versions(conn, versions, known)
        return
    loaded = {sw.signal.key: sw for sw in prior}
    _sync_rows(conn, "refine_decisions", ("key", "scored", "founded"),
               [_decision(sw) for sw in stored])

    def row(sw: StoredWindow | None) -> Any:
        return None if sw is None else replace(sw, scored=None, founded=False)

    same = {sw.signal.key for sw in stored if row(loaded.get(sw.signal.key)) == row(sw)}
    if same:
        conn.executemany("DELETE FROM refine_signals WHERE key=?",
                         [(k,) for (k,) in conn.execute("SELECT key FROM refine_signals")
                          if k not in same])
    else:
        conn.execute("DELETE FROM refine_signals")
    conn.executemany(
        "INSERT INTO refine_signals(key, session, cluster, json) VALUES (?,?,?,?)",
        [(sw.signal.key, sw.signal.session_key, sw.cluster, _window_json(sw))
         for sw in stored if sw.signal.key not in same])
    _save_versions(conn, versions, known)


def _save_versions(conn: sqlite3.Connection, versions: dict[str, str],
                   known: frozenset[str]) -> None:
    from looma_git.index.workmodel_state import mark_versions

    mark_versions(conn)
    before = stored_sessions(conn)
    conn.executemany("DELETE FROM refine_sessions WHERE key=?",
                     [(k,) for k in sorted(set(before) - set(versions))])
    conn.executemany("INSERT OR REPLACE INTO refine_sessions(key, version) VALUES (?,?)",
                     sorted((k, v) for k, v in versions.items() if before.get(k) != v))
    have = known_paths(conn)
    conn.executemany("DELETE FROM refine_known WHERE path=?", [(p,) for p in have - known])
    conn.executemany("INSERT OR IGNORE INTO refine_known(path) VALUES (?)",
                     [(p,) for p in sorted(known - have)])


# ----------------------------------------------------------------- seeds and memo
def seeds_json(seeds: Iterable[Any]) -> str:
    """The seeds a pass resolved against (the next pass's replay compares its own with them)."""
    return json.dumps([{"id": s.id, "title": s.title, "files": sorted(s.files),
                        "aliases": list(s.aliases), "sessions": sorted(s.sessions),
                        "branch": s.branch, "quarantined": s.quarantined,
                        "owns": sorted(s.owns), "group": s.group} for s in seeds],
                      sort_keys=True)


def load_seeds(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """The last pass's seeds, or None (no pass stored them)."""
    from looma_git.pipeline.clusters import Seed

    raw = get_meta(conn, "seeds_json")
    if not raw:
        return None
    return tuple(Seed(id=d["id"], title=d["title"], files=frozenset(d["files"]),
                      aliases=tuple(d["aliases"]), sessions=frozenset(d["sessions"]),
                      branch=d["branch"], quarantined=bool(d["quarantined"]),
                      owns=frozenset(d["owns"]), group=d["group"]) for d in json.loads(raw))


# ----------------------------------------------------------------- the local graph
def save_graph(conn: sqlite3.Connection, workitems: Iterable[Any], memories: Iterable[Any],
               windows: Iterable[WorkSignal], id_map: dict[str, str], text_of: Any,
               reused: frozenset[str] = frozenset(), partial: bool = False) -> None:
    """The local graph (candidates included) for `work --all`, `ask` and health.

    `reused`: WorkItems whose view and memories are the last pass's own (ClusterMemo): their
    stored JSON is what serialising them gives, so it is kept rather than rebuilt.
    `partial`: `windows` are the new ones only (an appending pass: no other window changed
    its WorkItem), written over their rows; the others keep theirs."""
    wis = list(workitems)
    windows = list(windows)
    # Window summaries (opening request + topic terms) for the vector index: a goal that
    # reads like what someone once asked an agent finds the WorkItem that window joined.
    keys = {w.key for w in windows} if partial else None
    owner = {key: id_map.get(w.id, w.id) for w in wis for key in w.windows
             if keys is None or key in keys}
    sync = _upsert_rows if partial else _sync_rows
    sync(conn, "refine_windows", ("key", "workitem", "text"),
         [(w.key, owner[w.key], text_of(w)) for w in windows
          if w.key in owner and (w.first_prompt or w.terms)])
    # Every window's events and owner (None: in no WorkItem), for the quality benchmark's
    # segment-level scoring (tests/bench/quality.py) and for debugging a resolution.
    sync(conn, "refine_window_events",
         ("key", "agent", "session_id", "workitem", "event_ids"),
         [(w.key, w.agent, w.session_id, owner.get(w.key), json.dumps(list(w.event_ids)))
          for w in windows])
    have_wi = _rows(conn, "refine_workitems", ("id", "ledger_id", "promoted", "json"))
    kept = {k: r[3] for k, r in have_wi.items() if k in reused}
    _sync_rows(conn, "refine_workitems", ("id", "ledger_id", "promoted", "json"),
               [(w.id, id_map.get(w.id), int(w.id in id_map),
                 kept.get(w.id) or json.dumps(plain(w), sort_keys=True, default=str))
                for w in wis], have_wi)
    have_mem = _rows(conn, "refine_memories", ("id", "ledger_id", "workitem", "promoted", "json"))
    mem_rows: list[tuple[Any, ...]] = []
    # A reused WorkItem's memories (pipeline/packed.py) keep their rows, read by id without
    # decoding them, when every one is stored under its WorkItem already.
    parts = getattr(memories, "parts", None)
    for cid, ms in parts if parts is not None else [(None, memories)]:
        ids = getattr(ms, "ids", None)
        if ids is not None and cid in reused:
            wi = id_map.get(cid, cid)
            rows = [have_mem.get(i) for i in ids]
            if all(r is not None and r[2] == wi for r in rows):
                mem_rows.extend((i, None, wi, int(cid in id_map), r[4])
                                for i, r in zip(ids, rows, strict=True) if r is not None)
                continue
        mem_rows.extend(_memory_rows(ms, id_map, have_mem, reused))
    _sync_rows(conn, "refine_memories", ("id", "ledger_id", "workitem", "promoted", "json"),
               mem_rows, have_mem)
    # What this model was built from, so `looma status` can say "work model stale".
    conn.execute("INSERT OR REPLACE INTO refine_meta(key, value) SELECT "
                 "'events_ingested_at', COALESCE(MAX(ingested_at), '') FROM events")


def _memory_rows(memories: Iterable[Any], id_map: dict[str, str],
                 have_mem: dict[Any, tuple[Any, ...]], reused: frozenset[str]
                 ) -> list[tuple[Any, ...]]:
    mem_rows = []
    for m in memories:
        wi = id_map.get(m.workitem or "", m.workitem)
        row = have_mem.get(m.id)
        text = row[4] if (row is not None and m.workitem in reused and row[2] == wi) else None
        mem_rows.append((m.id, None, wi, int(m.workitem in id_map),
                         text or json.dumps(plain(m), sort_keys=True, default=str)))
    return mem_rows


def _rows(conn: sqlite3.Connection, table: str, cols: tuple[str, ...]
          ) -> dict[Any, tuple[Any, ...]]:
    return {r[0]: tuple(r) for r in conn.execute(f"SELECT {', '.join(cols)} FROM {table}")}


def _upsert_rows(conn: sqlite3.Connection, table: str, cols: tuple[str, ...],
                 rows: list[tuple[Any, ...]]) -> None:
    """Write `rows` over the rows of the same keys (the others are left)."""
    conn.executemany(f"INSERT OR REPLACE INTO {table}({', '.join(cols)}) VALUES "
                     f"({','.join('?' * len(cols))})", rows)


def _sync_rows(conn: sqlite3.Connection, table: str, cols: tuple[str, ...],
               rows: list[tuple[Any, ...]],
               have: dict[Any, tuple[Any, ...]] | None = None) -> None:
    """Make `table` hold exactly `rows` (keyed by the first column; a later row wins),
    writing only the rows that changed: a pass after one new session changes a few of the
    history's thousands of windows, and rewriting them all was most of its store time.
    `have`: the table's rows, when the caller already read them."""
    want = {r[0]: tuple(r) for r in rows}
    if have is None:
        have = _rows(conn, table, cols)
    stale = [(k,) for k, r in have.items() if want.get(k) != r]
    conn.executemany(f"DELETE FROM {table} WHERE {cols[0]}=?", stale)
    conn.executemany(f"INSERT INTO {table}({', '.join(cols)}) VALUES "
                     f"({','.join('?' * len(cols))})",
                     [r for k, r in want.items() if have.get(k) != r])
