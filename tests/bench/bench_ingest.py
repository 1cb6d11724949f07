"""Ingest benchmark: 1,000 Claude Code + 500 Codex sessions (~100 events each), cold and re-run.

Run: .venv/bin/python tests/bench/bench_ingest.py [--claude 1000] [--codex 500]
Prints events/s end to end (subprocess `looma ingest`, imports included), peak RSS of the
ingest process and the no-change re-run time. Targets (2 cores): >= 10,000 events/s,
<= 400 MB, re-run <= 1 s.

`--read-path SESSIONS [--rounds 3]`: the scale benchmark's read-path row on its history
(tests/bench/scale_history.py; 2/3 of SESSIONS are Claude Code files), measured robustly on a
loaded machine: each round runs `looma ingest --no-refine --agent claude-code` on a cold store
and the plain FTS5 indexer right after it, and the ratio is taken within the round (CPU-s of
each process tree); prints every round and the median and best ratio. Same commands and work
as tests/bench/bench_scale.py's row, only repeated and paired.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.ingest.gen_claude import typical_session  # noqa: E402


def codex_rollout(cwd: str, seed: int, turns: int = 10) -> list[str]:
    """An enveloped-era Codex rollout (~10 records per turn, text also echoed as event_msg)."""
    sid = f"019e1625-789d-76c0-80ab-{seed:012d}"
    recs: list[dict] = [{"timestamp": "2026-05-12T10:00:00.000Z", "type": "session_meta",
                         "payload": {"id": sid, "timestamp": "2026-05-12T10:00:00.000Z",
                                     "cwd": cwd, "originator": "codex-tui",
                                     "cli_version": "0.125.0", "source": "cli",
                                     "git": {"branch": "main"}}}]
    for t in range(turns):
        ts = f"2026-05-12T10:{t % 60:02d}:{seed % 60:02d}.000Z"
        prompt = f"turn {t}: refactor module {seed}-{t} in src/m{t % 5}.py"
        recs += [
            {"timestamp": ts, "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5"}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": prompt}]}},
            {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message",
                                                              "message": prompt}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "call_id": f"c{seed}_{t}",
                "arguments": json.dumps({"cmd": "pytest -q", "workdir": cwd})}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"c{seed}_{t}",
                "output": "Process exited with code 0\nOutput:\n3 passed in 0.2s"}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "custom_tool_call", "name": "apply_patch", "call_id": f"p{seed}_{t}",
                "input": f"*** Begin Patch\n*** Update File: {cwd}/src/m{t % 5}.py\n@@\n-a\n+b\n"
                         "*** End Patch\n"}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "custom_tool_call_output", "call_id": f"p{seed}_{t}",
                "output": "Success. Updated the following files:\nM src/m.py"}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": f"Refactored step {t}."}]}},
            {"timestamp": ts, "type": "event_msg", "payload": {
                "type": "agent_message", "message": f"Refactored step {t}."}},
            {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count",
                                                              "info": None}},
        ]
    return [json.dumps(r) for r in recs]


def read_path(sessions: int, rounds: int) -> None:
    """Paired read path / FTS indexer rounds on the scale history (see the module doc)."""
    import statistics

    from tests.bench.bench_scale import FTS_BASELINE, looma, run
    from tests.bench.scale_history import build_history, git_env

    tmp = Path(tempfile.mkdtemp(prefix="looma-readpath-"))
    h = build_history(tmp / "h", sessions)
    env = git_env(h.home)
    run(looma("init"), h.repo, env)
    ratios: list[float] = []
    for k in range(rounds):
        for p in (h.repo / ".git" / "looma").glob("store.db*"):
            p.unlink()
        rp = run(looma("ingest", "--json", "--no-refine", "--agent", "claude-code"), h.repo, env)
        fts_db = tmp / "fts.db"
        fts = run([sys.executable, "-c", FTS_BASELINE, str(h.home / ".claude"), str(fts_db)],
                  h.repo, env)
        fts_db.unlink(missing_ok=True)
        ratios.append(rp.cpu / fts.cpu)
        print(f"round {k + 1}: read path {rp.cpu:.2f} CPU-s ({rp.rss_mb:.0f} MB, "
              f"{json.loads(rp.out)['events_added']:,} events from {h.claude} files), "
              f"FTS indexer {fts.cpu:.2f} CPU-s -> {ratios[-1]:.2f}x", flush=True)
    print(f"read path / FTS indexer at {sessions} sessions: median {statistics.median(ratios):.2f}x,"
          f" best {min(ratios):.2f}x over {rounds} paired rounds")
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude", type=int, default=1000)
    ap.add_argument("--codex", type=int, default=500)
    ap.add_argument("--read-path", type=int, default=0, metavar="SESSIONS",
                    help="paired read-path / FTS indexer rounds on the scale history instead")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.read_path:
        read_path(args.read_path, args.rounds)
        return
    tmp = Path(tempfile.mkdtemp(prefix="looma-bench-"))
    repo, home = tmp / "repo", tmp / "home"
    repo.mkdir()
    env = dict(os.environ, HOME=str(home), LOOMA_NO_PROGRESS="1", GIT_CONFIG_NOSYSTEM="1")
    for k in [k for k in env if k.startswith(("XDG_", "CLAUDE_", "CODEX_"))]:
        del env[k]
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    t0 = time.perf_counter()
    projects = home / ".claude" / "projects"
    records = 0
    for i in range(args.claude):
        w = typical_session(str(repo), seed=i, turns=10)
        records += len(w.records)
        w.write(projects)
    day = home / ".codex" / "sessions" / "2026" / "05" / "12"
    day.mkdir(parents=True, exist_ok=True)
    for i in range(args.codex):
        lines = codex_rollout(str(repo), seed=i)
        records += len(lines)
        (day / f"rollout-2026-05-12T10-00-00-019e1625-789d-76c0-80ab-{i:012d}.jsonl").write_text(
            "\n".join(lines) + "\n")
    size = sum(p.stat().st_size for p in home.rglob("*.jsonl"))
    print(f"generated {args.claude} claude + {args.codex} codex sessions: {records} records, "
          f"{size / 1e6:.1f} MB in {time.perf_counter() - t0:.1f}s")
    # --no-refine: this measures reading transcripts into the store, not the work model.
    cmd = [sys.executable, "-m", "looma_git", "ingest", "--json", "--no-refine"]
    agents = ["--agent", "claude-code"] + (["--agent", "codex"] if args.codex else [])

    def run() -> tuple[float, dict, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        s = time.perf_counter()
        out = subprocess.run(cmd + agents, cwd=repo, env=env, capture_output=True, text=True,
                             check=True)
        wall = time.perf_counter() - s
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return wall, json.loads(out.stdout), max(peak, before) / 1024

    wall, rep, peak = run()
    stored = rep["events_added"]
    per_agent = {a: v["events_added"] for a, v in rep["agents"].items()}
    print(f"cold ingest: {stored} events stored ({per_agent}) from {records} records in "
          f"{wall:.2f}s -> {stored / wall:,.0f} events/s, {records / wall:,.0f} records/s; "
          f"peak RSS {peak:.0f} MB; noise {rep['noise']}; skipped {rep['skipped']}")
    wall2, rep2, _ = run()
    print(f"no-change re-run: {wall2:.2f}s (events added {rep2['events_added']}, "
          f"sources unchanged {rep2['sources_unchanged']}/{rep2['sources_scanned']})")
    print(f"targets: events/s >= 10000: {stored / wall >= 10000}; peak <= 400 MB: "
          f"{peak <= 400}; re-run <= 1 s: {wall2 <= 1.0}")
    db = repo / ".git" / "looma" / "store.db"
    print(f"store.db {db.stat().st_size / 1e6:.1f} MB; temp dir {tmp}")
    from tests.bench.report import emit, metric
    emit("ingest", [metric("cold ingest", stored / wall, "events/s", 10000, "higher",
                           note=f"{records / wall:,.0f} records/s; {stored:,} events"),
                    metric("ingest process peak RSS", peak, "MB", 400),
                    metric("no-change re-run", wall2, "s", 1.0)])


if __name__ == "__main__":
    main()
