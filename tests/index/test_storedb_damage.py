"""store.db's damage check beside a live writer: a checkpoint in progress is not truncation."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from looma_git.index.storedb import damage

# Writes and closes (the close checkpoints the WAL into the file) in a loop until killed.
_WRITER = r"""
import os, sqlite3, sys
db = sys.argv[1]
while True:
    c = sqlite3.connect(db)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE IF NOT EXISTS t(x)")
    c.executemany("INSERT INTO t VALUES(?)", [(os.urandom(200),) for _ in range(300)])
    c.commit()
    c.close()
    print("w", flush=True)
"""


def test_a_store_being_checkpointed_is_never_judged_damaged(tmp_path: Path) -> None:
    """SQLite copies WAL frames in page order: the header (page 1, with the new page count)
    lands before the pages that extend the file. Judged by size alone, ~4% of checks beside
    this writer called a healthy store truncated, and a writable open then moved it aside
    under the writer (the "disk I/O error" of a concurrent first open)."""
    db = tmp_path / "store.db"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(db)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "w\n"
        checks, verdicts = 0, []
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            got = damage(db)
            checks += 1
            if got:
                verdicts.append(got)
    finally:
        writer.kill()
        writer.wait()
    assert checks > 1000
    assert verdicts == []


def test_a_store_cut_short_while_idle_is_still_found(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "store.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t(x)")
    conn.executemany("INSERT INTO t VALUES(?)", [(b"x" * 500,) for _ in range(200)])
    conn.commit()
    conn.close()  # the last connection: the WAL is checkpointed and emptied
    assert damage(db) is None
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size // 2)
    assert "truncated" in (damage(db) or "")
