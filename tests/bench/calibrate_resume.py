"""Calibrate the resume thresholds (retrieval/match.py) on the labelled benchmarks; prints only.

Run: .venv/bin/python -m tests.bench.calibrate_resume [--scenario DIR] [--teamwork DIR]

Builds (or reuses, from a dir with info.json written by a previous run with --keep) the scenario
and the teamwork benchmark with `looma init/ingest/backfill`, then for every labelled goal
computes once what the thresholds act on (each WorkItem's words score and its cosine with the
goal, the real embedder), and grid-searches the six thresholds for the number of goals whose
outcome (state, and the expected WorkItem(s)) is right. Prints the current setting's score,
the best score, and the plateau of settings that reach it (a range per threshold), so a
change is chosen from the middle of the plateau, not from one lucky point.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GRID = {
    "CONFIDENT_AT": (0.45, 0.5, 0.55, 0.6, 0.65),
    "MARGIN": (0.1, 0.15, 0.2),
    "COLD_BELOW": (0.2, 0.25, 0.3),
    "SEM_CONFIDENT_AT": (0.38, 0.42, 0.46, 0.5),
    "SEM_MARGIN": (0.08, 0.1, 0.12, 0.15, 0.2),
    "SEM_COLD_BELOW": (0.25, 0.3, 0.35),
    "LEX_WEAK": (0.3, 0.4, 0.5),
}


def _goals_scenario(base: Path | None) -> tuple[Any, list[dict[str, Any]], dict[str, str]]:
    from tests.bench import quality

    if base is None:
        base = Path(tempfile.mkdtemp(prefix="looma-cal-scen-"))
        scenario, env = quality.build(base)
        repo, truth = Path(scenario.repo), scenario.truth
    else:
        info = json.loads((base / "info.json").read_text())
        repo, env = Path(info["repo"]), info["env"]
        truth = json.loads((base / "truth.json").read_text()) if (base / "truth.json").exists() \
            else None
        if truth is None:
            from fixtures.scenario.generate import RESUME_QUERIES
            truth = {"resume_queries": RESUME_QUERIES}
    os.environ.update(env)
    from looma_git.api.index import load_records
    from looma_git.gitrepo import find_repo

    paths = find_repo(repo)
    items = load_records(paths)
    # WorkItem -> truth key by the sessions it holds (as tests/bench/quality.py maps them).
    true_of = {f"{s['agent']}:{s['id']}": wi["key"] for wi in truth.get("workitems", [])
               for s in wi["sessions"]}
    key_of = {}
    for it in items:
        keys = [true_of[f"{a}:{s}"] for a, s in it.sessions if f"{a}:{s}" in true_of]
        if keys:
            key_of[it.id] = max(sorted(set(keys)), key=keys.count)
    goals = [{"goal": q["goal"], "expect": q["expect"],
              "want": q.get("workitems") or ([q["workitem"]] if q.get("workitem") else [])}
             for q in truth["resume_queries"]]
    return paths, goals, key_of


def _goals_teamwork(base: Path | None) -> tuple[Any, list[dict[str, Any]], dict[str, str]]:
    from tests.bench import quality_teamwork as qt

    if base is None:
        base = Path(tempfile.mkdtemp(prefix="looma-cal-tw-"))
        tw, env, _cpu = qt.build(base)
        repo, truth = Path(tw.repo), tw.truth
    else:
        info = json.loads((base / "info.json").read_text())
        repo, env = Path(info["repo"]), info["env"]
        truth = json.loads((base / "truth.json").read_text())

    class _TW:
        pass

    tw = _TW()
    tw.repo, tw.truth = str(repo), truth  # type: ignore[attr-defined]
    os.environ.update(env)
    from looma_git.gitrepo import find_repo

    key_of = qt.effort_of_workitems(qt.segment_predictions(tw))
    goals = [{"goal": q["goal"], "expect": q["expect"],
              "want": q.get("efforts") or ([q["effort"]] if q.get("effort") else [])}
             for q in truth["resume"] if q["goal"]]
    return find_repo(repo), goals, key_of


def _inputs(paths: Any, goals: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any, Any]]:
    """Per goal: (goal, items, cosines) — everything the thresholds act on."""
    from looma_git.api import index as api_index
    from looma_git.api.query import item_cosines

    api_index._RECORDS.clear()
    items = api_index.load_records(paths)
    ids = {it.id for it in items}
    return [(g, items, item_cosines(paths, g["goal"], ids)) for g in goals]


def _ok(g: dict[str, Any], state: str, got: list[str]) -> bool:
    if state != g["expect"]:
        return False
    if state == "confident":
        return got[:1] == g["want"][:1]
    if state == "ambiguous":
        return len(set(g["want"]) & set(got)) >= min(2, len(g["want"]))
    return True


def score(cases: list[tuple[dict[str, Any], Any, Any, dict[str, str]]]) -> int:
    from looma_git.retrieval import match

    n = 0
    for g, items, cos, key_of in cases:
        state, chosen = match.outcome(match.rank(g["goal"], items, cos or None))
        n += _ok(g, state, [key_of.get(m.item.id, m.item.id) for m in chosen])
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", type=Path, default=None)
    ap.add_argument("--teamwork", type=Path, default=None)
    args = ap.parse_args()
    saved = dict(os.environ)
    cases = []
    for loader, base in ((_goals_scenario, args.scenario), (_goals_teamwork, args.teamwork)):
        os.environ.clear()
        os.environ.update(saved)
        paths, goals, key_of = loader(base)
        cases += [(g, items, cos, key_of) for g, items, cos in _inputs(paths, goals)]
    from looma_git.retrieval import match

    current = {k: getattr(match, k) for k in GRID}
    base_score = score(cases)
    results = []
    for combo in itertools.product(*GRID.values()):
        for k, v in zip(GRID, combo, strict=True):
            setattr(match, k, v)
        results.append((score(cases), combo))
    for k, v in current.items():
        setattr(match, k, v)
    best = max(r[0] for r in results)
    plateau = [c for s, c in results if s == best]
    print(f"{len(cases)} labelled goals; current thresholds {current}: {base_score} right")
    print(f"best: {best} right, reached by {len(plateau)} of {len(results)} settings")
    for i, k in enumerate(GRID):
        vals = sorted({c[i] for c in plateau})
        print(f"  {k}: {vals}")
    for g, items, cos, key_of in cases:
        state, chosen = match.outcome(match.rank(g["goal"], items, cos or None))
        got = [key_of.get(m.item.id, m.item.id) for m in chosen]
        mark = "ok" if _ok(g, state, got) else "WRONG"
        print(f"  {g['goal']!r}: want {g['expect']} {g['want']}, got {state} {got} {mark}")


if __name__ == "__main__":
    main()
