"""Quality runner: the scenario generator (clustering, links, resume, extraction), the teamwork
benchmark (tests/bench/quality_teamwork.py) and the real-project benchmark
(tests/bench/quality_realproject.py). `python -m tests.bench.quality [--write-docs]`."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.bench.quality_teamwork import query

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"clustering_f1": 0.9, "link_precision": 0.9, "link_recall": 0.85,
           "resume_accuracy": 1.0, "extraction_precision": 0.8}


def _looma(repo: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "looma_git", *args], cwd=repo, env=env,
                          capture_output=True, text=True, check=True)
    return proc.stdout


def build(base: Path) -> tuple[Any, dict[str, str]]:
    """The scenario with looma run on it: init, ingest, backfill."""
    sys.path.insert(0, str(ROOT))
    from fixtures.scenario.generate import build_scenario, env_for

    scenario = build_scenario(base)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(env_for(scenario), LOOMA_NO_PROGRESS="1")
    for args in (("init",), ("ingest",), ("backfill",)):
        _looma(Path(scenario.repo), env, *args)
    return scenario, env


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return round(p, 4), round(r, 4), round(f, 4)


def measure(scenario: Any, env: dict[str, str]) -> dict[str, Any]:
    """Every quality number against the scenario's truth."""
    repo = Path(scenario.repo)
    truth = scenario.truth
    work = json.loads(query(repo, env, "work", "--json"))["workitems"]
    pred_of: dict[str, str] = {}
    for w in work:
        for s in w["sessions"]:
            pred_of[f"{s['agent']}:{s['id']}"] = w["id"]
    true_of = {f"{s['agent']}:{s['id']}": wi["key"] for wi in truth["workitems"]
               for s in wi["sessions"]}
    tp = fp = fn = 0
    for a, b in itertools.combinations(sorted(true_of), 2):
        same_t = true_of[a] == true_of[b]
        pa, pb = pred_of.get(a), pred_of.get(b)
        same_p = pa is not None and pa == pb
        tp += same_t and same_p
        fp += (not same_t) and same_p
        fn += same_t and not same_p
    cp, cr, cf = _prf(tp, fp, fn)
    # Map each predicted WorkItem to the truth key most of its sessions carry.
    key_of: dict[str, str] = {}
    for w in work:
        keys = [true_of[f"{s['agent']}:{s['id']}"] for s in w["sessions"]
                if f"{s['agent']}:{s['id']}" in true_of]
        if keys:
            key_of[w["id"]] = max(sorted(set(keys)), key=keys.count)
    truth_links = {(sha, wi["key"]) for wi in truth["workitems"] for sha in wi["commits"]}
    pred_links = {(sha, key_of.get(w["id"], w["id"])) for w in work for sha in w["commits"]}
    lp, lr, _ = _prf(len(truth_links & pred_links), len(pred_links - truth_links),
                     len(truth_links - pred_links))
    results = []
    for q in truth["resume_queries"]:
        out = json.loads(query(repo, env, "resume", q["goal"], "--json"))
        got = [key_of.get(c["id"], c["id"]) for c in out["candidates"]]
        ok = out["state"] == q["expect"]
        if ok and q["expect"] == "confident":
            ok = got[:1] == [q["workitem"]]
        if ok and q["expect"] == "ambiguous":
            ok = set(q["workitems"]) <= set(got)
        results.append({"goal": q["goal"], "expect": q["expect"], "got": out["state"],
                        "candidates": got, "ok": ok})
    state = json.loads(query(repo, env, "recall", "--json", "zzz-no-such-entity"))
    del state
    mems: list[tuple[str, str]] = []
    for w in work:
        timeline = json.loads(query(repo, env, "timeline", w["id"], "--json"))
        mems.extend((e["kind"], e["text"]) for e in timeline["entries"]
                    if e["kind"] in ("decision", "todo", "bug", "architecture"))
    tm = truth["memories"]
    matched = [m for m in mems if any(t["text_contains"].lower() in m[1].lower() for t in tm)]
    distract = [m for m in mems if any(d["text_contains"].lower() in m[1].lower()
                                       for d in truth.get("distractors", []))]
    found = [t for t in tm if any(t["text_contains"].lower() in m[1].lower() for m in mems)]
    readonly = {f"{s['agent']}:{s['id']}" for s in truth["readonly_sessions"]}
    high_readonly = [w["id"] for w in work if w["band"] == "high"
                     and {f"{s['agent']}:{s['id']}" for s in w["sessions"]} <= readonly]
    foreign = {f"{s['agent']}:{s['id']}" for s in truth["foreign_sessions"]}
    return {
        "clustering_precision": cp, "clustering_recall": cr, "clustering_f1": cf,
        "link_precision": lp, "link_recall": lr,
        "resume_accuracy": round(sum(r["ok"] for r in results) / len(results), 4),
        "extraction_precision": round(len(matched) / len(mems), 4) if mems else 0.0,
        "extraction_recall": round(len(found) / len(tm), 4) if tm else 1.0,
        "distractors_extracted": len(distract),
        "readonly_high_confidence": high_readonly,
        "foreign_attributed": sorted(foreign & set(pred_of)),
        "resume": results, "workitems": len(work),
    }


