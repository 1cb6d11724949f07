"""Scoring looma on the teamwork benchmark (fixtures/teamwork): segment clustering, commit links,
resume by goal kind, and `ask` top-3 — through the commands a user runs."""

from __future__ import annotations

import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# The issue-13 targets (tests/test_quality.py asserts each one).
TARGETS = {"clustering_f1": 0.90, "link_precision": 0.97, "link_recall": 0.90,
           "chores_linked": 0, "resume_correct": 18, "ask_top3": 7}


def resume_target(m: dict[str, Any], targets: dict[str, Any]) -> int:
    """Right resume outcomes asked for: the target's count (18 of the first 20 goals), and at
    least 90 % (the maintainers' bar) once a benchmark has more goals."""
    return max(targets["resume_correct"], -(-9 * m["resume_total"] // 10))


def _looma(repo: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "looma_git", *args], cwd=repo, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"looma {' '.join(args)} failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-2000:]}")
    return proc.stdout


def query(repo: Path, env: dict[str, str], *args: str) -> str:
    """A read-only command (work, resume, ask, recall, timeline) through the CLI's entry point in
    this process: the same `main`, arguments, environment and JSON as `_looma`, without a Python
    start-up and model load per call (~0.6 CPU-s each, 20-30 calls a benchmark). The steps that
    build the benchmark (init, ingest, backfill) stay real processes."""
    from tests.helpers import cli

    proc = cli(repo, *args, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"looma {' '.join(args)} failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-2000:]}")
    return proc.stdout


def build(base: Path) -> tuple[Any, dict[str, str], dict[str, float]]:
    """Generate the benchmark and run what a user runs on it: init, ingest, backfill.
    Returns (teamwork, env, CPU seconds per step of the children)."""
    sys.path.insert(0, str(ROOT))
    from fixtures.teamwork.generate import build_teamwork, env_for

    cpu: dict[str, float] = {}

    def child_cpu() -> float:
        t = os.times()
        return t.children_user + t.children_system

    c0, w0 = child_cpu(), time.perf_counter()
    tw = build_teamwork(base)
    cpu["generate_wall"] = round(time.perf_counter() - w0, 2)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(env_for(tw), LOOMA_NO_PROGRESS="1")
    for args in (("init",), ("ingest",), ("backfill",)):
        c0 = child_cpu()
        _looma(Path(tw.repo), env, *args)
        cpu[args[0]] = round(child_cpu() - c0, 2)
    return tw, env, cpu


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("«", "").replace("»", "")).strip().lower()


def window_owners(repo: Path) -> tuple[dict[str, str | None], dict[str, str]]:
    """(event id -> WorkItem the event's window landed in, event id -> window key), read from
    the refinery's local table `refine_window_events` (written by every backfill/ingest pass)."""
    db = repo / ".git" / "looma" / "store.db"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT key, workitem, event_ids FROM refine_window_events").fetchall()
    except sqlite3.OperationalError as exc:
        raise RuntimeError("store.db has no refine_window_events table: this looma does not "
                           "record window membership, so segments cannot be scored") from exc
    finally:
        conn.close()
    owner: dict[str, str | None] = {}
    window: dict[str, str] = {}
    for key, wi, ids in rows:
        for eid in json.loads(ids):
            owner[eid] = wi
            window[eid] = key
    return owner, window


def _session_events(repo: Path) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    """(agent, session) -> [(event id, role, normalized text)] in stored order."""
    db = repo / ".git" / "looma" / "store.db"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT agent, session_id, event_id, role, text FROM events "
                            "ORDER BY agent, session_id, seq").fetchall()
    finally:
        conn.close()
    out: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for agent, sid, eid, role, text in rows:
        out.setdefault((agent, sid), []).append((eid, role, _norm(text or "")))
    return out


