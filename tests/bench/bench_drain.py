"""Benchmark: the drainer's link step after ONE small commit, and `reprocess`, by history size.

Run: .venv/bin/python -m tests.bench.bench_drain [--sizes 50,400] [--pad 60] [--code PATH]

For each size (efforts; two native Claude Code sessions per effort padded with `--pad` chat
events, ~4 commits per effort plus chores, built with `git fast-import` by
tests/bench/bench_backfill.py's generator) it runs
`looma init`, `looma ingest` (the first pass), then measures in fresh processes:
- `looma reprocess --json` (CPU of the child: the full rebuild),
- one small commit on an effort's file, then the drainer's link step
  (`api.linking.link_commits([sha])`) in a fresh interpreter: CPU seconds of the step alone
  (imports included, process start excluded), the ops it wrote, and whether it linked,
- `looma reprocess` right after: the ops it writes (0 when the hook path already matches a
  full rebuild).
`--code PATH` runs the same against another checkout (e.g. /work/main) for comparison.
Prints one table; numbers are CPU seconds (the machine is shared: ratios within one run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_backfill import (  # noqa: E402
    build_history,
    effort_files,
    effort_names,
    write_sessions,
)

STEP = """
import json, sys, time
t0 = time.process_time()
from looma_git.api.linking import link_commits
from looma_git.gitrepo import find_repo
paths = find_repo(sys.argv[1])
rep = link_commits(paths, [sys.argv[2]], by="hook")
print(json.dumps({"cpu": time.process_time() - t0, "ops": rep.ops, "linked": rep.linked}))
"""


def _env_for(base: Path, code: Path | None) -> dict[str, str]:
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = b@example.com\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))}
    env.update(HOME=str(home), LOOMA_NO_PROGRESS="1", GIT_CONFIG_NOSYSTEM="1")
    if code is not None:
        env["PYTHONPATH"] = str(code)
    return env


def _child_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _looma(repo: Path, env: dict[str, str], *args: str) -> tuple[str, float]:
    c0 = _child_cpu()
    out = subprocess.run([sys.executable, "-m", "looma_git", *args], cwd=repo, env=env,
                         capture_output=True, text=True, check=True).stdout
    return out, _child_cpu() - c0


FILLER = ("Looking at how the {w} handles retries and the error path before changing it.",
          "The {w} test suite passes locally; next the edge case with an empty payload.",
          "I kept the public interface of the {w} as it was and moved the parsing inside.")


def pad_sessions(home: Path, events: int) -> None:
    """Give every Claude Code session `events` more chat events (user/assistant text), so a
    pass that reads transcripts pays for history the way a real one does."""
    for f in sorted((home / ".claude" / "projects").rglob("*.jsonl")):
        lines = f.read_text().splitlines()
        last = json.loads(lines[-1])
        base = {k: last[k] for k in ("sessionId", "cwd", "gitBranch", "version",
                                     "isSidechain", "userType")}
        parent, ts = last["uuid"], last["timestamp"]
        word = f.stem.replace("-", " ")
        for i in range(events):
            uid = f"{f.stem}-pad{i}"
            role = "user" if i % 2 == 0 else "assistant"
            text = FILLER[i % 3].format(w=word)
            msg: dict[str, object] = {"role": role, "content": text}
            if role == "assistant":
                msg = {"id": f"msg_{uid}", "type": "message", "role": "assistant",
                       "model": "claude-test", "content": [{"type": "text", "text": text}]}
            lines.append(json.dumps(dict(base, type=role, uuid=uid, parentUuid=parent,
                                         timestamp=ts, message=msg)))
            parent = uid
        f.write_text("\n".join(lines) + "\n")


def run(base: Path, efforts: int, code: Path | None, pad: int = 0) -> dict[str, object]:
    env = _env_for(base, code)
    repo = base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    _, spans = build_history(repo, commits=efforts * 5, efforts=efforts, env=env)
    write_sessions(repo, env, efforts, spans)
    if pad:
        pad_sessions(Path(env["HOME"]), pad)
    _looma(repo, env, "init")
    _, ingest_cpu = _looma(repo, env, "ingest")
    out, reprocess_cpu = _looma(repo, env, "reprocess", "--json")
    name = effort_names(efforts)[efforts // 2]
    path = effort_files(efforts // 2, name)[0]
    with (repo / path).open("a") as fh:
        fh.write("# one more small step\n")
    subprocess.run(["git", "add", path], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", f"{name}: one more small step"], cwd=repo,
                   check=True, env=env)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, env=env,
                         capture_output=True, text=True).stdout.strip()
    step = json.loads(subprocess.run([sys.executable, "-c", STEP, str(repo), sha], cwd=repo,
                                     env=env, capture_output=True, text=True,
                                     check=True).stdout)
    after = json.loads(_looma(repo, env, "reprocess", "--json")[0])
    return {"efforts": efforts, "sessions": 2 * efforts, "commits": efforts * 5,
            "events_per_session": pad + 2,
            "ingest_cpu_s": round(ingest_cpu, 2), "reprocess_cpu_s": round(reprocess_cpu, 2),
            "reprocess_ops": json.loads(out)["ops_written"],
            "link_step_cpu_s": round(step["cpu"], 3), "link_step_ops": step["ops"],
            "reprocess_after_ops": after["ops_written"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="50,500")
    ap.add_argument("--code", default=None, help="run another checkout's looma_git")
    ap.add_argument("--pad", type=int, default=60, help="extra chat events per session")
    a = ap.parse_args()
    code = Path(a.code) if a.code else None
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(run(Path(tmp), n, code, a.pad))
            print(json.dumps(rows[-1]), flush=True)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
