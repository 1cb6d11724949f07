"""A big pass stores its rows from a forked child beside its ledger appends (api/refine_save.py):
store.db ends as the pass that stores them itself leaves it, row for row, read back from a
real store after a real pass, and the next pass is incremental and publishes nothing."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from looma_git.api import refine_save
from looma_git.api.refine import refine_and_publish
from looma_git.gitrepo import find_repo
from looma_git.ingest import parallel
from looma_git.store import ledger_ref
from tests.pipeline.test_incremental import POOL
from tests.pipeline.test_incremental_ledger import _store, _template

pytestmark = pytest.mark.skipif(not parallel.fork_available(), reason="needs fork (Linux)")

# Rows that name when they were written, not what: not compared.
_STAMPS = {"refine_meta": {"ledger_after"}}


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name")]
        out = {}
        for t in tables:
            rows = sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
            skip = _STAMPS.get(t, set())
            out[t] = [r for r in rows if not (skip and r and r[0] in skip)]
        return out
    finally:
        conn.close()


def test_rows_stored_by_a_child_beside_the_appends_equal_those_stored_inline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _template(tmp_path / "a")
    for s in POOL:
        _store(root, s)
    other = tmp_path / "b" / "repo"
    shutil.copytree(root, other, symlinks=True)
    forks: list[int] = []
    real_start = refine_save.start_saving

    def counting(*args: object, **kw: object) -> object:
        done = real_start(*args, **kw)  # type: ignore[arg-type]
        forks.append(refine_save.BESIDE_FROM)
        return done

    monkeypatch.setattr(refine_save, "start_saving", counting)
    monkeypatch.setattr(parallel, "default_workers", lambda: 2)
    # The same clone (copied) at the same time: op ids, so ledger ids, are the same in both.
    monkeypatch.setattr(ledger_ref, "utc_now", lambda: "2026-05-01T00:00:00Z")
    results = {}
    for repo, beside in ((root, 10**9), (other, 0)):
        monkeypatch.setattr(refine_save, "BESIDE_FROM", beside)
        paths = find_repo(repo)
        first = refine_and_publish(paths, incremental=True)
        assert first.ops.get("workitem.create")  # published, then settled
        again = refine_and_publish(paths, incremental=True)
        assert again.mode == "incremental" and again.ops_written == 0
        results[beside] = (first.workitems, first.links, first.memories)
    assert forks.count(0) >= 1 and forks.count(10**9) >= 1
    assert results[0] == results[10**9]
    inline = _rows(find_repo(root).store_db)
    beside_rows = _rows(find_repo(other).store_db)
    for table in ("refine_workitems", "refine_signals", "refine_targets", "refine_meta"):
        assert inline[table]
    assert beside_rows == inline
