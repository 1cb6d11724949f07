"""Calibrate the resume thresholds (retrieval/match.py) on the labelled benchmarks; prints only.

Run: .venv/bin/python -m tests.bench.calibrate_resume [--teamwork DIR] [--realproject DIR]...
         [--scenario DIR] [--grid] [--show]

Each DIR is what a benchmark's `--keep DIR` left (`repo/`, `home/`, `truth.json`); without
`--teamwork` the teamwork benchmark is built here. `--realproject` (repeatable) takes a
`quality_realproject --keep` dir of any variant: the dev set is teamwork + the 2025q1 range;
never pass the hold-out (`--variant holdout`) here, measure it with its own command. For every
labelled goal, and for a fixed list of off-topic goals on every benchmark (they must stay cold:
the guard against a fusion that makes noise confident), it computes once what the thresholds
act on (each WorkItem's words score and its cosine with the goal, the real embedder), prints
each goal's outcome, and with `--grid` grid-searches the thresholds for the number of right
outcomes: the current setting's score, the best, and the plateau of settings that reach it (a
range per threshold), so a change is chosen from the middle of a plateau, not a lucky point.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GRID = {
    "CONFIDENT_AT": (0.45, 0.5, 0.55, 0.6),
    "MARGIN": (0.1, 0.15, 0.2),
    "COLD_BELOW": (0.2, 0.25, 0.3),
    "SEM_CONFIDENT_AT": (0.38, 0.42, 0.46),
    "SEM_MARGIN": (0.08, 0.1, 0.15),
    "SEM_COLD_BELOW": (0.25, 0.3, 0.35),
    "LEX_WEAK": (0.3, 0.35, 0.4, 0.45, 0.5),
    "AGREE_MARGIN": (0.05, 0.1, 0.15),
    "AGREE_SEM_MARGIN": (0.05, 0.08, 0.12),
    "AGREE_SEM_AT": (0.3, 0.32, 0.34, 0.36, 0.38),
    "UNKNOWN_AT": (0.4, 0.45, 0.5, 0.55, 0.6, 0.7),
    "SEM_UNRELATED": (0.1, 0.15, 0.2, 0.25, 0.3),
    "GENERIC_WEIGHT": (0.0, 0.15, 0.3, 0.5, 1.0),
}
# The thresholds `match.rank` reads (the fused order); the others act in `match.outcome` only,
# so a grid ranks each goal once per setting of these.
RANK_KEYS = ("CONFIDENT_AT", "COLD_BELOW", "SEM_CONFIDENT_AT", "SEM_COLD_BELOW",
             "GENERIC_WEIGHT")
_RANKED: dict[tuple[int, tuple[float, ...], bool], Any] = {}

# Goals no benchmark project has any work on (a mobile app, infrastructure, ML, games, data
# warehousing...): on every benchmark each must come back cold. Written once, from what people
# type, not from what looma scores; a failing one is a finding, not something to tune away.
OFF_TOPIC = (
    "kubernetes helm chart", "graphql schema stitching", "dark mode for the android app",
    "terraform state locking on s3", "train the recommendation model on gpu",
    "shader compilation stutter", "migrate the warehouse to snowflake",
    "push notifications on ios", "apple pay checkout button", "elasticsearch reindex job",
    "websocket chat presence", "video transcoding queue", "batch pick lists by zone",
    "bluetooth pairing for the watch app", "unity physics jitter", "render the 3d scene faster",
)


def _env_of(base: Path) -> dict[str, str]:
    from fixtures.scenario.generate import home_env

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(home_env(base / "home"), LOOMA_NO_PROGRESS="1")
    return env


def _goals_kept(base: Path, label: str) -> tuple[Any, list[dict[str, Any]], dict[str, str]]:
    """A teamwork or real-project `--keep` dir: its labelled goals and WorkItem -> effort."""
    from tests.bench import quality_teamwork as qt

    truth = json.loads((base / "truth.json").read_text())

    class _Bench:
        pass

    bench = _Bench()
    bench.repo, bench.truth = str(base / "repo"), truth  # type: ignore[attr-defined]
    os.environ.update(_env_of(base))
    from looma_git.gitrepo import find_repo

    # Every vector first: under load an ingest leaves window texts for a later top-up (the
    # teamwork build left 22 of 83), and the thresholds are chosen on the steady state.
    subprocess.run([sys.executable, "-m", "looma_git", "reindex", "--all-vectors"],
                   cwd=base / "repo", env=dict(os.environ), check=True, capture_output=True)
    key_of = qt.effort_of_workitems(qt.segment_predictions(bench))
    goals = [{"bench": label, "goal": q["goal"], "kind": q["kind"], "expect": q["expect"],
              "want": q.get("efforts") or ([q["effort"]] if q.get("effort") else [])}
             for q in truth["resume"] if q["goal"]] if _WHICH not in ("extra", "later") else []
    if _WHICH in ("extra", "all", "later"):
        from tests.bench.resume_goals_s24 import GOALS, LATER

        goals += [{"bench": label, **g, "kind": "new " + g["kind"]} for g in GOALS.get(label, ())]
        goals += [{"bench": label, **g, "kind": "later " + g["kind"]}
                  for g in LATER.get(label, ()) if _WHICH == "later"]
    goals += [{"bench": label, "goal": g, "kind": "off-topic", "expect": "cold", "want": []}
              for g in OFF_TOPIC if g not in {q["goal"] for q in truth["resume"]}
              and _WHICH not in ("extra", "later")]
    return find_repo(base / "repo"), goals, key_of


def _goals_scenario(base: Path) -> tuple[Any, list[dict[str, Any]], dict[str, str]]:
    """A scenario dir with info.json ({"repo", "env"}) and truth.json."""
    info = json.loads((base / "info.json").read_text())
    os.environ.update(info["env"])
    truth = json.loads((base / "truth.json").read_text())
    from looma_git.api.index import load_records
    from looma_git.gitrepo import find_repo

    paths = find_repo(Path(info["repo"]))
    true_of = {f"{s['agent']}:{s['id']}": wi["key"] for wi in truth.get("workitems", [])
               for s in wi["sessions"]}
    key_of = {}
    for it in load_records(paths):
        keys = [true_of[f"{a}:{s}"] for a, s in it.sessions if f"{a}:{s}" in true_of]
        if keys:
            key_of[it.id] = max(sorted(set(keys)), key=keys.count)
    goals = [{"bench": "scenario", "goal": q["goal"], "kind": q.get("kind", "?"),
              "expect": q["expect"],
              "want": q.get("workitems") or ([q["workitem"]] if q.get("workitem") else [])}
             for q in truth["resume_queries"]]
    return paths, goals, key_of


def _inputs(paths: Any, goals: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any, Any]]:
    """Per goal: (goal, items, cosines) — everything the thresholds act on."""
    from looma_git.retrieval import head_records
    from looma_git.retrieval.semantic import item_cosines

    head_records._RECORDS.clear()
    items = head_records.load_records(paths)
    ids = {it.id for it in items}
    return [(g, items, item_cosines(paths, g["goal"], ids)) for g in goals]


def _ok(g: dict[str, Any], state: str, got: list[str]) -> bool:
    if state not in g["expect"].split("|"):
        return False
    if state == "confident":
        return got[:1] == g["want"][:1]
    if state == "ambiguous":
        return len(set(g["want"]) & set(got)) >= min(2, len(g["want"]))
    return True


_WHICH = "truth"  # truth: the benchmarks' labelled goals; extra, later: resume_goals_s24's; all

Case = tuple[dict[str, Any], Any, Any, dict[str, str]]


def outcome_of(case: Case) -> tuple[str, list[str], bool]:
    from looma_git.retrieval import match

    g, items, cos, key_of = case
    at = tuple(getattr(match, k) for k in RANK_KEYS)
    lexical = _RANKED.get((id(case), at, False))
    if lexical is None:
        lexical = _RANKED[(id(case), at, False)] = match.rank(g["goal"], items)
    ranked = lexical
    if not match.lexical_decides(lexical) and cos:
        ranked = _RANKED.get((id(case), at, True))
        if ranked is None:
            ranked = _RANKED[(id(case), at, True)] = match.rank(g["goal"], items, cos)
    state, chosen = match.outcome(ranked)
    got = [key_of.get(m.item.id, m.item.id[:10]) for m in chosen]
    return state, got, _ok(g, state, got)


def _top(case: Case) -> str:
    """The three strongest WorkItems: words score, cosine, fused strength."""
    from looma_git.retrieval import match

    g, items, cos, key_of = case
    ranked = match.rank(g["goal"], items, cos or None)
    return f"u {ranked[0].unknown:.2f}  " * bool(ranked) + "  ".join(
        f"{key_of.get(m.item.id, m.item.id[:10])}: L {m.lexical:.2f} "
                     f"c {m.semantic if m.semantic is not None else '-'} F {m.score:.2f}"
                     for m in ranked[:3])


def score(cases: list[Case]) -> tuple[int, int]:
    """(right outcomes, minus the confidently wrong ones): of two settings with as many right,
    the one that less often names the wrong WorkItem with confidence is better (an ambiguous
    answer that shows the right one, or cold, costs the user less than a wrong bundle)."""
    right = wrong = 0
    for c in cases:
        state, _got, ok = outcome_of(c)
        right += ok
        wrong += state == "confident" and not ok
    return right, -wrong


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", type=Path, default=None)
    ap.add_argument("--teamwork", type=Path, default=None)
    ap.add_argument("--realproject", type=Path, action="append", default=[])
    ap.add_argument("--grid", action="store_true", help="grid-search the thresholds")
    ap.add_argument("--show", action="store_true", help="every goal's top scores")
    ap.add_argument("--only", default="", help="grid only these thresholds (comma-separated; "
                    "the others stay at their values in match.py)")
    ap.add_argument("--goals", choices=("truth", "extra", "all", "later"), default="truth",
                    help="the benchmarks' labelled goals, the held-back ones of "
                    "tests/bench/resume_goals_s24.py (stop 24), both (`all`), or its held-back "
                    "and later ones (`later`)")
    args = ap.parse_args()
    global _WHICH
    _WHICH = args.goals
    saved = dict(os.environ)
    if args.teamwork is None:
        from tests.bench import quality_teamwork as qt

        args.teamwork = Path(tempfile.mkdtemp(prefix="looma-cal-tw-"))
        qt.build(args.teamwork)
    sources: list[tuple[Any, Path, str]] = [(_goals_kept, args.teamwork, "teamwork")]
    sources += [(_goals_kept, d, d.name) for d in args.realproject]
    if args.scenario:
        sources.append((_goals_scenario, args.scenario, "scenario"))
    cases: list[Case] = []
    for loader, base, label in sources:
        os.environ.clear()
        os.environ.update(saved)
        paths, goals, key_of = loader(base, label) if loader is _goals_kept else loader(base)
        cases += [(g, items, cos, key_of) for g, items, cos in _inputs(paths, goals)]
    from looma_git.retrieval import match

    by: dict[tuple[str, str], list[int]] = {}
    for case in cases:
        g = case[0]
        state, got, ok = outcome_of(case)
        by.setdefault((g["bench"], g["kind"]), [0, 0])
        by[(g["bench"], g["kind"])][0] += ok
        by[(g["bench"], g["kind"])][1] += 1
        if args.show or not ok or g["kind"] != "off-topic":
            print(f"  [{g['bench']} {g['kind']}] {g['goal']!r}: want {g['expect']} "
                  f"{g['want']}, got {state} {got} {'ok' if ok else 'WRONG'}")
            if args.show:
                print("      " + _top(case))
    print(" ".join(f"{b}/{k} {a}/{n}" for (b, k), (a, n) in sorted(by.items())))
    current = {k: getattr(match, k) for k in GRID}
    now = score(cases)
    print(f"{len(cases)} goals; current thresholds {current}: {now[0]} right, "
          f"{-now[1]} confidently wrong")
    if not args.grid:
        return
    grid = {k: (v if not args.only or k in args.only.split(",") else (current[k],))
            for k, v in GRID.items()}
    results = []
    for combo in itertools.product(*grid.values()):
        for k, v in zip(grid, combo, strict=True):
            setattr(match, k, v)
        results.append((score(cases), combo))
    for k, v in current.items():
        setattr(match, k, v)
    best = max(r[0] for r in results)
    plateau = [c for s, c in results if s == best]
    print(f"best: {best[0]} right, {-best[1]} confidently wrong, reached by {len(plateau)} of "
          f"{len(results)} settings")
    varied = [i for i, k in enumerate(grid) if len(grid[k]) > 1]
    near = sorted(plateau, key=lambda c: sum(c[i] != current[k] for i, k in enumerate(grid)))
    for c in near[:5]:
        print("  e.g. " + " ".join(f"{k}={c[i]}" for i, k in enumerate(grid) if i in varied))
    for i, k in enumerate(grid):
        vals = sorted({c[i] for c in plateau})
        print(f"  {k}: {vals}")


if __name__ == "__main__":
    main()
