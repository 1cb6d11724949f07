"""With the ledger in the loop (each pass's WorkItems are the next pass's seeds), an incremental
pass over store.db + a real git repository ends exactly where the full rebuild does, whatever
order sessions and commits arrive in; and a full pass after the last one publishes nothing."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from looma_git.api import ledger
from looma_git.api.refine import refine_and_publish, run_pass
from looma_git.gitrepo import find_repo
from looma_git.index import storedb, workmodel, workmodel_state
from looma_git.pipeline.inputs import Session
from looma_git.pipeline.views import RefineResult
from looma_git.store.gitfacts import CommitInfo
from tests.helpers import cli, git
from tests.pipeline.test_incremental import COMMITS, KNOWN, POOL, arrivals

_TICK = itertools.count(1_800_000_000)


def _store(repo: Path, s: Session) -> None:
    """Write (or grow) session `s` in store.db as the ingest does: events, tool calls, files."""
    conn = storedb.connect(find_repo(repo))
    try:
        storedb.ensure_schema(conn)
        with conn:
            conn.execute("INSERT OR REPLACE INTO sessions(agent, session_id, project_root, "
                         "git_branch, first_ts, last_ts, event_count) VALUES (?,?,?,?,?,?,?)",
                         (s.agent, s.session_id, str(repo), s.branch, s.events[0].ts,
                          s.events[-1].ts, len(s.events)))
            at = next(_TICK)
            for e in s.events:
                eid = f"{s.agent}-{s.session_id}-{e.event_id}"
                if conn.execute("SELECT 1 FROM events WHERE event_id=?", (eid,)).fetchone():
                    continue
                conn.execute("INSERT INTO events(event_id, agent, session_id, seq, ts, role, "
                             "text, branch, ingested_at) VALUES (?,?,?,?,?,?,?,?,?)",
                             (eid, s.agent, s.session_id, e.seq, e.ts, e.role, e.text,
                              e.branch, at))
                for i, t in enumerate(e.tools):
                    conn.execute("INSERT INTO tool_calls(event_id, idx, name, kind) "
                                 "VALUES (?,?,?,?)", (eid, i, t.name, t.kind))
                    for f in t.files:
                        conn.execute("INSERT INTO tool_files(event_id, idx, raw_path, relpath, "
                                     "op) VALUES (?,?,?,?,?)", (eid, i, f, f, t.kind))
    finally:
        conn.close()


def _template(root: Path) -> tuple[Path, dict[str, str]]:
    """A repository holding every file the pool touches, and the pool's commits (by subject
    -> sha): the commits exist from the start, a pass sees only those that have 'arrived'."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for f in sorted(KNOWN):
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        (repo / f).write_text(f"# {f}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Initial layout")
    shas = {"": git(repo, "rev-parse", "HEAD")}
    for c in COMMITS:
        for f in c.files:
            (repo / f).write_text((repo / f).read_text() + f"# {c.subject}\n")
        git(repo, "add", "-A")
        env = {"GIT_AUTHOR_DATE": c.ts, "GIT_COMMITTER_DATE": c.ts}
        git(repo, "commit", "-q", "-m", c.subject, env={**os.environ, **env})
        shas[c.subject] = git(repo, "rev-parse", "HEAD")
    cli(repo, "init")
    return repo, shas


def _shape(res: RefineResult, conn: sqlite3.Connection | None = None) -> tuple:
    """What a pass resolved; `conn`: a partial result (an appending pass) is its windows
    over the rows store.db keeps for every other window."""
    items = sorted(res.workitems, key=lambda w: w.id)
    mems = sorted(res.memories, key=lambda m: (m.workitem or "", m.id))
    links = sorted((ln.sha, ln.workitem, ln.confidence, ln.why) for ln in res.links)
    stored = {sw.signal.key: sw for sw in res.stored}
    if res.partial:
        assert conn is not None
        stored = {sw.signal.key: sw for sw in workmodel.stored_windows(conn, set())} | stored
    placed = sorted((sw.signal.key, sw.cluster, sw.related) for sw in stored.values())
    targets = sorted(res.targets, key=lambda t: t.id)
    return items, mems, links, placed, targets


