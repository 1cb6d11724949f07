"""`storedb.transaction`: one transaction on an autocommit store connection, where `with
conn:` begins none (every row was a transaction of its own, and a failure left half a write)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from looma_git.index import storedb


def test_a_failure_inside_stores_nothing_and_a_success_stores_all(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)  # as storedb opens it
    conn.execute("CREATE TABLE t(x INTEGER)")
    with pytest.raises(RuntimeError), storedb.transaction(conn):
        conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(5)])
        raise RuntimeError("disk full")
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
    with storedb.transaction(conn):
        conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(5)])
        assert conn.in_transaction
        with storedb.transaction(conn):  # nested: part of the outer one
            conn.execute("INSERT INTO t VALUES (5)")
        assert conn.in_transaction
    assert not conn.in_transaction
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 6


def test_a_transaction_that_reads_first_is_not_refused_when_another_process_commits(
        tmp_path: Path) -> None:
    """A deferred transaction that read holds a snapshot; another connection's commit after
    it made SQLite refuse the first write at once ("database is locked", no busy wait): a
    cold ingest's settling pass failed so beside the message index. The write lock is taken
    at BEGIN, so the other writer waits for this transaction instead."""
    import subprocess
    import sys

    db = tmp_path / "s.db"
    setup = sqlite3.connect(db)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE t(x TEXT)")
    setup.execute("INSERT INTO t VALUES ('old')")
    setup.commit()
    setup.close()
    conn = sqlite3.connect(db, isolation_level=None, timeout=10)
    # The other writer, a process of its own (as the message index is): it commits a row.
    other = [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], "
             "timeout=10); c.execute(\"INSERT INTO t VALUES ('other')\"); c.commit()", str(db)]
    with storedb.transaction(conn):
        rows = conn.execute("SELECT x FROM t").fetchall()  # the snapshot this pass read
        writer = subprocess.Popen(other)
        try:
            writer.wait(timeout=0.5)  # deferred: it commits at once; here it waits for us
        except subprocess.TimeoutExpired:
            pass
        conn.execute("DELETE FROM t WHERE x = ?", rows[0])
        conn.execute("INSERT INTO t VALUES ('new')")
    assert writer.wait(timeout=10) == 0
    assert sorted(r[0] for r in conn.execute("SELECT x FROM t")) == ["new", "other"]
