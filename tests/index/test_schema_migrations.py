"""store.db's named migrations: an old store upgrades in place, a newer one is refused."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from looma_git.errors import InvalidDataError, ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.index import schema, storedb

# The schema as the code before named migrations wrote it (storedb.connect, ensure_schema,
# workmodel.ensure, reads.save_health, written.ensure, the LLM cache), copied verbatim so that
# later edits of schema.py cannot make this store look newer than it was.
OLD_CONNECT = [
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)",
    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '1')",
]
OLD_EVENTS_BEFORE_LATE_COLUMNS = """CREATE TABLE IF NOT EXISTS events(event_id TEXT PRIMARY KEY,
  agent TEXT, session_id TEXT, seq INTEGER, ts TEXT, role TEXT, model TEXT, branch TEXT, text TEXT,
  raw_json TEXT, schema_version TEXT, ingested_at INTEGER)"""
OLD_INGEST = """
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
OLD_WORKMODEL = """
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
OLD_HEALTH = "CREATE TABLE IF NOT EXISTS health_snapshots(ts INTEGER PRIMARY KEY, json TEXT)"
OLD_WRITTEN = """
CREATE TABLE IF NOT EXISTS written_lines(h INTEGER, file TEXT, session TEXT, ts REAL,
  event_id TEXT);
CREATE TABLE IF NOT EXISTS written_seen(event_id TEXT PRIMARY KEY, ingested_at INTEGER,
  session TEXT, n INTEGER);
