"""`after_segmenting`: what a cold ingest starts (its message indexing) once a pass has segmented
its sessions, before the pass resolves them, and only once however many passes follow."""

from __future__ import annotations

from typing import Any

import pytest

from looma_git.pipeline import refine as refine_mod
from looma_git.pipeline.extractor import HeuristicExtractor
from looma_git.pipeline.refine import RefineInput, after_segmenting, refine
from tests.pipeline.test_refine import COMMITS, KNOWN, SESSIONS


class _Seen(HeuristicExtractor):
    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def extract(self, *a: Any, **kw: Any) -> Any:
        self.log.append("extract")
        return super().extract(*a, **kw)


def test_the_start_runs_between_segmenting_and_resolving_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[str] = []
    real_add = refine_mod.Resolver.add

    def add(self: Any, w: Any) -> Any:
        log.append("resolve")
        return real_add(self, w)

    monkeypatch.setattr(refine_mod.Resolver, "add", add)
    inp = RefineInput(sessions=SESSIONS, commits=COMMITS, known_paths=KNOWN, sha_lookup={},
                      extractor=_Seen(log))
    with after_segmenting(lambda: log.append("start")):
        first = refine(inp)
        refine(inp)  # a second pass (the settling one) starts nothing again
    assert log.count("start") == 1
    at = log.index("start")
    assert set(log[:at]) == {"extract"} and "resolve" in log[at:]
    assert "extract" not in log[at:log.index("resolve", at)]
    # Outside the context nothing is started, and the pass is the same.
    log.clear()
    assert refine(inp) == first and "start" not in log
