"""Small read queries of store.db for the read commands and `looma status`/`health`."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from looma_git.gitrepo import RepoPaths
from looma_git.index import schema, storedb

LOCAL_TABLES = ("refine_workitems", "refine_memories")


def local_rows(paths: RepoPaths, table: str) -> list[tuple[str, dict[str, Any], bool]]:
    """(id, data, promoted) of the last refinery pass's local WorkItems or memories, by id,
    without importing the refinery (a read path stays light); [] before any pass, on a clone
    without transcripts, or when store.db cannot be read."""
    if table not in LOCAL_TABLES or not paths.store_db.exists():
        return []
    try:
        conn = storedb.connect(paths, readonly=True)
    except Exception:  # a missing or unreadable store: no local candidates to show
        return []
    try:
        rows = conn.execute(f"SELECT id, json, promoted FROM {table} ORDER BY id").fetchall()
    except sqlite3.Error:
        return []  # no refinery pass yet
    finally:
        conn.close()
    out = []
    for r in rows:
        try:
            out.append((str(r[0]), dict(json.loads(r[1])), bool(r[2])))
        except (ValueError, TypeError):
            continue
    return out


def session_rows(paths: RepoPaths, sessions: tuple[tuple[str, str], ...]
                 ) -> list[dict[str, Any]]:
    """{agent, id, first, last, events} per (agent, session id), most recent first (only
    agent and id when store.db does not know the session)."""
    rows = {(a, s): {"agent": a, "id": s} for a, s in sessions}
    if paths.store_db.exists():
        conn = storedb.connect(paths, readonly=True)
        try:
            for a, s in sessions:
                r = conn.execute("SELECT first_ts, last_ts, event_count FROM sessions "
                                 "WHERE agent=? AND session_id=?", (a, s)).fetchone()
                if r:
                    rows[(a, s)].update(first=r[0], last=r[1], events=r[2])
        except Exception:
            pass
        finally:
            conn.close()
    return sorted(rows.values(), key=lambda r: str(r.get("last") or ""), reverse=True)


def refined_before(paths: RepoPaths) -> bool:
    """Whether a refinery pass has stored its WorkItems in this clone."""
    if not paths.store_db.exists():
        return False
    conn = storedb.connect(paths, readonly=True)
    try:
        return conn.execute("SELECT 1 FROM refine_workitems LIMIT 1").fetchone() is not None
    except Exception:
        return False
    finally:
        conn.close()


def model_stale(paths: RepoPaths) -> bool | None:
    """Events were ingested after the work model was last built (None: cannot tell)."""
    if not paths.store_db.exists():
        return None
    conn = storedb.connect(paths, readonly=True)
    try:
        newest = conn.execute("SELECT MAX(ingested_at) FROM events").fetchone()[0]
        row = conn.execute("SELECT value FROM refine_meta WHERE key='events_ingested_at'"
                           ).fetchone()
    except Exception:
        return None
    finally:
        conn.close()
    if not newest:
        return False
    return row is None or str(newest) > str(row[0])


def ingestion(paths: RepoPaths) -> dict[str, Any]:
    """Sessions per agent, events, the last ingest and the ingest counters (noise,
    redactions...) summed per kind and key; {"error": ...} when store.db is unreadable."""
    if not paths.store_db.exists():
        return {"sessions": {}, "events": 0, "last_ingest": None}
    conn = storedb.connect(paths, readonly=True)
    try:
        sessions = {r[0]: r[1] for r in conn.execute(
            "SELECT agent, COUNT(*) FROM sessions GROUP BY agent ORDER BY agent")}
        events = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        last = conn.execute("SELECT MAX(ingested_at) FROM events").fetchone()[0]
        counts: dict[str, dict[str, int]] = {}
        for kind, key, n in conn.execute(
                "SELECT kind, key, SUM(n) FROM ingest_counts GROUP BY kind, key"):
            counts.setdefault(kind, {})[key] = int(n)
        return {"sessions": sessions, "events": events, "last_ingest": last, "counts": counts}
    except Exception as exc:  # a damaged store is reported, not fatal
        return {"error": f"store.db unreadable: {exc}"}
    finally:
        conn.close()


def save_health(paths: RepoPaths, metrics: dict[str, Any]) -> dict[str, Any] | None:
    """Keep `metrics` as this run's health snapshot; returns the previous one. A read-only
    clone keeps no time series (None, nothing written)."""
    previous = None
    try:
        conn = storedb.connect(paths)
        try:
            conn.execute(schema.HEALTH)
            row = conn.execute("SELECT json FROM health_snapshots ORDER BY ts DESC LIMIT 1"
                               ).fetchone()
            previous = json.loads(row[0]) if row else None
            with conn:
                conn.execute("INSERT OR REPLACE INTO health_snapshots(ts, json) VALUES (?, ?)",
                             (int(time.time()), json.dumps(metrics, sort_keys=True)))
        finally:
            conn.close()
    except Exception:
        pass  # a read-only clone still gets its metrics, just no time series
    return previous