def _scenario_table(m: dict[str, Any]) -> str:
    rows = [(k, m[k], TARGETS.get(k)) for k in (
        "clustering_precision", "clustering_recall", "clustering_f1", "link_precision",
        "link_recall", "resume_accuracy", "extraction_precision", "extraction_recall",
        "distractors_extracted")]
    lines = ["| metric | value | target |", "|---|---|---|"]
    lines += [f"| {k} | {v} | {'≥ ' + str(t) if t is not None else ''} |" for k, v, t in rows]
    return "\n".join(lines)


def run_scenario() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="looma-quality-") as tmp:
        scenario, env = build(Path(tmp))
        return measure(scenario, env)


def run_teamwork() -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """(measures, benchmark shape, CPU seconds) on the teamwork benchmark."""
    from tests.bench import quality_teamwork as tw

    with tempfile.TemporaryDirectory(prefix="looma-teamwork-") as tmp:
        c0 = os.times()
        bench, env, cpu = tw.build(Path(tmp))
        m = tw.measure(bench, env)
        c1 = os.times()
        cpu["total_cpu"] = round(c1.children_user + c1.children_system + c1.user + c1.system
                                 - c0.children_user - c0.children_system - c0.user - c0.system, 1)
        return m, tw.shape(bench.truth), cpu


HAND = "<!-- hand-written sections below"


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.bench.quality [--write-docs] [--only scenario|teamwork|realproject|holdout]`."""
    from tests.bench import quality_realproject as rp
    from tests.bench import quality_teamwork as tw
    from tests.bench.quality_docs import render

    args = argv if argv is not None else sys.argv[1:]
    only = args[args.index("--only") + 1] if "--only" in args else None
    real_ranges = ("2025h2", "2025q1", "2024h2") if only in (None, "realproject") else ()
    if why := rp.missing(*real_ranges, *(("holdout", "holdout2", "holdout3", "holdout4")
                                         if only in (None, "holdout") else ())):
        print("\n".join(why), file=sys.stderr)  # real histories are extracted, not committed
        return 2
    scen = run_scenario() if only in (None, "scenario") else None
    team = run_teamwork() if only in (None, "teamwork") else None
    real = rp.run() if only in (None, "realproject") else None
    hold = rp.run("2025q1") if only in (None, "realproject") else None
    h24 = rp.run("2024h2") if only in (None, "realproject") else None
    pipx = rp.run("holdout") if only in (None, "holdout") else None
    mm = rp.run("holdout2") if only in (None, "holdout") else None
    h3 = rp.run("holdout3") if only in (None, "holdout") else None
    h4 = rp.run("holdout4") if only in (None, "holdout") else None
    if scen:
        print(_scenario_table(scen))
        for r in scen["resume"]:
            print(f"resume {r['goal']!r}: expected {r['expect']}, got {r['got']} "
                  f"{r['candidates']} {'ok' if r['ok'] else 'WRONG'}")
        print(f"read-only sessions at high confidence: {scen['readonly_high_confidence'] or 'none'}; "
              f"foreign sessions attributed: {scen['foreign_attributed'] or 'none'}")
    if team:
        print(tw.summary(team[0], team[2]))
    if real:
        print(rp.summary(real[0], real[2]))
    if hold:
        print("hold-out (2025q1):")
        print(rp.summary(hold[0], hold[2]))
    if h24:
        print(rp.summary(h24[0], h24[2], "2024h2"))
    if pipx:
        print(rp.summary(pipx[0], pipx[2], "holdout"))
    if mm:
        print(rp.summary(mm[0], mm[2], "holdout2"))
    if h3:
        print(rp.summary(h3[0], h3[2], "holdout3"))
    if h4:
        print(rp.summary(h4[0], h4[2], "holdout4"))
    if "--write-docs" in args:
        if not (scen and team and real and hold and h24 and pipx and mm and h3 and h4):
            print("--write-docs needs every benchmark (drop --only)", file=sys.stderr)
            return 2
        doc = ROOT / "docs" / "quality.md"
        # sections written by hand (what a change did, measured once) stay below the marker
        old = doc.read_text(encoding="utf-8") if doc.exists() else ""
        kept = old[old.index(HAND):] if HAND in old else ""
        doc.write_text(render(scen, _scenario_table(scen), *team, real=rp.render(*real) + rp.render_holdout(*hold)
                              + rp.render_2024h2(*h24) + rp.render(*pipx, source="holdout")
                              + rp.render_holdout2(*mm) + rp.render_holdout3(*h3)
                              + rp.render_holdout4(*h4)).rstrip("\n")
                       + ("\n\n" + kept if kept else "\n"), encoding="utf-8")
        print(f"wrote {doc}")
    if "--json" in args:
        out = Path(args[args.index("--json") + 1])
        out.write_text(json.dumps({"scenario": scen, "teamwork": team and team[0],
                                   "realproject": real and real[0]}, indent=1,
                                  default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
