"""Benchmark: `looma sync` of 1,000 new ops each way between two clones via a local bare remote.

Run: .venv/bin/python tests/bench/bench_sync.py [RUNS=3] [BATCHES=10]   (prints times, ratios
and peak RSS; BATCHES of 100 ops per clone: fewer only for a smoke run)

Each clone writes 1,000 ops (250 creates, 500 updates, 250 commit links, in batches of 100,
not timed). Then, each as a fresh `looma sync --json` process (interpreter start included):
A pushes its 1,000; B fetches them, merges with its own 1,000 and pushes the merge; A fetches
B's 1,000 (fast-forward). Target: the three syncs together <= 3 s on 2 cores.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from looma_git.api import ledger, sync
from looma_git.gitrepo import RepoPaths, find_repo
from looma_git.ledger.ops import OpDraft


def git(cwd: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=input, text=True, check=True,
                          capture_output=True).stdout.strip()


def write_ops(paths: RepoPaths, tag: str, shas: list[str], batches: int = 10) -> None:
    wids: list[str] = []
    for b in range(batches):
        drafts = [OpDraft("workitem.create", {"type": "workitem"},
                          {"title": f"{tag} item {b}-{i}", "files": [f"src/{tag}/m{b}/f{i}.py"],
                           "confidence": 0.5}) for i in range(25)]
        ops = ledger.append(paths, drafts, actor="system")
        wids += ["wi_" + o.id[:10] for o in ops]
        drafts = [OpDraft("workitem.update", {"type": "workitem", "id": wids[(b * 7 + i) % len(wids)]},
                          {"summary": f"{tag} progress {b}.{i}", "confidence": 0.6 + i / 1000})
                  for i in range(50)]
        drafts += [OpDraft("commit.link", {"type": "commit", "id": shas[(b * 25 + i) % len(shas)]},
                           {"workitem": wids[-1 - i], "confidence": 0.8, "by": "hook"})
                   for i in range(25)]
        ledger.append(paths, drafts, actor="system")


def timed_sync(repo: Path) -> tuple[float, dict]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "looma_git", "sync", "--json"], cwd=repo,
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, json.loads(proc.stdout)


def run_once(batches: int = 10) -> dict[str, float]:
    n = batches * 100  # ops per clone
    tmp = Path(tempfile.mkdtemp(prefix="looma-bench-sync-"))
    os.environ.update(HOME=str(tmp), GIT_CONFIG_NOSYSTEM="1")
    (tmp / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = b@e.com\n"
                                    "[init]\n\tdefaultBranch = main\n")
    bare = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", str(bare))
    seed = tmp / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    lines = []
    for i in range(500):
        lines += ["commit refs/heads/main", f"mark :{i + 1}",
                  f"committer B <b@e.com> {1700000000 + i} +0000", "data 2", "c"]
        if i:
            lines.append(f"from :{i}")
        lines += [f"M 644 inline f{i % 50}.txt", f"data {len(str(i))}", str(i), ""]
    git(seed, "fast-import", "--quiet", input="\n".join(lines) + "\n")
    git(seed, "push", "-q", str(bare), "main")
    clones = []
    for name in ("a", "b"):
        git(tmp, "clone", "-q", str(bare), name)
        paths = find_repo(tmp / name)
        ledger.init_repo(paths)
        sync.share_enable(paths, "origin")
        clones.append(paths)
    shas = git(seed, "rev-list", "main").split("\n")
    t0 = time.perf_counter()
    write_ops(clones[0], "a", shas, batches)
    write_ops(clones[1], "b", shas, batches)
    setup = time.perf_counter() - t0

    steps = []
    for label, paths in ((f"A pushes {n:,}", clones[0]),
                         (f"B fetches {n:,}, merges, pushes {n:,}", clones[1]),
                         (f"A fetches {n:,} (fast-forward)", clones[0])):
        seconds, out = timed_sync(paths.worktree)  # type: ignore[arg-type]
        steps.append((label, seconds, out))
    total = sum(s for _, s, _ in steps)
    heads = {git(p.worktree, "rev-parse", "refs/looma/ledger^{tree}") for p in clones}  # type: ignore[arg-type]
    notes = {git(p.worktree, "rev-parse", "refs/notes/looma^{tree}") for p in clones}  # type: ignore[arg-type]
    ops = [len(git(p.worktree, "ls-tree", "-r", "refs/looma/ledger", "ops/").splitlines())  # type: ignore[arg-type]
           for p in clones]
    t_start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import looma_git.cli.main"], check=True)
    startup = time.perf_counter() - t_start
    # Baseline in the same run: the git binary moving the same two refs (2,000 ops) into a
    # fresh clone, versus `looma sync` doing the same (transport + validation + merge + fold).
    git(tmp, "clone", "-q", str(bare), "c")
    c = find_repo(tmp / "c")
    t_start = time.perf_counter()
    git(tmp / "c", "fetch", "-q", "origin", "refs/looma/ledger:refs/bench/ledger",
        "refs/notes/looma:refs/bench/notes")
    git_fetch = time.perf_counter() - t_start
    ledger.init_repo(c)
    sync.share_enable(c, "origin")
    git(tmp / "c", "update-ref", "-d", "refs/bench/ledger")
    git(tmp / "c", "update-ref", "-d", "refs/bench/notes")
    subprocess.run(["git", "gc", "-q", "--prune=now"], cwd=tmp / "c", check=True)
    fresh, fresh_out = timed_sync(tmp / "c")
    assert fresh_out["ops_in"] == 2 * n, fresh_out

    print(f"setup (2 x {n:,} ops written, not timed): {setup:.1f} s")
    for label, seconds, out in steps:
        print(f"  {label:<42} {seconds:6.2f} s  in={out['ops_in']:<5} out={out['ops_out']:<5} "
              f"pushed={out['pushed']} retries={out['retries']}")
    print(f"  total of the three syncs: {total:.2f} s; fresh clone syncing all {2 * n:,} ops: "
          f"{fresh:.2f} s vs `git fetch` of the same refs {git_fetch:.2f} s "
          f"({fresh / max(git_fetch, 1e-6):.0f}x); interpreter + CLI import {startup:.2f} s")
    print(f"  converged: ledger trees {len(heads) == 1}, notes trees {len(notes) == 1}, "
          f"op files per clone {ops}")
    return {"total": total, "each_way": steps[1][1], "fresh": fresh}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print(f"machine: nproc={os.cpu_count()} {platform.machine()} Python "
          f"{platform.python_version()}, {git(Path.cwd(), 'version')}; "
          f"load average {os.getloadavg()[0]:.1f}")
    batches = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    n = batches * 100
    results = [run_once(batches) for _ in range(runs)]
    for key, label in (("each_way", f"one sync moving {n:,} ops in and {n:,} out"),
                       ("total", "A push + B sync + A fetch (all three)"),
                       ("fresh", f"fresh clone syncing {2 * n:,} ops")):
        vals = sorted(r[key] for r in results)
        print(f"{label:<46} best {vals[0]:.2f} s, median {vals[len(vals) // 2]:.2f} s")
    print(f"target <= 3 s for the three syncs: best run "
          f"{'met' if min(r['total'] for r in results) <= 3 else 'missed'}")
    print(f"peak RSS of a sync process: "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB; "
          f"this driver: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    from tests.bench.report import emit, metric
    totals = sorted(r["total"] for r in results)
    emit("sync", [metric(f"A push + B sync + A fetch, {n:,} ops each way (best run)", totals[0],
                         "s", 3.0, note=f"median {totals[len(totals) // 2]:.2f} s"),
                  metric(f"fresh clone syncing {2 * n:,} ops (best run)",
                         min(r["fresh"] for r in results), "s")])


if __name__ == "__main__":
    main()
