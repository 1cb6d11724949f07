"""The work model's store (index/workmodel.py): what a pass writes is what it produced, and a
pass writes only the rows that changed."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, replace

from looma_git.api.refine_save import _published_names
from looma_git.index import link_targets, storedb, workmodel
from looma_git.pipeline.refine import RefineInput, refine
from tests.pipeline.test_incremental import COMMITS, KNOWN, POOL


def _result():
    return refine(RefineInput(sessions=tuple(POOL), commits=tuple(COMMITS), known_paths=KNOWN,
                              sha_lookup={}))


def _conn() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    storedb.ensure_schema(conn)  # every named migration, as a writable connect applies them
    return conn


def test_plain_dumps_exactly_what_asdict_dumped() -> None:
    res = _result()
    assert res.workitems and res.memories and any(sw.cands for sw in res.stored)
    for view in (*res.workitems, *res.memories, *(c for sw in res.stored for c in sw.cands)):
        assert (json.dumps(workmodel.plain(view), sort_keys=True, default=str)
                == json.dumps(asdict(view), sort_keys=True, default=str))


def test_windows_read_back_equal_and_an_unchanged_pass_rewrites_no_row() -> None:
    res = _result()
    conn = _conn()
    versions = {s.key: "1/1/1" for s in POOL}
    workmodel.save_windows(conn, res.stored, versions, KNOWN)
    loaded = tuple(workmodel.stored_windows(conn, skip=set()))
    assert sorted(loaded, key=lambda sw: sw.signal.key) == sorted(
        res.stored, key=lambda sw: sw.signal.key)
    rowids = dict(conn.execute("SELECT key, rowid FROM refine_signals").fetchall())
    grown = dict(versions, **{POOL[0].key: "2/2/2"})
    moved = replace(res.stored[0], cluster="wi_elsewhere")
    workmodel.save_windows(conn, (moved, *res.stored[1:]), grown, KNOWN, loaded)
    after = dict(conn.execute("SELECT key, rowid FROM refine_signals").fetchall())
    assert set(after) == set(rowids)
    assert [k for k in after if after[k] != rowids[k]] == [moved.signal.key]  # only it
    assert workmodel.stored_sessions(conn) == grown
    workmodel.save_windows(conn, res.stored, {POOL[1].key: "1/1/1"}, KNOWN, loaded)
    assert workmodel.stored_sessions(conn) == {POOL[1].key: "1/1/1"}  # vanished ones go


def test_published_clusters_are_stored_under_their_ledger_ids() -> None:
    res = _result()
    local = res.stored[0].cluster
    renamed, changed = _published_names(res.stored, {local: "wi_published"})
    assert changed
    assert {sw.signal.key for sw in renamed if sw.cluster == "wi_published"} == {
        sw.signal.key for sw in res.stored if sw.cluster == local}
    assert all(c != local for sw in renamed for c, _ in sw.related)
    assert [(sw.signal, sw.cands) for sw in renamed] == [(sw.signal, sw.cands)
                                                         for sw in res.stored]
    same, changed = _published_names(res.stored, {local: local})
    assert same == res.stored and not changed  # seeds keep their names: no rename


def test_targets_rewrite_only_what_changed_and_read_back_the_same() -> None:
    from looma_git.pipeline.linking import Target

    def tgt(i: int, files: tuple[str, ...]) -> Target:
        return Target(id=f"lw_{i}", title=f"t{i}", files=frozenset(files),
                      branches=frozenset({f"feat/{i}"}), spans=((1.0, 2.0),),
                      terms=(("x", 1),), windows=((f"claude-code:s{i}", 1.0, 2.0),))

    def table(conn: sqlite3.Connection) -> tuple[list, list]:
        return (sorted(conn.execute("SELECT * FROM refine_targets").fetchall()),
                sorted(conn.execute("SELECT * FROM refine_target_keys").fetchall()))

    for n in (3, 40):  # a few changed targets, then more than _FEW_TARGETS
        conn, fresh = _conn(), _conn()
        old = [tgt(i, (f"a{i}.py",)) for i in range(n)]
        new = [tgt(i, (f"b{i}.py",)) if i % 2 == 0 or i == n else old[i]
               for i in range(1, n + 1)]
        link_targets.save_targets(conn, old, {"lw_1": "wi_1"}, {"lw_2": {"title": "t2"}})
        link_targets.save_targets(conn, new, {}, {"lw_3": {"title": "t3"}})
        link_targets.save_targets(fresh, new, {}, {"lw_3": {"title": "t3"}})
        assert table(conn) == table(fresh)
        near = link_targets.targets_near(conn, {"b2.py", "a1.py"}, set())
        assert [t.id for t, _, _ in near] == ["lw_1", "lw_2"]


def test_targets_a_pass_reused_keep_their_rows_unserialised() -> None:
    """A WorkItem the pass reused whole (its memo entry) keeps its stored target row, even when
    the pass computes neither its ledger id nor its create payload; with many others changed
    (every key rewritten) its keys are written again too."""
    from looma_git.pipeline.linking import Target

    def tgt(i: int, f: str) -> Target:
        return Target(id=f"lw_{i}", title=f"t{i}", files=frozenset({f}),
                      branches=frozenset({f"feat/{i}"}), spans=((1.0, 2.0),),
                      terms=(("x", 1),), windows=((f"claude-code:s{i}", 1.0, 2.0),))

    def table(conn: sqlite3.Connection) -> tuple[list, list]:
        return (sorted(conn.execute("SELECT * FROM refine_targets").fetchall()),
                sorted(conn.execute("SELECT * FROM refine_target_keys").fetchall()))

    for n in (3, 40):
        conn, fresh = _conn(), _conn()
        old = [tgt(i, f"a{i}.py") for i in range(n)]
        new = [old[0], *(tgt(i, f"b{i}.py") for i in range(1, n))]
        link_targets.save_targets(conn, old, {"lw_0": "wi_0"}, {"lw_1": {"title": "t1"}})
        link_targets.save_targets(conn, new, {}, {}, keep=frozenset({"lw_0", "lw_gone"}))
        link_targets.save_targets(fresh, new, {"lw_0": "wi_0"}, {})
        assert table(conn) == table(fresh)