@pytest.fixture(scope="module")
def template() -> tuple[Path, dict[str, str]]:
    root = Path(tempfile.mkdtemp(prefix="looma-incr-ledger-"))
    try:
        yield _template(root / "t")  # type: ignore[misc]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _tables(repo: Path) -> dict[str, list[tuple]]:
    with sqlite3.connect(find_repo(repo).store_db) as db:
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall()) for t in
                ("refine_workitems", "refine_memories", "refine_targets", "refine_windows")}


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=arrivals())
def test_incremental_passes_with_the_ledger_equal_the_full_rebuild(template, steps) -> None:
    src, shas = template
    work = Path(tempfile.mkdtemp(prefix="looma-incr-run-"))
    try:
        repo = work / "repo"
        shutil.copytree(src, repo, symlinks=True)
        paths = find_repo(repo)
        arrived: list[str] = [shas[""]]  # the initial layout: every pass lists >= 1 commit
        # Then one pass with nothing new: the WorkItems the last pass published are seeds now.
        for kind, x in [*steps, ("settle", None)]:
            if kind == "session":
                assert isinstance(x, Session)
                _store(repo, x)
            elif kind == "commit":
                assert isinstance(x, CommitInfo)
                arrived.append(shas[x.subject])
            revs = tuple(arrived)
            state = ledger.load_state(paths)
            conn = storedb.connect(paths)
            try:
                full = run_pass(paths, state, conn, revs, True)[0]
                inc = run_pass(paths, state, conn, revs, True, incremental=True)[0]
                assert _shape(inc, conn) == _shape(full)
            finally:
                conn.close()
            refine_and_publish(paths, commits_revs=revs, no_walk=True, incremental=True)
        _settled_equals_full(repo, tuple(arrived))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _settled_equals_full(repo: Path, revs: tuple[str, ...]) -> None:
    """A full pass after the last one publishes nothing and leaves every table and the kept
    resolver state as the incremental passes left them."""
    paths = find_repo(repo)
    before, kept = _tables(repo), _kept(repo)
    head = git(repo, "rev-parse", "refs/looma/ledger")
    report = refine_and_publish(paths, commits_revs=revs, no_walk=True)
    assert report.ops_written == 0, report.ops
    assert git(repo, "rev-parse", "refs/looma/ledger") == head
    after = _tables(repo)
    for t in after:
        assert after[t] == before[t], (t, _diff(after[t], before[t]))
    assert _kept(repo) == kept
    assert json.dumps(report.ops) == "{}"


def _diff(a: list[tuple], b: list[tuple]) -> list[object]:
    rows = {r[0]: r for r in b}
    out: list[object] = []
    for r in a:
        o = rows.get(r[0])
        if o != r:
            if o is None or not isinstance(r[-1], str) or not r[-1].startswith("{"):
                out.append((r, o))
                continue
            x, y = json.loads(r[-1]), json.loads(o[-1])
            out.append({k: (x.get(k), y.get(k)) for k in x.keys() | y.keys()
                        if x.get(k) != y.get(k)})
    return out


def _kept(repo: Path) -> dict[str, object]:
    from looma_git.api.refine import memo_code

    conn = storedb.connect(find_repo(repo))
    try:
        st = workmodel_state.load_state(conn, memo_code())
    finally:
        conn.close()
    assert st is not None
    return {**vars(st), "clusters": {k: vars(v) for k, v in st.clusters.items()}}


def test_new_sessions_after_everything_only_append(template) -> None:
    """Sessions arriving one by one, each after a pass that published the last: a pass
    reads and places only the new session's windows (from the kept resolver state; a stored
    window after the new one in time is placed again), and ends where the full rebuild does.
    (A session with windows in two WorkItems is routed by score between them: a pass after
    it replays.)"""
    src, shas = template
    work = Path(tempfile.mkdtemp(prefix="looma-incr-append-"))
    try:
        repo = work / "repo"
        shutil.copytree(src, repo, symlinks=True)
        paths = find_repo(repo)
        revs = tuple(shas.values())
        modes = []
        by_id = {s.session_id: s for s in POOL}
        # (hook1 started before auth1, stored by then: auth1's window is placed again)
        for s in [by_id[i] for i in ("csv2", "auth1", "hook1", "read1", "auth2")]:
            _store(repo, s)
            state = ledger.load_state(paths)
            conn = storedb.connect(paths)
            try:
                full = run_pass(paths, state, conn, revs, True)[0]
                inc = run_pass(paths, state, conn, revs, True, incremental=True)[0]
                modes.append(inc.partial)
                assert _shape(inc, conn) == _shape(full)
            finally:
                conn.close()
            refine_and_publish(paths, commits_revs=revs, no_walk=True, incremental=True)
        assert any(modes), modes
        # (the last pass's ledger updates, its WorkItem's new alias, are seeds now)
        settle = refine_and_publish(paths, commits_revs=revs, no_walk=True, incremental=True)
        assert settle.mode == "incremental"
        _settled_equals_full(repo, revs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_seeds_are_kept_one_row_each_and_only_changed_rows_are_written(template) -> None:
    """The next pass's replay compares its seeds with the last pass's: a ledger update that
    changes one WorkItem rewrites that seed's row, not a document of every seed."""
    from dataclasses import replace

    from looma_git.pipeline.clusters import Seed

    src, _ = template
    work = Path(tempfile.mkdtemp(prefix="looma-incr-seeds-"))
    try:
        repo = work / "repo"
        shutil.copytree(src, repo, symlinks=True)
        seeds = [Seed(id=f"wi_{i}", title=f"Effort {i}", files=frozenset({f"f{i}.py"}),
                     aliases=(f"Effort {i}",), sessions=frozenset({f"codex:s{i}"}),
                     branch=None) for i in range(5)]
        conn = storedb.connect(find_repo(repo))
        try:
            storedb.ensure_schema(conn)
            assert workmodel_state.load_seeds(conn) is None  # no pass stored any
            with conn:
                workmodel_state.save_seeds(conn, seeds)
            assert workmodel_state.load_seeds(conn) == tuple(seeds)
            grown = [*seeds[:2], replace(seeds[2], sessions=seeds[2].sessions | {"codex:x"}),
                     seeds[3]]  # one changed, one gone
            before = conn.total_changes
            with conn:
                workmodel_state.save_seeds(conn, grown)
            # the changed row, the vanished one, the former document's delete, the marker
            assert conn.total_changes - before <= 4
            assert workmodel_state.load_seeds(conn) == tuple(grown)
        finally:
            conn.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