CREATE TABLE IF NOT EXISTS commit_lines(sha TEXT, file TEXT, h INTEGER);
CREATE TABLE IF NOT EXISTS commit_seen(sha TEXT PRIMARY KEY, n INTEGER);
"""
OLD_LLM = ("CREATE TABLE IF NOT EXISTS llm_cache(key TEXT PRIMARY KEY, model TEXT, "
           "response TEXT, created INTEGER)")


def _paths(tmp_path: Path) -> RepoPaths:
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    return RepoPaths(worktree=tmp_path, git_dir=git_dir, common_dir=git_dir)


def _old_store(paths: RepoPaths, *, late_columns: bool = True) -> None:
    """A store.db as the previous code left it after ingest, refine and health, with rows."""
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(paths.store_db)
    conn.execute("PRAGMA journal_mode=WAL")
    for stmt in OLD_CONNECT:
        conn.execute(stmt)
    ingest = OLD_INGEST if late_columns else OLD_INGEST.replace(
        OLD_INGEST[OLD_INGEST.index("CREATE TABLE IF NOT EXISTS events"):
                   OLD_INGEST.index(";", OLD_INGEST.index("CREATE TABLE IF NOT EXISTS events"))],
        OLD_EVENTS_BEFORE_LATE_COLUMNS)
    conn.executescript(ingest + OLD_WORKMODEL + OLD_HEALTH + ";" + OLD_WRITTEN + OLD_LLM + ";")
    conn.execute("INSERT INTO meta VALUES('ingest_run', '7')")
    conn.execute("INSERT INTO sessions(agent, session_id, event_count) VALUES('claude', 's1', 1)")
    conn.execute("INSERT INTO events(event_id, agent, session_id, seq, text) "
                 "VALUES('e1', 'claude', 's1', 0, 'add the parser')")
    conn.execute("INSERT INTO refine_workitems VALUES('wi_1', 'wi_1', 1, '{}')")
    conn.execute("INSERT INTO health_snapshots VALUES(1, '{\"x\": 1}')")
    conn.execute("INSERT INTO written_lines VALUES(42, 'a.py', 'claude:s1', 1.0, 'e1')")
    conn.execute("INSERT INTO llm_cache VALUES('k', 'm', 'r', 1)")
    conn.commit()
    conn.close()


def _columns(db: Path) -> dict[str, set[str]]:
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return {t: {r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')} for t in tables}
    finally:
        conn.close()


def _fresh_columns(tmp_path: Path) -> dict[str, set[str]]:
    fresh = _paths(tmp_path / "fresh")
    storedb.connect(fresh).close()
    return _columns(fresh.store_db)


def _rows(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    queries = {
        "meta": "SELECT key, value FROM meta ORDER BY key",
        "events": "SELECT event_id, text FROM events",
        "sessions": "SELECT agent, session_id, event_count FROM sessions",
        "refine_workitems": "SELECT id, json FROM refine_workitems",
        "health_snapshots": "SELECT ts, json FROM health_snapshots",
        "written_lines": "SELECT h, file FROM written_lines",
        "llm_cache": "SELECT key, response FROM llm_cache",
    }
    return {t: [tuple(r) for r in conn.execute(q)] for t, q in queries.items()}


@pytest.mark.parametrize("late_columns", [True, False], ids=["previous", "before-late-columns"])
def test_a_store_from_before_named_migrations_upgrades_in_place(tmp_path, late_columns):
    (tmp_path / "old").mkdir()
    paths = _paths(tmp_path / "old")
    _old_store(paths, late_columns=late_columns)
    conn = storedb.connect(paths)
    try:
        assert storedb.applied(conn) == [m.name for m in schema.MIGRATIONS]
        assert _rows(conn) == {
            "meta": [("ingest_run", "7"), ("schema_version", "1")],
            "events": [("e1", "add the parser")],
            "sessions": [("claude", "s1", 1)],
            "refine_workitems": [("wi_1", "{}")],
            "health_snapshots": [(1, '{"x": 1}')],
            "written_lines": [(42, "a.py")],
            "llm_cache": [("k", "r")],
        }
        conn.execute("UPDATE events SET raw_ref='r', content_sig='c' WHERE event_id='e1'")
    finally:
        conn.close()
    (tmp_path / "fresh").mkdir()
    assert _columns(paths.store_db) == _fresh_columns(tmp_path)


def test_each_migration_runs_once(tmp_path):
    paths = _paths(tmp_path)
    conn = storedb.connect(paths)
    try:
        first = [tuple(r) for r in conn.execute("SELECT name, seq, applied_at FROM migrations")]
        assert storedb.migrate(conn) == []
        assert [tuple(r) for r in conn.execute(
            "SELECT name, seq, applied_at FROM migrations")] == first
        assert [r[1] for r in first] == list(range(1, len(schema.MIGRATIONS) + 1))
    finally:
        conn.close()


def test_an_appended_migration_reaches_a_migrated_store(tmp_path, monkeypatch):
    paths = _paths(tmp_path)
    storedb.connect(paths).close()
    step = schema.Migration("test_notes", "CREATE TABLE IF NOT EXISTS test_notes(k TEXT);\n"
                                          "CREATE INDEX IF NOT EXISTS test_notes_k ON "
                                          "test_notes(k);")
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, step))
    conn = storedb.connect(paths)
    try:
        assert storedb.applied(conn)[-1] == "test_notes"
        assert conn.execute("SELECT seq FROM migrations WHERE name='test_notes'"
                            ).fetchone()[0] == len(schema.MIGRATIONS)
        conn.execute("INSERT INTO test_notes VALUES('x')")
    finally:
        conn.close()


def test_a_failing_migration_leaves_nothing_half_applied(tmp_path, monkeypatch):
    paths = _paths(tmp_path)
    storedb.connect(paths).close()
    bad = schema.Migration("half", "CREATE TABLE half_a(k TEXT);\nCREATE TABLE half_a(k TEXT);")
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, bad))
    with pytest.raises(InvalidDataError):
        storedb.connect(paths)
    monkeypatch.undo()
    conn = storedb.connect(paths)
    try:
        assert "half" not in storedb.applied(conn)
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name='half_a'").fetchone() is None
    finally:
        conn.close()


def test_a_store_a_newer_looma_wrote_is_refused_with_the_way_out(tmp_path):
    paths = _paths(tmp_path)
    conn = storedb.connect(paths)
    conn.execute("INSERT INTO migrations VALUES('from_the_future', 99, 0)")
    conn.execute("INSERT INTO meta VALUES('ingest_run', '3')")
    conn.close()
    for readonly in (False, True):
        with pytest.raises(InvalidDataError) as err:
            storedb.connect(paths, readonly=readonly)
        assert "newer looma" in err.value.message and "from_the_future" in err.value.message
        assert err.value.hint is not None and "looma reindex" in err.value.hint
    # `looma reindex` starts with this check: the newer store is kept aside, a new one built.
    problem = storedb.check_integrity(paths)
    assert problem is not None and "from_the_future" in problem
    assert list(paths.state_dir.glob("store.db.damaged-*"))
    conn = storedb.connect(paths)
    try:
        assert storedb.applied(conn) == [m.name for m in schema.MIGRATIONS]
        assert storedb.get_meta(conn, "ingest_run") is None
    finally:
        conn.close()


def test_migration_names_are_unique_and_each_step_does_something():
    names = [m.name for m in schema.MIGRATIONS]
    assert len(names) == len(set(names))
    assert all(m.sql.strip() or m.run is not None for m in schema.MIGRATIONS)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_migrated_store_that_cannot_be_written_fails_at_connect(tmp_path):
    """Nothing left to migrate is no reason to skip the write check: callers expect a
    ReadOnlyError from connect, not a raw sqlite error at their first write."""
    paths = _paths(tmp_path)
    storedb.connect(paths).close()
    paths.store_db.chmod(0o444)
    try:
        with pytest.raises(ReadOnlyError):
            storedb.connect(paths)
        storedb.connect(paths, readonly=True).close()  # reads still work
    finally:
        paths.store_db.chmod(0o644)


def test_concurrent_first_opens_migrate_once(tmp_path):
    """Two processes opening a new store at once (a hook's drain and an ingest): one applies
    the steps, the other waits on the write lock, re-reads, and finds nothing left to do."""
    import threading

    paths = _paths(tmp_path)
    paths.state_dir.mkdir(parents=True)
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            start.wait()
            storedb.connect(paths).close()
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    conn = sqlite3.connect(paths.store_db)
    try:
        assert [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY seq")] == [
            m.name for m in schema.MIGRATIONS]
    finally:
        conn.close()


def test_the_cli_names_the_way_out_of_a_newer_store_and_reindex_takes_it(repo):
    """Through the real CLI: a command that writes store.db stops with the invalid-data exit
    code and says what to do; `looma reindex` sets the store aside and builds a new one."""
    from looma_git.gitrepo import find_repo
    from tests.helpers import cli

    cli(repo, "init")
    paths = find_repo(repo)
    conn = storedb.connect(paths)
    conn.execute("INSERT INTO migrations VALUES('from_the_future', 99, 0)")
    conn.close()
    proc = cli(repo, "ingest", check=False)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "newer looma" in proc.stderr and "looma reindex" in proc.stderr
    proc = cli(repo, "reindex")
    assert "from_the_future" in proc.stdout and "set aside" in proc.stdout
    cli(repo, "ingest")
    conn = storedb.connect(paths, readonly=True)
    try:
        assert "from_the_future" not in storedb.applied(conn)
    finally:
        conn.close()


def test_a_step_is_split_into_statements_wherever_they_end():
    sql = ("CREATE TABLE a(x TEXT DEFAULT ';'); CREATE TABLE b(y);\n"
           "INSERT INTO a VALUES('x;y')\n;\nCREATE TABLE c(z)")
    assert storedb._statements(sql) == ["CREATE TABLE a(x TEXT DEFAULT ';');",
                                        "CREATE TABLE b(y);", "INSERT INTO a VALUES('x;y')\n;",
                                        "CREATE TABLE c(z)"]
    assert [len(storedb._statements(m.sql)) for m in schema.MIGRATIONS[:2]] == [1, 10]


def test_a_store_of_the_previous_release_gains_the_per_cluster_memo_tables(tmp_path):
    # Stop 24's stores recorded seven steps and created refine_memo/refine_decisions ad hoc
    # on every pass; the step that now owns them runs once there and keeps the rows it finds.
    paths = _paths(tmp_path)
    storedb.connect(paths).close()
    conn = sqlite3.connect(paths.store_db)
    conn.execute("DELETE FROM migrations WHERE name='refine_memo'")
    conn.execute("DROP TABLE refine_memo")
    conn.execute("INSERT INTO refine_decisions VALUES('w1', '[]', 1)")
    conn.commit()
    conn.close()
    conn = storedb.connect(paths)
    try:
        assert "refine_memo" in storedb.applied(conn)
        assert conn.execute("SELECT count(*) FROM refine_memo").fetchone()[0] == 0
        assert [tuple(r) for r in conn.execute("SELECT key, founded FROM refine_decisions")] == [
            ("w1", 1)]
    finally:
        conn.close()
