"""Benchmark: resume/ask latency, reindex time and `looma --help` on a large store; prints only.

Run: .venv/bin/python tests/bench/bench_retrieval.py [--quick] [--items 500] [--claude 2000]
         [--codex 850] [--ops 5000] [--goals 20]

Builds a temp repository with 2 commits per WorkItem, ~150k events ingested by the real
`looma ingest` from generated Claude Code and Codex transcripts (each session about one
WorkItem's topic), then a ledger of ~5,000 system ops shaped like the refinery's
(`workitem.create`, `memory.promote`, `commit.link`, `workitem.update`). Measures, in one run:
`looma resume GOAL` as a fresh process (vs `python -c pass`), in-process `api.query.resume`
and `ask`, `looma reindex` on a fresh clone that has only the looma refs (and on the full
local store), `looma --help`, and peak RSS. The last line is `BENCH-JSON {...}` for run_all.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_ingest import codex_rollout  # noqa: E402
from tests.bench.report import emit, metric  # noqa: E402
from tests.ingest.gen_claude import SessionWriter  # noqa: E402

AREAS = ("auth billing cache search ledger notes hooks ingest parser export importer scheduler "
         "mailer webhook gateway metrics tracing storage upload payments profile session "
         "inventory reports admin").split()
TOPICS = ("ratelimit retry pagination encryption validation migration timeout logging "
          "caching batching compression tokens permissions locale audit quota backoff "
          "streaming checksum snapshot").split()
VERBS = ("Add", "Fix", "Refactor", "Harden", "Speed up")
KINDS = {"Add": "feature", "Fix": "bugfix", "Refactor": "refactor", "Harden": "feature",
         "Speed up": "refactor"}
COLD_GOALS = ("kubernetes helm chart rollout", "graphql federation gateway schema stitching",
              "android push notification badge")


def _peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def item_spec(i: int) -> dict[str, Any]:
    """The i-th synthetic effort: a distinct (area, topic) pair and its file group."""
    area, topic = AREAS[i % len(AREAS)], TOPICS[(i // len(AREAS)) % len(TOPICS)]
    gen = i // (len(AREAS) * len(TOPICS))  # beyond 500 items, a numbered generation
    verb = VERBS[i % len(VERBS)]
    suffix = f" v{gen + 1}" if gen else ""
    mod = f"{topic}{gen + 1 if gen else ''}"
    return {"area": area, "topic": topic, "verb": verb, "kind": KINDS[verb],
            "title": f"{verb} {topic} in {area}{suffix}",
            "files": [f"src/{area}/{mod}.py", f"tests/{area}/test_{mod}.py",
                      f"src/{area}/__init__.py"]}


def git(cwd: Path, *args: str, env: dict[str, str], input: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, input=input, text=True, check=True,
                          capture_output=True).stdout.strip()


def make_commits(repo: Path, specs: list[dict[str, Any]], env: dict[str, str]) -> list[str]:
    """Two commits per WorkItem touching its files, written with `git fast-import`."""
    lines: list[str] = []
    n = 0
    for i, s in enumerate(specs):
        for k in range(2):
            n += 1
            msg = f"{s['verb'].lower()} {s['topic']} in {s['area']} (part {k + 1})\n"
            lines += ["commit refs/heads/main", f"mark :{n}",
                      f"author Bench <b@e.com> {1767225600 + n * 60} +0000",
                      f"committer Bench <b@e.com> {1767225600 + n * 60} +0000",
                      f"data {len(msg.encode())}", msg.rstrip("\n")]
            if n > 1:
                lines.append(f"from :{n - 1}")
            for f in s["files"][:2]:
                body = f"# {s['title']} {k} {i}\n"
                lines += [f"M 644 inline {f}", f"data {len(body.encode())}", body.rstrip("\n")]
            lines.append("")
    git(repo, "fast-import", "--quiet", env=env, input="\n".join(lines) + "\n")
    git(repo, "reset", "-q", "--hard", "main", env=env)
    return list(reversed(git(repo, "rev-list", "main", env=env).split("\n")))


def claude_session(cwd: str, seed: int, spec: dict[str, Any], turns: int = 10) -> SessionWriter:
    """~50 stored events: prompts and replies about one WorkItem's topic and files."""
    w = SessionWriter(cwd, seed=seed)
    src, test = spec["files"][0], spec["files"][1]
    for t in range(turns):
        w.user(f"turn {t}: {spec['verb'].lower()} the {spec['topic']} handling in the "
               f"{spec['area']} module ({src}), step {seed}-{t}")
        w.assistant(f"Reading {src} to see how {spec['topic']} works in {spec['area']}.",
                    [("Read", {"file_path": f"{cwd}/{src}"})], [("1\timport os\n2\t...",
                                                                  False, None)])
        w.assistant("I'll edit the function.",
                    [("Edit", {"file_path": f"{cwd}/{src}", "old_string": "a",
                               "new_string": "b"})], [("The file has been updated.", False, None)])
        w.assistant(None, [("Bash", {"command": f"python -m pytest -q {test}"})],
                    [("4 passed in 0.1s", False, {"stdout": "4 passed in 0.1s", "stderr": "",
                                                  "interrupted": False})])
        w.assistant(f"Step {t} done: {spec['topic']} in {spec['area']} now covers case {seed}.")
        if t % 3 == 0:
            w.noise()
    return w