def segment_predictions(tw: Any) -> list[dict[str, Any]]:
    """Each truth segment with the WorkItem looma put it in.

    A segment's events are the stored events from its first prompt up to the next segment's
    first prompt (prompts are found by their text among the stored user events). Each event
    votes for the WorkItem of the window holding it; the segment goes to the majority (the
    earliest voter breaks ties), None when none of its events is in a WorkItem."""
    repo = Path(tw.repo)
    owner, window = window_owners(repo)
    stored = _session_events(repo)
    by_session: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for seg in tw.truth["segments"]:
        by_session.setdefault((seg["agent"], seg["id"]), []).append(seg)
    out = []
    for key, segs in by_session.items():
        evs = stored.get(key, [])
        starts: list[int | None] = []
        found: list[int] = []
        for seg in segs:
            hits = []
            for prompt in seg["prompts"]:
                want = _norm(prompt)[:80]
                idx = next((i for i, (_, role, text) in enumerate(evs)
                            if role == "user" and want and want in text), None)
                if idx is not None:
                    hits.append(idx)
            found.append(len(hits))
            starts.append(min(hits) if hits else None)
        for n, seg in enumerate(segs):
            a = starts[n]
            later = [x for x in starts[n + 1:] if x is not None]
            span = evs[a:later[0] if later else len(evs)] if a is not None else []
            votes = [owner.get(eid) for eid, _, _ in span if eid in owner]
            counted = Counter(v for v in votes if v is not None)
            pred = None
            if counted:
                top = max(counted.values())
                pred = next(v for v in votes if v is not None and counted[v] == top)
            out.append({**{k: seg[k] for k in ("agent", "id", "session", "segment", "effort",
                                                "role")},
                        "prompts_found": found[n], "prompts": len(seg["prompts"]),
                        "events": len(span), "predicted": pred,
                        "windows": sorted({window[eid] for eid, _, _ in span if eid in window})})
    order = {(s["agent"], s["id"], s["segment"]): i for i, s in enumerate(tw.truth["segments"])}
    return sorted(out, key=lambda s: order[(s["agent"], s["id"], s["segment"])])


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return round(p, 4), round(r, 4), round(f, 4)


def clustering(segs: list[dict[str, Any]]) -> dict[str, Any]:
    """Pairwise precision/recall/F1 over the segments that belong to an effort of this repo.
    A segment looma left in no WorkItem is a singleton (it pairs with nothing)."""
    labelled = [s for s in segs if s["effort"]]
    tp = fp = fn = 0
    for a, b in itertools.combinations(labelled, 2):
        same_t = a["effort"] == b["effort"]
        same_p = a["predicted"] is not None and a["predicted"] == b["predicted"]
        tp += same_t and same_p
        fp += (not same_t) and same_p
        fn += same_t and not same_p
    p, r, f = _prf(tp, fp, fn)
    per_effort = {}
    for effort in sorted({s["effort"] for s in labelled}):
        mine = [s for s in labelled if s["effort"] == effort]
        per_effort[effort] = {"segments": len(mine),
                              "workitems": len({s["predicted"] for s in mine if s["predicted"]}),
                              "unassigned": sum(1 for s in mine if s["predicted"] is None)}
    return {"clustering_precision": p, "clustering_recall": r, "clustering_f1": f,
            "segments_scored": len(labelled),
            "predicted_workitems": len({s["predicted"] for s in labelled if s["predicted"]}),
            "per_effort": per_effort}


def effort_of_workitems(segs: list[dict[str, Any]]) -> dict[str, str]:
    """WorkItem id -> the effort most of its labelled segments belong to."""
    votes: dict[str, list[str]] = {}
    for s in segs:
        if s["predicted"] and s["effort"]:
            votes.setdefault(s["predicted"], []).append(s["effort"])
    return {wid: max(sorted(set(v)), key=v.count) for wid, v in votes.items()}


def _match(wid: str, key_of: dict[str, str]) -> str:
    if wid in key_of:
        return key_of[wid]
    hits = [k for k in key_of if k.startswith(wid) or wid.startswith(k)]
    return key_of[hits[0]] if len(hits) == 1 else f"?{wid[:10]}"


