"""What an incremental pass keeps in store.db beside the work model to start from: the
resolver's state (`refine_state`, pipeline/resolve_state.py) and where the events stood when
the session versions were saved. A cache like the rest (`looma reprocess` rebuilds it)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from looma_git.index.workmodel import get_meta, set_meta, stored_sessions

if TYPE_CHECKING:
    from looma_git.gitrepo import RepoPaths

Connection = sqlite3.Connection


@contextlib.contextmanager
def opened(paths: RepoPaths) -> Iterator[sqlite3.Connection]:
    """store.db for one refinery pass (every table there), closed after it (the api layer
    opens no database itself)."""
    from looma_git.index import storedb

    conn = storedb.connect(paths)
    try:
        storedb.ensure_schema(conn)
        yield conn
    finally:
        conn.close()


def reader(paths: RepoPaths) -> Callable[[], sqlite3.Connection]:
    """Opens store.db read-only: one connection per worker process of a pass (a connection
    must not cross a fork)."""
    from looma_git.index import storedb

    return lambda: storedb.connect(paths, readonly=True)


def ingest_run(conn: sqlite3.Connection) -> str | None:
    """The last ingest run's mark (store.db meta `ingest_run`)."""
    from looma_git.index import storedb

    return storedb.get_meta(conn, "ingest_run")

# Where the events stood when the last pass saved its session versions: the largest
# `ingested_at` then (one ingest run stamps all its events alike), and how many events were
# ingested up to that moment.
VERSIONS_AT = "versions_at"


def versions_since(conn: sqlite3.Connection) -> dict[str, str] | None:
    """Every session's version (pipeline/inputs.session_versions) from the stored ones and
    the sessions with events ingested since the last pass; None when that cannot be told
    (no mark, or an event ingested up to it changed or vanished: then every session's is
    counted again)."""
    from looma_git.pipeline.inputs import session_versions_of

    mark = get_meta(conn, VERSIONS_AT)
    if not mark:
        return None
    at, n = (int(x) for x in mark.split("/"))
    if conn.execute("SELECT COUNT(*) FROM events WHERE ingested_at <= ?",
                    (at,)).fetchone()[0] != n:
        return None
    out = stored_sessions(conn)
    # No DISTINCT: with it SQLite walks the whole table in session order (events_session)
    # instead of the few new rows through events_ingested (0.24 s at 5,000 sessions).
    fresh = {(r[0], r[1]) for r in conn.execute(
        "SELECT agent, session_id FROM events WHERE ingested_at > ?", (at,))}
    out.update(session_versions_of(conn, sorted(fresh)))
    return out


def mark_versions(conn: sqlite3.Connection) -> None:
    """Note where the events stand (`versions_since`), as the versions are saved."""
    at = conn.execute("SELECT MAX(ingested_at) FROM events").fetchone()[0]
    if at is None:
        set_meta(conn, VERSIONS_AT, "")
        return
    n = conn.execute("SELECT COUNT(*) FROM events WHERE ingested_at <= ?", (at,)).fetchone()[0]
    set_meta(conn, VERSIONS_AT, f"{int(at)}/{n}")


def window_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM refine_signals").fetchone()[0])


LINKS = "\x00links"  # refine_state row: the last pass's links (pipeline/resolve_links.py)


def load_state(conn: sqlite3.Connection, code: str) -> Any:
    """The kept resolver state (pipeline/resolve_state.py) if this code wrote it, else None;
    a damaged one reads as absent (the pass replays, never trusts it)."""
    import pickle

    if get_meta(conn, "memo_code") != code:
        return None
    try:
        rows = dict(conn.execute("SELECT id, blob FROM refine_state WHERE id != ?",
                                 (LINKS,)).fetchall())
        if "" not in rows:
            return None
        st = pickle.loads(rows.pop(""))
        if getattr(st, "code", None) != code:
            return None
        st.clusters = {cid: pickle.loads(blob) for cid, blob in rows.items()}
    except Exception:  # a damaged state is rebuilt, never trusted
        return None
    return st


