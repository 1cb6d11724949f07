"""Sessions segmented by forked workers give the single-process pass's windows, candidates and
WorkItems, in order, on a real store.db and git repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from looma_git.api import ledger
from looma_git.api.refine import run_pass
from looma_git.gitrepo import find_repo
from looma_git.index import storedb
from looma_git.ingest import parallel
from looma_git.pipeline import segment_pool
from looma_git.pipeline.extractor import HeuristicExtractor
from looma_git.pipeline.inputs import load_session, load_sessions, session_versions
from looma_git.pipeline.segment import segment_session
from looma_git.store import gitfacts
from tests.pipeline.test_incremental import KNOWN, POOL
from tests.pipeline.test_incremental_ledger import _store, _template

pytestmark = pytest.mark.skipif(not parallel.fork_available(), reason="needs fork (Linux)")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root, _ = _template(tmp_path_factory.mktemp("pool"))
    for s in POOL:
        _store(root, s)
    return root


def test_a_session_loaded_alone_is_the_one_built_by_its_constructors(repo: Path) -> None:
    # load_session sets its events' and calls' fields directly (no frozen __init__);
    # load_sessions builds them with the dataclass constructors: the same values.
    conn = storedb.connect(find_repo(repo), readonly=True)
    try:
        built = {s.key: s for s in load_sessions(conn)}
        alone = {k: load_session(conn, *k.split(":", 1)) for k in session_versions(conn)}
    finally:
        conn.close()
    assert alone == built and any(ev.tools for s in alone.values() for ev in s.events)
    for k, s in alone.items():
        assert repr(s) == repr(built[k]) and hash(s.events) == hash(built[k].events)
        assert [vars(ev) for ev in s.events] == [vars(ev) for ev in built[k].events]


def test_workers_segment_every_session_as_one_process_does(repo: Path) -> None:
    paths = find_repo(repo)
    conn = storedb.connect(paths, readonly=True)
    try:
        keys = sorted(session_versions(conn))
        ex = HeuristicExtractor()
        alone = []
        for k in keys:
            s = load_session(conn, *k.split(":", 1))
            shas = gitfacts.existing_objects(repo, [])
            alone.append(segment_session(s, KNOWN, shas, {}, ex))
    finally:
        conn.close()
    assert len(keys) >= 2 and any(part.windows for part in alone)
    pooled = segment_pool.segment_all(
        keys, connect=lambda: storedb.connect(paths, readonly=True),
        lookup=lambda shas: gitfacts.existing_objects(repo, shas), known_paths=KNOWN,
        prior=(), extractor=ex, workers=2, min_sessions=1)
    assert pooled is not None
    got = list(pooled)
    # Earliest session first (a pass resolves while the rest is segmented), each as alone.
    assert [p.key for p in got] == pooled.order != keys
    starts = [min((w.start_ts for w in p.windows), default="") for p in got]
    assert starts == sorted(starts)
    assert sorted(got, key=lambda p: keys.index(p.key)) == alone


def test_a_pass_with_workers_equals_the_pass_without(repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    paths = find_repo(repo)
    state = ledger.load_state(paths)

    def one_pass(min_sessions: int) -> object:
        monkeypatch.setattr(segment_pool, "MIN_SESSIONS", min_sessions)
        monkeypatch.setattr(parallel, "default_workers", lambda: 2)
        conn = storedb.connect(paths)
        try:
            result = run_pass(paths, state, conn)[0]
        finally:
            conn.close()
        return (result.windows, result.workitems, result.links, result.memories)

    assert one_pass(10**9) == one_pass(1)


def test_few_sessions_or_an_llm_extractor_stay_in_process() -> None:
    class Stateful(HeuristicExtractor):
        name = "heuristic+llm"

    def run(keys: list[str], ex: HeuristicExtractor) -> object:
        return segment_pool.segment_all(keys, connect=lambda: None, lookup=lambda _: {},
                                        known_paths=frozenset(), prior=(), extractor=ex,
                                        workers=2)

    assert run(["a:1"], HeuristicExtractor()) is None
    assert run([f"a:{i}" for i in range(500)], Stateful()) is None