def links(truth: dict[str, Any], work: list[dict[str, Any]], key_of: dict[str, str]
          ) -> dict[str, Any]:
    """Commit-link precision/recall; merge commits are neither hits nor misses; links to
    commits no ref reaches (a squashed or rebased branch's originals) are reported apart."""
    merges = set(truth["merge_commits"])
    unreachable = set(truth["unreachable_commits"])
    truth_links = {(sha, e["key"]) for e in truth["efforts"] for sha in e["commits"]}
    pred_all = {(sha, _match(w["id"], key_of)) for w in work for sha in w["commits"]}
    pred = {(sha, k) for sha, k in pred_all if sha not in merges and sha not in unreachable}
    p, r, _ = _prf(len(pred & truth_links), len(pred - truth_links), len(truth_links - pred))
    linked = {sha for sha, _ in pred}
    unl = truth["unlinked_commits"]
    chores = [sha for role in ("chore", "release", "skeleton") for sha in unl[role]
              if sha in linked]
    teammate = [sha for sha in unl["teammate"] if sha in linked]
    return {"link_precision": p, "link_recall": r, "links_predicted": len(pred),
            "links_true": len(truth_links),
            "chores_linked": len(chores),
            "chores_total": sum(len(unl[r]) for r in ("chore", "release", "skeleton")),
            "teammate_linked": len(teammate), "teammate_total": len(unl["teammate"]),
            "unreachable_linked": len({sha for sha, _ in pred_all if sha in unreachable}),
            "wrong_links": sorted(f"{sha[:8]}->{k}" for sha, k in pred - truth_links)}


def resume(tw: Any, env: dict[str, str], key_of: dict[str, str]) -> list[dict[str, Any]]:
    repo = Path(tw.repo)
    out = []
    for q in tw.truth["resume"]:
        args = ("resume", q["goal"], "--json") if q["goal"] else ("resume", "--json")
        res = json.loads(query(repo, env, *args))
        got = [_match(c["id"], key_of) for c in res.get("candidates", [])]
        ok = res["state"] == q["expect"]
        if ok and q["expect"] == "confident":
            ok = got[:1] == [q["effort"]]
        if ok and q["expect"] == "ambiguous":
            ok = len(set(q["efforts"]) & set(got)) >= 2
        out.append({"goal": q["goal"], "kind": q["kind"], "expect": q["expect"],
                    "want": q.get("effort") or q.get("efforts"), "got": res["state"],
                    "candidates": got[:4], "ok": ok})
    return out


def ask(tw: Any, env: dict[str, str]) -> list[dict[str, Any]]:
    """A question is answered when a memory fact in the top 3 states the expected decision;
    for a reversed decision the earlier one must also be shown, labelled superseded."""
    repo = Path(tw.repo)
    out = []
    for q in tw.truth["ask"]:
        facts = json.loads(query(repo, env, "ask", q["question"], "--json", "-n", "10"))["facts"]
        want = _norm(q["expect"])
        top = facts[:3]
        hit = any(f["type"] not in ("workitem", "message") and want in _norm(f["text"])
                  for f in top)
        anywhere = any(want in _norm(f["text"]) for f in facts)
        sup_ok = True
        if q.get("superseded"):
            old = _norm(q["superseded"])
            sup_ok = any(old in _norm(f["text"]) and f.get("lifecycle") == "superseded"
                         for f in facts)
        out.append({"question": q["question"], "expect": q["expect"],
                    "top3": [f"{f['type']}: {f['text'][:70]}" for f in top],
                    "in_top3": hit, "in_any_fact": anywhere, "superseded_shown": sup_ok,
                    "ok": hit and sup_ok})
    return out


def measure(tw: Any, env: dict[str, str]) -> dict[str, Any]:
    """Every teamwork number against its truth."""
    repo = Path(tw.repo)
    truth = tw.truth
    segs = segment_predictions(tw)
    m: dict[str, Any] = clustering(segs)
    key_of = effort_of_workitems(segs)
    work = json.loads(query(repo, env, "work", "--json"))["workitems"]
    m.update(links(truth, work, key_of))
    m["workitems_published"] = len(work)
    res = resume(tw, env, key_of)
    m["resume"] = res
    m["resume_correct"] = sum(r["ok"] for r in res)
    m["resume_total"] = len(res)
    kinds: dict[str, list[int]] = {}
    for r in res:
        kinds.setdefault(r["kind"], [0, 0])
        kinds[r["kind"]][0] += r["ok"]
        kinds[r["kind"]][1] += 1
    m["resume_by_kind"] = {k: f"{a}/{b}" for k, (a, b) in sorted(kinds.items())}
    asks = ask(tw, env)
    m["ask"] = asks
    m["ask_top3"] = sum(a["ok"] for a in asks)
    m["ask_total"] = len(asks)
    m["ask_in_any_fact"] = sum(a["in_any_fact"] for a in asks)
    foreign = {(s["agent"], s["id"]) for s in truth["sessions"] if s["role"] == "foreign"}
    m["foreign_attributed"] = sorted(f"{a}:{i}" for w in work for s in w["sessions"]
                                     for a, i in [(s["agent"], s["id"])] if (a, i) in foreign)
    readonly = {(s["agent"], s["id"]) for s in truth["sessions"] if s["role"] == "readonly"}
    m["readonly_high"] = sorted(w["id"] for w in work if w.get("band") == "high" and w["sessions"]
                                and {(s["agent"], s["id"]) for s in w["sessions"]} <= readonly)
    m["segments"] = segs
    m["prompts_unmatched"] = sum(s["prompts"] - s["prompts_found"] for s in segs)
    from tests.bench.links_oracle import oracle_links  # the linker alone (truth clustering)

    m.update(oracle_links(repo.parent))
    return m


