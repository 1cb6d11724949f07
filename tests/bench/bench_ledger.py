"""Benchmark: 10,000 ledger ops in batches of 100, and notes for 2,000 commits.

Run: .venv/bin/python tests/bench/bench_ledger.py [--quick]   (prints times, rates, peak RSS;
--quick: a tenth of the sizes, a smoke run)
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from looma_git.api import ledger as api
from looma_git.gitrepo import find_repo
from looma_git.ledger.ops import OpDraft


def git(cwd: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=input, text=True, check=True,
                          capture_output=True).stdout.strip()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    scale = 10 if "--quick" in sys.argv[1:] else 1
    tmp = Path(tempfile.mkdtemp(prefix="looma-bench-"))
    os.environ.update(HOME=str(tmp), GIT_CONFIG_NOSYSTEM="1")
    (tmp / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = b@e.com\n")
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    n_commits = 2000 // scale
    n_batches = 100 // scale
    lines = []
    for i in range(n_commits):
        lines += ["commit refs/heads/main", f"mark :{i + 1}",
                  f"committer B <b@e.com> {1700000000 + i} +0000", "data 2", "c\n"[:2]]
        if i:
            lines.append(f"from :{i}")
        lines += [f"M 644 inline f{i % 50}.txt", f"data {len(str(i))}", str(i), ""]
    git(repo, "fast-import", "--quiet", input="\n".join(lines) + "\n")
    shas = git(repo, "rev-list", "main").split("\n")
    paths = find_repo(repo)
    api.init_repo(paths)

    # wall time and this process's CPU time: the machine is shared, so wall time alone mostly
    # measures the neighbours (load average printed with the machine line)
    t0, c0 = time.perf_counter(), time.process_time()
    wids: list[str] = []
    for b in range(n_batches):
        creates = 100 if not wids else 20
        drafts = [OpDraft("workitem.create", {"type": "workitem"},
                          {"title": f"Work item {b}-{i}", "kind": "feature",
                           "files": [f"src/m{b}/f{i}.py"], "confidence": 0.5 + i / 1000})
                  if i < creates else
                  OpDraft("workitem.update",
                          {"type": "workitem", "id": wids[(b * 7 + i) % len(wids)]},
                          {"summary": f"summary {b}-{i}", "confidence": 0.6})
                  for i in range(100)]
        ops = api.append(paths, drafts, actor="system")
        wids += ["wi_" + o.id[:10] for o in ops if o.op == "workitem.create"]
    t_ops, c_ops = time.perf_counter() - t0, time.process_time() - c0
    n_ops = len(api.log(paths))

    t1, c1 = time.perf_counter(), time.process_time()
    api.append(paths, [OpDraft("commit.link", {"type": "commit", "id": s},
                               {"workitem": wids[i % len(wids)], "confidence": 0.8, "by": "backfill",
                                "files": [f"f{i % 50}.txt"], "branch": "main"})
                       for i, s in enumerate(shas)], actor="system")
    t_notes, c_notes = time.perf_counter() - t1, time.process_time() - c1
    n_notes = len(git(repo, "notes", "--ref=looma", "list").split("\n"))

    t2 = time.perf_counter()
    report = api.verify(paths)
    t_verify = time.perf_counter() - t2
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    packs = len(list((repo / ".git" / "objects" / "pack").glob("*.pack")))
    print(f"machine: nproc={os.cpu_count()} cpu={cpu} python={platform.python_version()} "
          f"{git(repo, 'version')} load={os.getloadavg()[0]:.1f}")
    print(f"ledger: {n_ops} ops in {n_batches} batches: {t_ops:.2f} s ({n_ops / t_ops:,.0f} ops/s), "
          f"cpu {c_ops:.2f} s")
    print(f"notes: {n_notes} notes ({n_commits:,} link ops, one batch): {t_notes:.2f} s "
          f"({n_notes / t_notes:,.0f} notes/s), cpu {c_notes:.2f} s")
    print(f"packs in the repository after the run: {packs}")
    print(f"verify: {t_verify:.2f} s ok={report.ok} problems={len(report.problems)}")
    print(f"peak RSS: {peak_mb():.0f} MB")
    subprocess.run(["rm", "-rf", str(tmp)], check=False)
    from tests.bench.report import emit, metric
    emit("ledger", [metric(f"{n_ops:,} ops in {n_batches} batches", t_ops, "s", 2.0,
                           note=f"{n_ops / t_ops:,.0f} ops/s"),
                    metric(f"notes for {n_notes:,} commits", t_notes, "s", 1.0),
                    metric("verify", t_verify, "s")])


if __name__ == "__main__":
    main()
