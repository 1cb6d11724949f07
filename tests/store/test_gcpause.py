"""The cyclic collector is paused where looma builds what it keeps (store/gcpause.py): an
incremental refinery pass runs without one collection, a full pass keeps it on."""

from __future__ import annotations

import gc
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from looma_git.api.refine import refine_and_publish
from looma_git.gitrepo import find_repo
from looma_git.store import gcpause
from tests.pipeline.test_incremental import POOL
from tests.pipeline.test_incremental_ledger import _store, _template


def test_paused_turns_the_collector_off_inside_and_back_on_after() -> None:
    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():  # nested: the outer one turns it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with gcpause.paused(False):
        assert gc.isenabled()
    with pytest.raises(RuntimeError), gcpause.paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.fixture()
def pool_repo() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="looma-gcpause-"))
    try:
        yield _template(root / "t")[0]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_an_incremental_pass_runs_with_the_collector_paused(
        pool_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass itself (pipeline/refine.refine, wrapped to look) runs with the collector off
    when it is incremental, on when it is the full one; on again after either."""
    from looma_git.api import refine as api_refine

    seen: list[bool] = []
    real = api_refine.refine

    def looking(inp: object) -> object:
        seen.append(gc.isenabled())
        return real(inp)  # type: ignore[arg-type]

    monkeypatch.setattr(api_refine, "refine", looking)
    repo = pool_repo
    paths = find_repo(repo)
    for s in POOL[:3]:
        _store(repo, s)
    first = refine_and_publish(paths, incremental=True)  # over an empty model: a full pass
    assert first.mode == "full" and seen[0] is True
    assert gc.isenabled()
    _store(repo, POOL[3])
    del seen[:]
    assert refine_and_publish(paths, incremental=True).mode == "incremental"
    assert seen == [False]
    assert gc.isenabled()


def test_an_append_and_its_notes_sync_run_with_the_collector_paused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealing and committing a batch (a cold pass's 2,087 ops beside its work model) and
    rendering the notes: no collection walks the caller's heap meanwhile."""
    from looma_git.api import ledger as api
    from looma_git.ledger.ops import OpDraft
    from looma_git.store import notes
    from looma_git.store.ledger_ref import LedgerStore
    from tests.helpers import git, make_repo
    from tests.store.ledger_helpers import init

    seen: dict[str, list[bool]] = {"seal": [], "notes": []}
    seal, full = LedgerStore._seal, notes._full

    def sealing(self: LedgerStore, *a: object) -> object:
        seen["seal"].append(gc.isenabled())
        return seal(self, *a)  # type: ignore[arg-type]

    def rendering(*a: object) -> object:
        seen["notes"].append(gc.isenabled())
        return full(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(LedgerStore, "_seal", sealing)
    monkeypatch.setattr(notes, "_full", rendering)
    repo = make_repo(tmp_path / "r")
    paths = init(repo)
    op = api.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                                    {"title": "Stream the export"})], actor="system")[0]
    api.append(paths, [OpDraft("commit.link", {"type": "commit",
                                               "id": git(repo, "rev-parse", "HEAD")},
                               {"workitem": "wi_" + op.id[:10], "confidence": 0.8})],
               actor="system")
    assert seen["seal"] == [False, False] and seen["notes"] and not any(seen["notes"])
    assert gc.isenabled()


def test_the_written_lines_are_stored_with_the_collector_paused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from looma_git.index import storedb, written
    from tests.index.test_written_mark import _edit

    seen: list[bool] = []
    store = written._store

    def storing(*a: object) -> None:
        seen.append(gc.isenabled())
        store(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(written, "_store", storing)
    conn = sqlite3.connect(tmp_path / "s.db")
    storedb.ensure_schema(conn)
    _edit(conn, "e1", "first_version_of_the_line = 1", 100)
    assert written.update_written(conn, full=True) == 1
    assert seen == [False] and gc.isenabled()


def test_a_few_new_events_are_indexed_with_the_collector_paused(
        repo: Path, scrubbed_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`looma ingest` of a new session: its indexing step (the records of every WorkItem,
    loaded and kept to the command's end) is entered with the collector off."""
    import json
    import re
    import sys

    from looma_git.api import index as api_index
    from looma_git.api import ledger as api_ledger
    from looma_git.api.update import update
    from looma_git.ingest.base import DiscoveryEnv

    seen: list[bool] = []
    # (only the collector's state is looked at: the reindex itself, an embedding, is skipped)
    monkeypatch.setattr(api_index, "reindex", lambda *a, **kw: seen.append(gc.isenabled()))
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    d = scrubbed_env / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    d.mkdir(parents=True)
    (d / "s1.jsonl").write_text(json.dumps({
        "cwd": str(repo), "gitBranch": "main", "version": "2.0.76", "isSidechain": False,
        "userType": "external", "sessionId": "s1", "type": "user", "uuid": "u0",
        "parentUuid": None, "timestamp": "2026-05-04T09:00:00.000Z",
        "message": {"role": "user", "content": "Implement the OAuth callback with PKCE"}})
        + "\n")
    update(paths, DiscoveryEnv(home=scrubbed_env, environ={}, platform=sys.platform))
    assert seen == [False] and gc.isenabled()