def write_sessions(home: Path, repo: Path, specs: list[dict[str, Any]], n_claude: int,
                   n_codex: int) -> tuple[dict[int, list[tuple[str, str]]], int]:
    """Transcripts under HOME; returns WorkItem index -> its (agent, session id) pairs."""
    by_item: dict[int, list[tuple[str, str]]] = {}
    projects = home / ".claude" / "projects"
    records = 0
    for s in range(n_claude):
        i = s % len(specs)
        w = claude_session(str(repo), s, specs[i])
        records += len(w.records)
        w.write(projects)
        by_item.setdefault(i, []).append(("claude-code", w.sid))
    day = home / ".codex" / "sessions" / "2026" / "05" / "12"
    day.mkdir(parents=True, exist_ok=True)
    for s in range(n_codex):
        i = (s * 7) % len(specs)
        lines = codex_rollout(str(repo), seed=s)
        records += len(lines)
        sid = f"019e1625-789d-76c0-80ab-{s:012d}"
        (day / f"rollout-2026-05-12T10-00-00-{sid}.jsonl").write_text("\n".join(lines) + "\n")
        by_item.setdefault(i, []).append(("codex", sid))
    return by_item, records


def ledger_drafts(specs: list[dict[str, Any]], sessions: dict[int, list[tuple[str, str]]]
                  ) -> list[dict[str, Any]]:
    """workitem.create payloads as `pipeline.promote.plan_workitems` shapes them."""
    out = []
    for i, s in enumerate(specs):
        conf = round(0.6 + (i % 35) / 100, 2)
        sess = sessions.get(i, [])
        out.append({"op": "workitem.create", "target": {"type": "workitem", "id": None},
                    "payload": {
                        "title": s["title"], "kind": s["kind"], "status": "active",
                        "summary": f"{s['verb']} {s['topic']} for the {s['area']} service: "
                                   f"touches {s['files'][0]} and its tests.",
                        "files": s["files"], "aliases": [f"{s['area']} {s['topic']}"],
                        "branch": f"feat/{s['area']}-{s['topic']}", "confidence": conf,
                        "band": "high" if conf >= 0.75 else "medium",
                        "features": {"commits": 1.0, "sessions": round(min(1, len(sess) / 5), 2)},
                        "evidence": [{"quote": f"{s['verb'].lower()} the {s['topic']} handling",
                                      "agent": a, "session": sid, "event": f"e{i}",
                                      "hash": f"{i:064x}"} for a, sid in sess[:2]],
                        "sessions": [{"agent": a, "id": sid} for a, sid in sess],
                        "local_id": f"w{i}"}})
    return out


