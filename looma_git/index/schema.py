"""Every table of store.db, in one place, as named migrations applied in order and recorded.

store.db is a local cache (`looma reindex`/`reprocess` rebuild it): add tables and columns,
never rename or drop. `storedb.connect` applies the migrations a writable store has not seen
yet and records each name in the `migrations` table; a store that records a name this list
does not hold was written by a newer looma, and is refused with the way out (upgrade, or
`looma reindex`, which sets it aside and rebuilds). To add a table: write its DDL here and
append one `Migration(...)` line to MIGRATIONS (CONTRIBUTING.md, "how to add a store.db
table"). Vectors live in their own file (index/vectors.py), not here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

META = "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)"
# What `connect` reads to know which migrations a store has seen (`seq`: the order applied).
MIGRATIONS_TABLE = ("CREATE TABLE IF NOT EXISTS migrations(name TEXT PRIMARY KEY, seq INTEGER, "
                    "applied_at INTEGER)")

# The refinery reads these tables: keep names and columns stable (add columns, never rename).
INGEST = """
CREATE TABLE IF NOT EXISTS sessions(agent TEXT, session_id TEXT, project_root TEXT, git_remote TEXT,
  git_branch TEXT, first_ts TEXT, last_ts TEXT, event_count INTEGER, source_path TEXT,
  parent_session TEXT, is_subagent INTEGER DEFAULT 0, PRIMARY KEY(agent, session_id));
CREATE TABLE IF NOT EXISTS events(event_id TEXT PRIMARY KEY, agent TEXT, session_id TEXT, seq INTEGER,
  ts TEXT, role TEXT, model TEXT, branch TEXT, text TEXT, raw_json TEXT, schema_version TEXT,
  ingested_at INTEGER, extra TEXT, content_sig TEXT, raw_ref TEXT);
CREATE INDEX IF NOT EXISTS events_session ON events(agent, session_id, seq);
CREATE INDEX IF NOT EXISTS events_ingested ON events(ingested_at);
CREATE TABLE IF NOT EXISTS tool_calls(event_id TEXT, idx INTEGER, name TEXT, kind TEXT, command TEXT,
  exit_code INTEGER, is_error INTEGER, test_outcome TEXT, PRIMARY KEY(event_id, idx));
CREATE TABLE IF NOT EXISTS tool_files(event_id TEXT, idx INTEGER, raw_path TEXT, relpath TEXT, op TEXT);
CREATE INDEX IF NOT EXISTS tool_files_event ON tool_files(event_id);
CREATE INDEX IF NOT EXISTS tool_files_relpath ON tool_files(relpath);
CREATE TABLE IF NOT EXISTS cursors(source_id TEXT PRIMARY KEY, agent TEXT, path TEXT, "offset" INTEGER,
  head_fp TEXT, content_hash TEXT, state TEXT, size INTEGER, mtime_ns INTEGER, updated_at INTEGER);
CREATE TABLE IF NOT EXISTS ingest_counts(run_id INTEGER, kind TEXT, key TEXT, n INTEGER);
"""

# The work model: the last refinery pass's windows, WorkItems, memories and link targets.
WORKMODEL = """
CREATE TABLE IF NOT EXISTS refine_workitems(id TEXT PRIMARY KEY, ledger_id TEXT, promoted INTEGER,
  json TEXT);
CREATE TABLE IF NOT EXISTS refine_memories(id TEXT PRIMARY KEY, ledger_id TEXT, workitem TEXT,
  promoted INTEGER, json TEXT);
CREATE TABLE IF NOT EXISTS refine_meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS refine_windows(key TEXT PRIMARY KEY, workitem TEXT, text TEXT);
CREATE TABLE IF NOT EXISTS refine_window_events(key TEXT PRIMARY KEY, agent TEXT, session_id TEXT,
  workitem TEXT, event_ids TEXT);
CREATE TABLE IF NOT EXISTS refine_signals(key TEXT PRIMARY KEY, session TEXT, cluster TEXT,
  json TEXT);
