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