def shape(truth: dict[str, Any]) -> dict[str, Any]:
    """The benchmark's size, for the docs."""
    sessions = truth["sessions"]
    return {"efforts": len(truth["efforts"]), "commits": truth["repo"]["commits"],
            "sessions": len(sessions),
            "agents": dict(sorted(Counter(s["agent"] for s in sessions).items())),
            "segments": len(truth["segments"]),
            "multi_topic_sessions": sum(1 for s in sessions if s["segments"] > 1),
            "turns_min": min(s["turns"] for s in sessions),
            "turns_max": max(s["turns"] for s in sessions),
            "chore_commits": sum(len(truth["unlinked_commits"][r])
                                 for r in ("chore", "release", "skeleton")),
            "teammate_commits": len(truth["unlinked_commits"]["teammate"]),
            "merge_commits": len(truth["merge_commits"]),
            "resume_goals": len(truth["resume"]), "ask_questions": len(truth["ask"])}


def summary(m: dict[str, Any], cpu: dict[str, float]) -> str:
    """A few lines for the terminal."""
    from tests.bench.links_oracle import summary as oracle_summary

    lines = [
        f"teamwork clustering: P {m['clustering_precision']} R {m['clustering_recall']} "
        f"F1 {m['clustering_f1']} ({m['predicted_workitems']} WorkItems for "
        f"{len(m['per_effort'])} efforts, {m['segments_scored']} segments)",
        f"teamwork links: P {m['link_precision']} R {m['link_recall']}; chores linked "
        f"{m['chores_linked']}/{m['chores_total']}, teammate commits linked "
        f"{m['teammate_linked']}/{m['teammate_total']}",
        f"teamwork {oracle_summary(m)}",
        f"teamwork resume: {m['resume_correct']}/{m['resume_total']} {m['resume_by_kind']}",
        f"teamwork ask top-3: {m['ask_top3']}/{m['ask_total']} (expected text anywhere in the "
        f"facts: {m['ask_in_any_fact']})",
        f"teamwork foreign attributed: {m['foreign_attributed'] or 'none'}; read-only high: "
        f"{m['readonly_high'] or 'none'}; CPU s: {cpu}"]
    for r in m["resume"]:
        lines.append(f"  resume [{r['kind']}] {r['goal']!r}: want {r['expect']} {r['want']}, got "
                     f"{r['got']} {r['candidates']} {'ok' if r['ok'] else 'WRONG'}")
    for a in m["ask"]:
        lines.append(f"  ask {a['question']!r}: {'ok' if a['ok'] else 'MISS'} top3={a['top3']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.bench.quality_teamwork [--keep DIR] [--json PATH]`: build, run looma,
    print the numbers; `--keep` leaves the repository, HOME and truth.json in DIR to inspect
    (e.g. `cd DIR/repo && HOME=DIR/home looma work`)."""
    import tempfile

    args = argv if argv is not None else sys.argv[1:]
    keep = Path(args[args.index("--keep") + 1]) if "--keep" in args else None
    with tempfile.TemporaryDirectory(prefix="looma-teamwork-") as tmp:
        base = keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        bench, env, cpu = build(base)
        m = measure(bench, env)
        print(summary(m, cpu))
        if "--json" in args:
            Path(args[args.index("--json") + 1]).write_text(
                json.dumps(m, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
