"""Every table of store.db, in one place: the ingest tables, the work model's, health snapshots.

store.db is a local cache (`looma reindex`/`reprocess` rebuild it): add columns, never rename.
Who creates what: `storedb.connect` (meta), `storedb.ensure_schema` (INGEST),
`workmodel.ensure` (WORKMODEL), `index.reads.save_health` (HEALTH); the LLM answer cache
(pipeline/llm.py) keeps its own table next to them, and vectors live in their own file.
"""

from __future__ import annotations

META = "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)"

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