def save_state(conn: sqlite3.Connection, st: Any, changed: frozenset[str] | None) -> None:
    """Keep `st` for the next pass (None: drop the kept one); `changed`: its clusters that
    differ from the stored rows (None: every one)."""
    import pickle

    if st is None or changed is None:
        conn.execute("DELETE FROM refine_state WHERE id != ?", (LINKS,))
    if st is None:
        return
    clusters, st.clusters = st.clusters, {}
    try:
        blob = pickle.dumps(st, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        st.clusters = clusters
    have = ({r[0] for r in conn.execute("SELECT id FROM refine_state WHERE id != ?",
                                        (LINKS,))} if changed is not None else set())
    conn.executemany("DELETE FROM refine_state WHERE id=?",
                     [(k,) for k in have if k and k not in clusters])
    conn.executemany("INSERT OR REPLACE INTO refine_state(id, blob) VALUES (?,?)",
                     [("", blob)] + [(cid, pickle.dumps(clusters[cid],
                                                        protocol=pickle.HIGHEST_PROTOCOL))
                                     for cid in sorted(clusters)
                                     if changed is None or cid in changed])


def appendable(conn: sqlite3.Connection, seeds: list[Any], commits: Any, changed: set[str],
               before: dict[str, str], gone: bool, code: str) -> Any:
    """The kept resolver state when this pass may only append to it (pipeline/resolve_state.py:
    the changed sessions are new ones (a session touching a path the repository gained or
    lost is changed), no session vanished, the same commits, every kept session routed to
    its cluster), else None (the pass replays)."""
    from looma_git.pipeline.resolve_state import commits_fingerprint, routes_unchanged

    if gone or changed & set(before):
        return None
    state = load_state(conn, code)
    if state is None or state.commits_fp != commits_fingerprint(commits):
        return None
    if state.windows != window_count(conn) or not routes_unchanged(state, seeds, changed):
        return None
    return state


def save_kept(conn: sqlite3.Connection, state: Any, changed: frozenset[str] | None,
              id_map: dict[str, str]) -> None:
    """Keep a pass's resolver state (None: none), its clusters under their published names
    (`id_map`); `changed`: its clusters that changed (None: every one)."""
    if state is not None:
        fresh = {k: v for k, v in id_map.items() if k != v}
        renamed = state.renamed(fresh)
        if changed is not None:
            changed = frozenset(fresh.get(c, c) for c in changed) | renamed
    save_state(conn, state, changed)


def new_writes(conn: sqlite3.Connection, sessions: Iterable[str]
               ) -> dict[int, tuple[Any, ...]] | None:
    """Every write (pipeline/link_content.Write) of each line that one of `sessions` wrote and
    a commit adds (what an appending pass checks its new sessions against: looked up from
    their own writes, not from every commit's lines); the written-lines index is brought up
    to date first. The commits' lines are those the index has read (`commit_lines`): an
    appending pass has the last pass's commits, whose content evidence that pass read.
    None when these sessions wrote before every other session did: the content evidence
    then looks at commits the last pass did not (index/written.content_for)."""
    from looma_git.index import written
    from looma_git.pipeline.link_content import Write

    written.update_written(conn)
    want = sorted(set(sessions))
    first = written.earliest_write(conn)
    if first is not None:
        # The earliest write of another session: walks the `ts` index from the start.
        row = conn.execute(f"SELECT MIN(ts) FROM written_lines WHERE ts > 0 AND session "
                           f"NOT IN ({_marks(want)})", want).fetchone()
        if row[0] is None or float(row[0]) > first:
            return None
    events: list[str] = []
    for part in _chunks(want):
        events += [r[0] for r in conn.execute(
            f"SELECT event_id FROM written_seen WHERE session IN ({_marks(part)}) AND n > 0",
            part)]
    lines: set[int] = set()
    for part in _chunks(events):
        lines.update(int(r[0]) for r in conn.execute(
            f"SELECT h FROM written_lines WHERE event_id IN ({_marks(part)})", part))
    added: set[int] = set()
    for part in _chunks(sorted(lines)):
        added.update(int(r[0]) for r in conn.execute(
            f"SELECT DISTINCT h FROM commit_lines WHERE h IN ({_marks(part)})", part))
    out: dict[int, list[Any]] = {}
    for part in _chunks(sorted(added)):
        for h, f, session, ts in conn.execute(
                f"SELECT h, file, session, ts FROM written_lines WHERE h IN ({_marks(part)})",
                part):
            out.setdefault(int(h), []).append(Write(f or None, session, float(ts or 0.0)))
    return {k: tuple(v) for k, v in out.items()}


CHUNK = 500  # bound parameters per query


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for i in range(0, len(items), CHUNK):
        yield items[i:i + CHUNK]


def _marks(part: list[Any]) -> str:
    return ",".join("?" * len(part))


def load_links(conn: sqlite3.Connection, code: str) -> Any:
    """The last pass's LinkMemo if this code wrote it, else None (a damaged one too)."""
    import pickle

    if get_meta(conn, "memo_code") != code:
        return None
    row = conn.execute("SELECT blob FROM refine_state WHERE id=?", (LINKS,)).fetchone()
    try:
        memo = pickle.loads(row[0]) if row else None
    except Exception:  # a damaged memo links every commit again
        return None
    return memo if getattr(memo, "code", None) == code else None


def save_links(conn: sqlite3.Connection, memo: Any, code: str) -> None:
    """Keep a pass's LinkMemo (None: drop it), tagged with the code that judged it."""
    import pickle
    from dataclasses import replace

    if memo is None:
        conn.execute("DELETE FROM refine_state WHERE id=?", (LINKS,))
        return
    blob = pickle.dumps(replace(memo, code=code), protocol=pickle.HIGHEST_PROTOCOL)
    row = conn.execute("SELECT blob FROM refine_state WHERE id=?", (LINKS,)).fetchone()
    if row is None or bytes(row[0]) != blob:  # (unchanged: its pages are not written again)
        conn.execute("INSERT OR REPLACE INTO refine_state(id, blob) VALUES (?,?)",
                     (LINKS, blob))


# The seeds the last pass resolved against (the next pass's replay compares its own with
# them), one refine_meta row each: a pass rewrites only the seeds the ledger changed, where one
# document of every seed was rewritten whole (0.6 MB at 5,000 sessions) after every pass.
SEED, SEED_END = "seed:", "seed;"
SEED_ROWS = "seeds_rows"


def _seed_json(s: Any) -> str:
    import json

    return json.dumps({"id": s.id, "title": s.title, "files": sorted(s.files),
                       "aliases": list(s.aliases), "sessions": sorted(s.sessions),
                       "branch": s.branch, "quarantined": s.quarantined,
                       "owns": sorted(s.owns), "group": s.group}, sort_keys=True)


def save_seeds(conn: sqlite3.Connection, seeds: Iterable[Any]) -> None:
    """Keep the seeds a pass resolved against, writing only the rows that changed."""
    want = {SEED + s.id: _seed_json(s) for s in seeds}
    have = dict(conn.execute("SELECT key, value FROM refine_meta WHERE key >= ? AND key < ?",
                             (SEED, SEED_END)).fetchall())
    conn.executemany("DELETE FROM refine_meta WHERE key=?", [(k,) for k in have
                                                             if k not in want])
    conn.executemany("INSERT OR REPLACE INTO refine_meta(key, value) VALUES (?,?)",
                     [(k, v) for k, v in want.items() if have.get(k) != v])
    conn.execute("DELETE FROM refine_meta WHERE key='seeds_json'")  # (the former document)
    set_meta(conn, SEED_ROWS, "1")


def load_seeds(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """The last pass's seeds (in id order, as `seeds_from_state` gives them), or None."""
    import json

    from looma_git.index import workmodel
    from looma_git.pipeline.clusters import Seed

    if get_meta(conn, SEED_ROWS) is None:
        return workmodel.load_seeds(conn)  # a store the previous version wrote
    out = []
    for (raw,) in conn.execute("SELECT value FROM refine_meta WHERE key >= ? AND key < ? "
                               "ORDER BY key", (SEED, SEED_END)):
        d = json.loads(raw)
        out.append(Seed(id=d["id"], title=d["title"], files=frozenset(d["files"]),
                        aliases=tuple(d["aliases"]), sessions=frozenset(d["sessions"]),
                        branch=d["branch"], quarantined=bool(d["quarantined"]),
                        owns=frozenset(d["owns"]), group=d["group"]))
    return tuple(out)