def build_store(base: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """Repository + ingested events + ledger; returns what the measurements need."""
    from looma_git.api import ledger as api_ledger
    from looma_git.gitrepo import find_repo
    from looma_git.ledger.ops import OpDraft

    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", env=env)
    specs = [item_spec(i) for i in range(args.items)]
    t = time.perf_counter()
    shas = make_commits(repo, specs, env)
    sessions, records = write_sessions(Path(env["HOME"]), repo, specs, args.claude, args.codex)
    gen_s = time.perf_counter() - t
    _looma(repo, env, "init")
    t = time.perf_counter()
    rep = json.loads(_looma(repo, env, "ingest", "--json", "--no-refine", "--agent", "claude-code",
                            "--agent", "codex"))
    ingest_s = time.perf_counter() - t
    paths = find_repo(repo)
    t = time.perf_counter()
    wids: list[str] = []
    drafts = ledger_drafts(specs, sessions)
    for b in range(0, len(drafts), 100):
        ops = api_ledger.append(paths, [OpDraft(**d) for d in drafts[b:b + 100]], actor="system")
        wids += ["wi_" + o.id[:10] for o in ops]
    n_ops = len(wids)
    mem_kinds = ("decision", "todo", "bug")
    mems = [OpDraft("memory.promote", {"type": "memory", "id": None}, {
        "kind": mem_kinds[k], "workitem": wids[i], "confidence": 0.8, "band": "high",
        "text": (f"Decided to keep {s['topic']} in {s['area']} behind a flag",
                 f"TODO: cover {s['topic']} edge cases in {s['files'][1]}",
                 f"Bug: {s['topic']} fails when {s['area']} is empty")[k],
        "features": {"explicit": 1.0},
        "evidence": [{"quote": f"we should handle {s['topic']}", "agent": "claude-code",
                      "session": "s", "event": f"m{i}{k}", "hash": f"{i * 3 + k:064x}"}],
        "local_id": f"m{i}{k}"}) for i, s in enumerate(specs) for k in range(3)]
    links = [OpDraft("commit.link", {"type": "commit", "id": sha}, {
        "workitem": wids[j // 2], "title": specs[j // 2]["title"], "confidence": 0.85,
        "by": "backfill", "patch_id": None, "files": specs[j // 2]["files"][:2], "branch": "main",
        "why": {"files": 1.0}}) for j, sha in enumerate(shas[:2 * len(specs)])]
    rest = mems + links
    for b in range(0, len(rest), 250):
        n_ops += len(api_ledger.append(paths, rest[b:b + 250], actor="system"))
    k = 0
    while n_ops < args.ops:
        batch = [OpDraft("workitem.update", {"type": "workitem", "id": wids[(k + j) % len(wids)]},
                         {"summary": f"{specs[(k + j) % len(wids)]['verb']} "
                                     f"{specs[(k + j) % len(wids)]['topic']} for the "
                                     f"{specs[(k + j) % len(wids)]['area']} service, "
                                     f"revision {k + j}"})
                 for j in range(min(250, args.ops - n_ops))]
        n_ops += len(api_ledger.append(paths, batch, actor="system"))
        k += len(batch)
    ledger_s = time.perf_counter() - t
    t = time.perf_counter()
    _looma(repo, env, "reindex")
    first_reindex_s = time.perf_counter() - t
    print(f"built: {len(specs)} WorkItems, {len(shas)} commits, {records} transcript records -> "
          f"{rep['events_added']} events (ingest {ingest_s:.1f} s), {n_ops} ledger ops "
          f"({ledger_s:.1f} s), first reindex {first_reindex_s:.1f} s; generation {gen_s:.1f} s",
          flush=True)
    return {"repo": repo, "paths": paths, "specs": specs, "events": rep["events_added"],
            "ops": n_ops, "wids": wids}


def _looma(repo: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "looma_git", *args], cwd=repo, env=env,
                          capture_output=True, text=True, check=True).stdout


def goals(specs: list[dict[str, Any]], n: int) -> list[str]:
    """Mostly specific goals (one WorkItem), a few broad ones (ambiguous) and cold ones."""
    step = max(1, len(specs) // max(1, n))
    out = [f"{specs[i]['topic']} {specs[i]['area']}" for i in range(0, len(specs), step)]
    out = out[: max(1, n - 2 - len(COLD_GOALS))]
    out += [f"{specs[0]['area']} work", f"{specs[1]['topic']}"]
    return (out + list(COLD_GOALS))[:n]


def timed_proc(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
    return time.perf_counter() - t


def fresh_clone(base: Path, repo: Path, env: dict[str, str]) -> Path:
    """A teammate's clone: the code plus only the looma refs, no transcripts, no index."""
    clone = base / "clone"
    git(base, "clone", "-q", str(repo), str(clone), env=env)
    git(clone, "fetch", "-q", "origin", "refs/looma/ledger:refs/looma/ledger",
        "refs/notes/looma:refs/notes/looma", env=env)
    return clone


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--claude", type=int, default=2000)
    ap.add_argument("--codex", type=int, default=850)
    ap.add_argument("--ops", type=int, default=5000)
    ap.add_argument("--goals", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3, help="in-process rounds over the goals")
    args = ap.parse_args()
    if args.quick:
        args.items, args.claude, args.codex, args.ops, args.goals, args.repeat = \
            30, 10, 4, 200, 2, 1  # the reindexes embed every event: few sessions; two goals
        # (a specific and a broad one): each is four fresh processes, one a model load
    base = Path(tempfile.mkdtemp(prefix="looma-bench-retrieval-"))
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = b@e.com\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "XDG_", "CLAUDE_", "CODEX_", "LOOMA_"))}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", LOOMA_NO_PROGRESS="1")
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the in-process api reads git config through git itself
    try:
        metrics = run(base, args, env)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(base, ignore_errors=True)
    emit("retrieval", metrics, quick=args.quick)


def run(base: Path, args: argparse.Namespace, env: dict[str, str]) -> list[dict[str, Any]]:
    """Every measurement of this benchmark, as run_all metrics."""
    from looma_git.api import facts, query

    store = build_store(base, args, env)
    repo, paths = store["repo"], store["paths"]
    gs = goals(store["specs"], args.goals)
    py = [sys.executable]
    looma = [*py, "-m", "looma_git"]

    # Fresh processes, interleaved so load on the shared machine hits all of them alike.
    base_t, help_t, resume_t, states = [], [], [], {}
    for g in gs:
        base_t.append(timed_proc([*py, "-c", "pass"], repo, env))
        help_t.append(timed_proc([*looma, "--help"], repo, env))
        resume_t.append(timed_proc([*looma, "resume", g], repo, env))
    for g in gs:
        states[g] = json.loads(_looma(repo, env, "resume", g, "--json"))["state"]
    counts = {s: list(states.values()).count(s) for s in ("confident", "ambiguous", "cold")}
    proc_peak = _peak_mb(resource.RUSAGE_CHILDREN)

    # In process: the first call pays imports and the first fold; the rest are warm.
    t = time.perf_counter()
    query.resume(paths, gs[0])
    first_call = time.perf_counter() - t
    warm: list[float] = []
    for _ in range(args.repeat):
        for g in gs:
            t = time.perf_counter()
            query.resume(paths, g)
            warm.append(time.perf_counter() - t)
    ask_t: list[float] = []
    for _ in range(args.repeat):
        for g in gs:
            t = time.perf_counter()
            facts.ask(paths, g)
            ask_t.append(time.perf_counter() - t)

    # The first resume after a ledger write pays an incremental reindex (ensure_fresh).
    from looma_git.api import ledger as api_ledger
    from looma_git.ledger.ops import OpDraft

    api_ledger.append(paths, [OpDraft("workitem.update", {"type": "workitem",
                                                          "id": store["wids"][0]},
                                      {"summary": "one more revision after the build"})],
                      actor="system")
    t = time.perf_counter()
    query.resume(paths, gs[0])
    after_write = time.perf_counter() - t

    clone = fresh_clone(base, repo, env)
    reindex_clone = timed_proc([*looma, "reindex"], clone, env)
    reindex_local = timed_proc([*looma, "reindex"], repo, env)

    b50, h50, r50, r95 = (statistics.median(base_t), statistics.median(help_t),
                          statistics.median(resume_t), _pct(resume_t, 0.95))
    rss = max(_peak_mb(resource.RUSAGE_SELF), _peak_mb(resource.RUSAGE_CHILDREN))
    print(f"store: {store['events']} events, {len(store['wids'])} WorkItems, {store['ops']} ops; "
          f"{len(gs)} goals -> {counts}")
    print(f"python -c pass: p50 {b50 * 1000:.0f} ms")
    print(f"looma --help: p50 {h50 * 1000:.0f} ms ({h50 / b50:.1f}x python -c pass)")
    print(f"looma resume GOAL (fresh process): p50 {r50 * 1000:.0f} ms, p95 {r95 * 1000:.0f} ms "
          f"({r50 / b50:.1f}x python -c pass; peak RSS {proc_peak:.0f} MB)")
    print(f"api.query.resume in process: first {first_call * 1000:.0f} ms, warm p50 "
          f"{statistics.median(warm) * 1000:.1f} ms, p95 {_pct(warm, 0.95) * 1000:.1f} ms")
    print(f"api.query.ask in process: p50 {statistics.median(ask_t) * 1000:.1f} ms, "
          f"p95 {_pct(ask_t, 0.95) * 1000:.1f} ms")
    print(f"api.query.resume right after one ledger write (incremental reindex): "
          f"{after_write * 1000:.0f} ms")
    print(f"looma reindex, fresh clone (ledger refs only, {store['ops']} ops): "
          f"{reindex_clone:.2f} s; full local store ({store['events']} events): "
          f"{reindex_local:.2f} s")
    print(f"peak RSS: {rss:.0f} MB")

    m = metric
    return [
        m("resume fresh process p50", r50 * 1000, "ms", 400.0,
          note=f"p95 {r95 * 1000:.0f} ms; {r50 / b50:.1f}x python -c pass"),
        m("resume in-process p50", statistics.median(warm) * 1000, "ms", 50.0,
          note=f"p95 {_pct(warm, 0.95) * 1000:.1f} ms"),
        m("ask in-process p50", statistics.median(ask_t) * 1000, "ms", None,
          note=f"p95 {_pct(ask_t, 0.95) * 1000:.1f} ms"),
        m("resume after a ledger write", after_write * 1000, "ms", None,
          note="in process; includes the incremental reindex"),
        m(f"reindex fresh clone ({store['ops']} ops)", reindex_clone, "s", 5.0,
          note=f"full local store with {store['events']} events: {reindex_local:.1f} s"),
        m("looma --help p50", h50 * 1000, "ms", 150.0, note=f"{h50 / b50:.1f}x python -c pass"),
    ]


if __name__ == "__main__":
    main()
