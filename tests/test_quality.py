"""Quality bars on the scenario generator (DESIGN §10): clustering, links, resume, extraction."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.quality import TARGETS, build, measure


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    # Module-scoped: the autouse env scrub is function-scoped, so scrub here too.
    import os

    mp = pytest.MonkeyPatch()
    for key in [k for k in os.environ if k.startswith(("GIT_", "XDG_", "CLAUDE_", "CODEX_"))]:
        mp.delenv(key)
    home = tmp_path_factory.mktemp("qhome")
    (home / ".gitconfig").write_text("[user]\n\tname = Q\n\temail = q@example.com\n")
    mp.setenv("HOME", str(home))
    try:
        scenario, env = build(Path(tmp_path_factory.mktemp("quality")))
        return measure(scenario, env)
    finally:
        mp.undo()


@pytest.mark.slow
@pytest.mark.parametrize("metric", sorted(TARGETS))
def test_quality_target(measured: dict, metric: str) -> None:
    assert measured[metric] >= TARGETS[metric], (metric, measured[metric], measured["resume"])


@pytest.mark.slow
def test_no_distractor_and_no_foreign_or_readonly_leak(measured: dict) -> None:
    assert measured["distractors_extracted"] == 0
    assert measured["foreign_attributed"] == []
    assert measured["readonly_high_confidence"] == []
