"""Benchmark: redaction MB/s of this tree against an older revision, in one run; prints.

Run: .venv/bin/python tests/bench/bench_redact_compare.py [REV ...] [--rounds N]

REV defaults to 8adaa9d (main before the catalog rules). Each revision's `looma_git/` is
extracted with `git archive` into a temp dir and timed in its own subprocess on the same text
(the shared real captures under /work/shared/fixtures-real, line by line as ingestion sees
records: raw jsonl, the event strings inside, prose, secret-dense; every secret-dense line is
distinct). Rounds alternate between
the trees and the best CPU time of each is kept, so a loaded machine hurts both the same way.
Only ratios within one run mean anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from looma_git.redact import redact
import bench_redact as B
text = B._corpus([p for p in B.ROOTS if p.exists()])
prose = ("We decided to use PKCE instead of the implicit flow because the SPA cannot "
         "keep a client secret. The session expires when the refresh races. ") * 2000
# every line distinct (a counter in it), so a tree that caches results per string gains
# nothing from the repetition
dense = "".join("export GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s1 password=hunter2 "
                f"commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f step {i}\n" for i in range(2000))
samples = {"raw jsonl": text, "event strings": B._strings(text), "prose": prose * 4,
           "secret-dense": dense}
out = {}
for label, sample in samples.items():
    import functools, looma_git
    for mod in list(sys.modules.values()):  # every verdict cache starts cold per sample
        if getattr(mod, "__name__", "").startswith("looma_git.redact"):
            for v in list(vars(mod).values()):
                if isinstance(v, functools._lru_cache_wrapper):
                    v.cache_clear()
    lines = sample.splitlines()
    mb = len(sample.encode()) / 1e6
    t0 = time.process_time()
    for line in lines:
        redact(line)
    out[label] = mb / (time.process_time() - t0)
print(json.dumps(out))
'''


def _extract(rev: str, dest: Path) -> Path:
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "looma_git"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _once(tree: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    res = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(ROOT / "tests" / "bench")],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> None:
    rounds = 3
    if "--rounds" in argv:
        i = argv.index("--rounds")
        rounds = int(argv[i + 1])
        del argv[i:i + 2]
    revs = argv or ["8adaa9d"]
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        for rev in revs:
            trees[rev] = _extract(rev, Path(tmp) / rev)
        best: dict[str, dict[str, float]] = {k: {} for k in trees}
        for _ in range(rounds):
            for name, tree in trees.items():
                for label, rate in _once(tree).items():
                    best[name][label] = max(rate, best[name].get(label, 0.0))
    labels = list(next(iter(best.values())))
    print(f"redaction MB/s (CPU time, best of {rounds} alternating rounds, line by line)")
    print(f"{'':14}" + "".join(f"{lab:>16}" for lab in labels))
    for name, rates in best.items():
        print(f"{name:14}" + "".join(f"{rates[lab]:16.1f}" for lab in labels))


if __name__ == "__main__":
    main(sys.argv[1:])
