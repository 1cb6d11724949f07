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
def repo() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="looma-gcpause-"))
    try:
        yield _template(root / "t")[0]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_an_incremental_pass_runs_with_the_collector_paused(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass itself (pipeline/refine.refine, wrapped to look) runs with the collector off
    when it is incremental, on when it is the full one; on again after either."""
    from looma_git.api import refine as api_refine

    seen: list[bool] = []
    real = api_refine.refine

    def looking(inp: object) -> object:
        seen.append(gc.isenabled())
        return real(inp)  # type: ignore[arg-type]

    monkeypatch.setattr(api_refine, "refine", looking)
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
