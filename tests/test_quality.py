"""Quality bars: the scenario generator (DESIGN §10) and the teamwork benchmark (issue 13)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bench import quality_teamwork as tw
from tests.bench.quality import TARGETS, build, measure

# One worker builds this module's shared fixture once (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("quality")


@pytest.fixture(scope="module")
def clean_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # Module-scoped: the autouse env scrub is function-scoped, so scrub here too.
    mp = pytest.MonkeyPatch()
    for key in [k for k in os.environ if k.startswith(("GIT_", "XDG_", "CLAUDE_", "CODEX_"))]:
        mp.delenv(key)
    home = tmp_path_factory.mktemp("qhome")
    (home / ".gitconfig").write_text("[user]\n\tname = Q\n\temail = q@example.com\n")
    mp.setenv("HOME", str(home))
    try:
        yield
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def measured(clean_env: None, tmp_path_factory: pytest.TempPathFactory) -> dict:
    scenario, env = build(Path(tmp_path_factory.mktemp("quality")))
    return measure(scenario, env)


@pytest.mark.slow
@pytest.mark.parametrize("metric", sorted(TARGETS))
def test_quality_target(measured: dict, metric: str) -> None:
    assert measured[metric] >= TARGETS[metric], (metric, measured[metric], measured["resume"])


@pytest.mark.slow
def test_no_distractor_and_no_foreign_or_readonly_leak(measured: dict) -> None:
    assert measured["distractors_extracted"] == 0
    assert measured["foreign_attributed"] == []
    assert measured["readonly_high_confidence"] == []


# --- the teamwork benchmark (fixtures/teamwork), built and run once per module ---------------


@pytest.fixture(scope="module")
def teamwork(clean_env: None, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Any, dict[str, Any]]:
    bench, env, _ = tw.build(Path(tmp_path_factory.mktemp("teamwork")))
    return bench, tw.measure(bench, env)


@pytest.mark.slow
def test_teamwork_has_the_shape_issue_13_asks_for(teamwork: tuple[Any, dict]) -> None:
    truth = teamwork[0].truth
    shape = tw.shape(truth)
    assert shape["efforts"] >= 10
    assert shape["sessions"] >= 50
    assert set(shape["agents"]) == {"claude-code", "codex", "gemini-cli", "cursor", "opencode"}
    assert shape["turns_min"] >= 30 and shape["turns_max"] <= 300
    assert all(30 <= s["records"] <= 300 for s in truth["sessions"]), \
        [(s["key"], s["records"]) for s in truth["sessions"]]
    assert shape["multi_topic_sessions"] >= 3
    assert shape["merge_commits"] >= 2 and truth["unreachable_commits"]  # squash + rebase
    assert shape["chore_commits"] >= 6 and shape["teammate_commits"] >= 3
    kinds = {r["kind"] for r in truth["resume"]}
    assert kinds >= {"direct", "paraphrase", "vague", "cold", "file", "branch", "none"}
    assert len(truth["resume"]) == 20 and len(truth["ask"]) == 8
    efforts = {e["key"]: e for e in truth["efforts"]}
    assert efforts["orders-slow"]["commits"] == [] and len(efforts["orders-slow"]["sessions"]) >= 3
    assert any(m["superseded"] for m in truth["memories"])
    assert sum(1 for s in truth["sessions"] if s["role"] == "foreign") >= 3


@pytest.mark.slow
def test_teamwork_truth_segments_are_found_in_what_looma_stored(
        teamwork: tuple[Any, dict]) -> None:
    """The scorer's own honesty: every prompt of every segment of this repository is found
    among the stored events and in a recorded window (foreign sessions are never stored)."""
    segs = teamwork[1]["segments"]
    local = [s for s in segs if s["role"] != "foreign"]
    assert all(s["prompts_found"] == s["prompts"] for s in local), \
        [s for s in local if s["prompts_found"] != s["prompts"]]
    assert all(s["windows"] for s in local)
    assert all(s["prompts_found"] == 0 for s in segs if s["role"] == "foreign")


@pytest.mark.slow
def test_teamwork_no_foreign_session_attributed(teamwork: tuple[Any, dict]) -> None:
    assert teamwork[1]["foreign_attributed"] == []


@pytest.mark.slow
def test_teamwork_generator_is_deterministic(teamwork: tuple[Any, dict],
                                             tmp_path: Path) -> None:
    from fixtures.teamwork.generate import build_teamwork

    again = build_teamwork(tmp_path / "again").truth
    first = teamwork[0].truth
    assert again["repo"] == first["repo"]
    assert [e["commits"] for e in again["efforts"]] == [e["commits"] for e in first["efforts"]]
    assert [(s["id"], s["turns"], s["records"]) for s in again["sessions"]] == \
        [(s["id"], s["turns"], s["records"]) for s in first["sessions"]]


# The issue-13 targets. Today's pipeline does not meet them (measured numbers in each reason,
# and in docs/quality.md); strict xfail turns each into a failure the day it is met, so the mark
# must then be removed.
_NOT_MET = "issue 13: target not met yet, measured {}"


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=_NOT_MET.format("F1 0.43 (P 0.44, R 0.42)"))
def test_teamwork_clustering_f1(teamwork: tuple[Any, dict]) -> None:
    m = teamwork[1]
    assert m["clustering_f1"] >= tw.TARGETS["clustering_f1"], (m["clustering_f1"],
                                                               m["per_effort"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=_NOT_MET.format("0.72"))
def test_teamwork_link_precision(teamwork: tuple[Any, dict]) -> None:
    m = teamwork[1]
    assert m["link_precision"] >= tw.TARGETS["link_precision"], m["wrong_links"]


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=_NOT_MET.format("0.68"))
def test_teamwork_link_recall(teamwork: tuple[Any, dict]) -> None:
    assert teamwork[1]["link_recall"] >= tw.TARGETS["link_recall"]


@pytest.mark.slow
def test_teamwork_no_chore_linked(teamwork: tuple[Any, dict]) -> None:
    assert teamwork[1]["chores_linked"] == tw.TARGETS["chores_linked"]


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=_NOT_MET.format("12/20"))
def test_teamwork_resume(teamwork: tuple[Any, dict]) -> None:
    m = teamwork[1]
    assert m["resume_correct"] >= tw.TARGETS["resume_correct"], [
        r for r in m["resume"] if not r["ok"]]


@pytest.mark.slow
def test_teamwork_ask_top3(teamwork: tuple[Any, dict]) -> None:
    m = teamwork[1]
    assert m["ask_top3"] >= tw.TARGETS["ask_top3"], [a for a in m["ask"] if not a["ok"]]


# --- the scorer's arithmetic, on hand-made inputs (fast) ------------------------------------


def _seg(effort: str | None, pred: str | None, role: str = "work") -> dict[str, Any]:
    return {"effort": effort, "predicted": pred, "role": role}


def test_segment_clustering_counts_pairs_and_leaves_unassigned_segments_alone() -> None:
    segs = [_seg("a", "w1"), _seg("a", "w1"), _seg("a", None), _seg("b", "w1"),
            _seg(None, "w1", "readonly")]
    m = tw.clustering(segs)
    # true pairs: (a1,a2) (a1,a3) (a2,a3); predicted-same pairs: (a1,a2) (a1,b) (a2,b)
    assert (m["clustering_precision"], m["clustering_recall"]) == (round(1 / 3, 4),
                                                                   round(1 / 3, 4))
    assert m["segments_scored"] == 4 and m["predicted_workitems"] == 1
    assert m["per_effort"]["a"] == {"segments": 3, "workitems": 1, "unassigned": 1}


def test_workitems_map_to_their_majority_effort() -> None:
    segs = [_seg("a", "w1"), _seg("a", "w1"), _seg("b", "w1"), _seg("b", "w2"),
            _seg(None, "w3", "readonly")]
    assert tw.effort_of_workitems(segs) == {"w1": "a", "w2": "b"}


def test_links_skip_merges_and_unreachable_and_count_chores() -> None:
    truth = {"merge_commits": ["m"], "unreachable_commits": ["u"],
             "efforts": [{"key": "a", "commits": ["c1", "c2"]}, {"key": "b", "commits": ["c3"]}],
             "unlinked_commits": {"chore": ["k1"], "release": [], "skeleton": [],
                                  "teammate": ["t1"]}}
    work = [{"id": "w1", "commits": ["c1", "m", "u", "k1"]},
            {"id": "w2", "commits": ["c3", "t1"]}, {"id": "w9", "commits": ["c2"]}]
    m = tw.links(truth, work, {"w1": "a", "w2": "b"})
    # predicted (merge and unreachable dropped): c1->a ok, k1->a, c3->b ok, t1->b, c2->?w9
    assert m["links_predicted"] == 5 and m["link_precision"] == 0.4
    assert m["link_recall"] == round(2 / 3, 4)
    assert (m["chores_linked"], m["teammate_linked"], m["unreachable_linked"]) == (1, 1, 1)