CREATE INDEX IF NOT EXISTS refine_signals_session ON refine_signals(session);
CREATE TABLE IF NOT EXISTS refine_sessions(key TEXT PRIMARY KEY, version TEXT);
CREATE TABLE IF NOT EXISTS refine_known(path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS refine_targets(id TEXT PRIMARY KEY, ledger_id TEXT, json TEXT,
  create_json TEXT);
CREATE TABLE IF NOT EXISTS refine_target_keys(key TEXT, id TEXT);
CREATE INDEX IF NOT EXISTS refine_target_keys_key ON refine_target_keys(key);
"""

# `looma health`: one metrics snapshot per run, the time series its trends are read from.
HEALTH = """CREATE TABLE IF NOT EXISTS health_snapshots(ts INTEGER PRIMARY KEY,
  json TEXT)"""

# What sessions wrote and commits added, as line keys (index/written.py).
WRITTEN = """
CREATE TABLE IF NOT EXISTS written_lines(h INTEGER, file TEXT, session TEXT, ts REAL,
  event_id TEXT);
CREATE INDEX IF NOT EXISTS written_lines_h ON written_lines(h);
CREATE INDEX IF NOT EXISTS written_lines_event ON written_lines(event_id);
CREATE TABLE IF NOT EXISTS written_seen(event_id TEXT PRIMARY KEY, ingested_at INTEGER,
  session TEXT, n INTEGER);
CREATE TABLE IF NOT EXISTS commit_lines(sha TEXT, file TEXT, h INTEGER);
CREATE INDEX IF NOT EXISTS commit_lines_sha ON commit_lines(sha);
CREATE TABLE IF NOT EXISTS commit_seen(sha TEXT PRIMARY KEY, n INTEGER);
"""

# Raw LLM extraction replies by cache key (pipeline/llm.py).
LLM_CACHE = ("CREATE TABLE IF NOT EXISTS llm_cache(key TEXT PRIMARY KEY, model TEXT, "
             "response TEXT, created INTEGER)")


def _events_late_columns(conn: sqlite3.Connection) -> None:
    # Stores from before these columns existed have an events table without them; CREATE
    # TABLE IF NOT EXISTS leaves such a table as it is, so they are added one by one.
    cols = {row[1] for row in conn.execute("PRAGMA table_info(events)")}
    for col in ("extra", "content_sig", "raw_ref"):
        if col not in cols:
            conn.execute(f"ALTER TABLE events ADD COLUMN {col} TEXT")


# Per cluster, what the last pass derived from it and from which inputs (ClusterMemo,
# pickled: only this user's processes write store.db, as for the fold cache).
REFINE_MEMO = "CREATE TABLE IF NOT EXISTS refine_memo(id TEXT PRIMARY KEY, blob BLOB)"
# Per window, what its decision was made from (StoredWindow.scored, .founded): apart from
# its row, as it changes without the window (the pass after one that published its cluster
# routes it), and rewriting the row means serialising its candidates.
REFINE_DECISIONS = ("CREATE TABLE IF NOT EXISTS refine_decisions(key TEXT PRIMARY KEY, "
                    "scored TEXT, founded INTEGER)")

# What the drain's link step looks up for one commit, by key instead of by scan (its cost must
# not grow with the history): the earliest write (MIN over an index), and which of the few
# sessions of the WorkItems it scores show what they wrote (index/written.py).
LINK_POSTINGS = """
CREATE INDEX IF NOT EXISTS written_lines_ts ON written_lines(ts);
CREATE INDEX IF NOT EXISTS written_seen_session ON written_seen(session, n);
"""


# The resolver's state after the last pass (pipeline/resolve_state.py, pickled): one row per
# cluster (what its windows added) and the pass-wide part under id ''; the windows of one
# cluster are read through `refine_signals_cluster` (a pass that only appends new sessions
# reads no other stored window).
REFINE_STATE = ("CREATE TABLE IF NOT EXISTS refine_state(id TEXT PRIMARY KEY, blob BLOB);\n"
                "CREATE INDEX IF NOT EXISTS refine_signals_cluster ON refine_signals(cluster)")


@dataclass(frozen=True)
class Migration:
    """One named step: DDL (statements separated by `;`) or a function of the connection.

    Applied once per store, in list order, inside one write transaction with its record in
    `migrations`. The steps up to `llm_cache` are the schema stores had before migrations
    were named; they are written to be harmless on such a store (IF NOT EXISTS, columns
    checked first), which is how an old store upgrades in place."""

    name: str
    sql: str = ""
    run: Callable[[sqlite3.Connection], None] | None = None


# Append only: never edit, reorder, rename or remove a step another clone may have applied.
MIGRATIONS: tuple[Migration, ...] = (
    Migration("meta", META),
    Migration("ingest", INGEST),
    Migration("events_late_columns", run=_events_late_columns),
    Migration("workmodel", WORKMODEL),
    Migration("health", HEALTH),
    Migration("written", WRITTEN),
    Migration("llm_cache", LLM_CACHE),
    Migration("refine_memo", f"{REFINE_MEMO};\n{REFINE_DECISIONS}"),
    Migration("refine_state", REFINE_STATE),
    Migration("link_postings", LINK_POSTINGS),
)
