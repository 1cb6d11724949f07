"""Benchmark: fresh-process `looma resume`/`ask`/`work` (wall and CPU, p50), prints only.

Run: .venv/bin/python -m tests.bench.bench_fast_start [--quick] [--runs 7] [--items 300]
         [--claude 900] [--codex 300] [--ops 4000]

Builds the store of `bench_retrieval` (real `looma ingest` of generated Claude Code and Codex
transcripts, a ledger shaped like the refinery's, one `looma reindex`), then times fresh
processes, interleaved with `python -c pass` so machine load hits all alike:
- resume with a goal the words decide (no model loaded),
- resume with a paraphrase (meaning needed): the first run embeds the goal, later runs read
  the query-vector cache,
- resume without a goal, `ask`, `work`,
- resume right after a ledger write (what a commit's drain does): no reindex first.
CPU is user+sys of the child and everything it waited for (git), from getrusage.
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

from tests.bench.report import emit, metric  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one fresh process."""
    c0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd} failed: {proc.stderr[-2000:]}")
    return wall, cpu, proc.stdout


def imports_of(cmd: list[str], cwd: Path, env: dict[str, str]) -> set[str]:
    """Top-level packages a fresh process imported (from -X importtime)."""
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    out = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:"):
            name = line.rsplit("|", 1)[-1].strip()
            out.add(name.split(".")[0])
    return out


SYNONYMS = {"ratelimit": "throttle abusive clients", "pagination": "paging through long lists",
            "encryption": "encrypting data at rest", "timeout": "calls that hang for too long",
            "retry": "try again after transient failures", "logging": "what gets written to logs",
            "caching": "keep results in memory between calls"}


def _paraphrase(specs: list[dict[str, Any]]) -> str:
    """A goal sharing no word with any WorkItem: only meaning can match it."""
    for s in specs:
        if s["topic"] in SYNONYMS:
            return f"{SYNONYMS[s['topic']]} for {s['area']}"
    return "throttle abusive clients"


def build(base: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    from tests.bench.bench_retrieval import build_store

    return build_store(base, args, env)


def run(store: dict[str, Any], env: dict[str, str], runs: int) -> list[dict[str, Any]]:
    repo = store["repo"]
    specs = store["specs"]
    py = [sys.executable]
    looma = [*py, "-m", "looma_git"]
    cases: dict[str, list[str]] = {
        "python -c pass": [*py, "-c", "pass"],
        "resume (words decide)": [*looma, "resume", f"{specs[3]['topic']} {specs[3]['area']}"],
        "resume (paraphrase, cached vector)": [*looma, "resume", _paraphrase(specs)],
        "resume (no goal)": [*looma, "resume"],
        "ask": [*looma, "ask", f"why {specs[7]['topic']} in {specs[7]['area']}"],
        "work": [*looma, "work"],
    }
    # The paraphrase's first run embeds the goal (model loaded) and fills the cache.
    first_wall, first_cpu, _ = timed(cases["resume (paraphrase, cached vector)"], repo, env)
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    for _ in range(runs):
        for name, cmd in cases.items():
            w, c, _ = timed(cmd, repo, env)
            samples[name].append((w, c))
    # Right after a commit: the drain wrote to the ledger; resume must not reindex first.
    from looma_git.api import ledger as api_ledger
    from looma_git.gitrepo import find_repo
    from looma_git.ledger.ops import OpDraft

    after: list[tuple[float, float]] = []
    paths = find_repo(repo)
    for i in range(max(3, runs // 2)):
        api_ledger.append(paths, [OpDraft("workitem.update", {"type": "workitem",
                                                              "id": store["wids"][i]},
                                          {"summary": f"one more revision {i}"})],
                          actor="system")
        w, c, _ = timed(cases["resume (words decide)"], repo, env)
        after.append((w, c))
    heavy = imports_of(cases["resume (words decide)"], repo, env) & {
        "onnxruntime", "tokenizers", "numpy", "pydantic", "tantivy", "sqlite_vec"}
    heavy_para = imports_of(cases["resume (paraphrase, cached vector)"], repo, env) & {
        "onnxruntime", "tokenizers", "numpy", "pydantic", "tantivy", "sqlite_vec"}

    def p50(xs: list[tuple[float, float]], i: int) -> float:
        return statistics.median(x[i] for x in xs) * 1000

    base_w, base_c = p50(samples["python -c pass"], 0), p50(samples["python -c pass"], 1)
    print(f"store: {store['events']} events, {len(store['wids'])} WorkItems, {store['ops']} ops; "
          f"{runs} runs each, interleaved")
    print(f"{'fresh process':<40} {'wall p50':>9} {'CPU p50':>9} {'CPU / python':>13}")
    rows = []
    for name, xs in [*samples.items(), ("resume right after a ledger write", after)]:
        w, c = p50(xs, 0), p50(xs, 1)
        print(f"{name:<40} {w:>7.0f}ms {c:>7.0f}ms {c / base_c if base_c else 0:>12.1f}x")
        rows.append((name, w, c))
    print(f"paraphrase, first run (embeds the goal): wall {first_wall * 1000:.0f} ms, "
          f"CPU {first_cpu * 1000:.0f} ms")
    print(f"heavy imports: words-decided resume {sorted(heavy) or 'none'}; "
          f"cached paraphrase {sorted(heavy_para) or 'none'}")
    m = metric
    out = [m(f"{name} p50", w, "ms", 300.0 if name.startswith("resume") else None,
             note=f"CPU {c:.0f} ms ({c / base_c if base_c else 0:.1f}x python -c pass "
                  f"{base_c:.0f} ms)") for name, w, c in rows if name != "python -c pass"]
    out.append(m("paraphrase first run (model load)", first_wall * 1000, "ms", None,
                 note=f"CPU {first_cpu * 1000:.0f} ms"))
    out.append(m("python -c pass p50", base_w, "ms", None, note=f"CPU {base_c:.0f} ms"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--store", help="reuse a store built before (a dir with info.json)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--claude", type=int, default=900)
    ap.add_argument("--codex", type=int, default=300)
    ap.add_argument("--ops", type=int, default=4000)
    args = ap.parse_args()
    if args.quick:
        args.items, args.claude, args.codex, args.ops, args.runs = 30, 30, 10, 200, 3
    base = Path(tempfile.mkdtemp(prefix="looma-bench-start-"))
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = b@e.com\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "XDG_", "CLAUDE_", "CODEX_", "LOOMA_"))}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", LOOMA_NO_PROGRESS="1")
    saved = dict(os.environ)
    try:
        if args.store:
            info = json.loads((Path(args.store) / "info.json").read_text())
            env = info["env"]
            os.environ.clear()
            os.environ.update(env)
            from looma_git.api.index import load_records
            from looma_git.gitrepo import find_repo

            items = load_records(find_repo(info["repo"]))
            store = {"repo": Path(info["repo"]), "specs": info["specs"],
                     "wids": [it.id for it in items], "events": "?", "ops": "?"}
        else:
            os.environ.clear()
            os.environ.update(env)
            store = build(base, args, env)
        metrics = run(store, env, args.runs)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(base, ignore_errors=True)
    emit("fast_start", metrics, quick=args.quick)


if __name__ == "__main__":
    main()
