"""Benchmark: redaction throughput (MB/s) on realistic transcript text; prints, never asserts.

Run: .venv/bin/python tests/bench/bench_redact.py [--engine NAME] [PATH ...]
(`--engine detect-secrets|betterleaks` times a third-party scanner through the adapters in
tests/bench/redact_engines.py, on the same lines; those packages are not looma dependencies.)
Defaults to the real agent transcripts under /work/shared/fixtures-real,
repeated to ~8 MB, plus a prose-only sample and a secret-dense sample.
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from pathlib import Path

from looma_git.redact import _suspect, redact

RATES: dict[str, float] = {}  # label -> MB/s, for the BENCH-JSON line
# The shared real captures are a fixed corpus; fixtures/ grows as adapters add files.
ROOTS = [Path("/work/shared/fixtures-real")]


def _corpus(paths: list[Path]) -> str:
    chunks: list[str] = []
    for root in paths:
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for f in files:
            if f.is_file() and f.suffix in {".jsonl", ".json", ".md", ".txt", ".py"}:
                try:
                    chunks.append(f.read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    continue
    return "\n".join(chunks)


def _strings(text: str) -> str:
    """The string values inside the JSON records: the message text ingestion redacts."""
    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for line in text.splitlines():
        try:
            walk(json.loads(line))
        except ValueError:
            out.append(line)
    return "\n".join(out)


ENGINE: list[object] = []  # a third-party redactor under test, or empty for looma's


def _redact_hits(line: str) -> int:
    if ENGINE:
        fn = ENGINE[0]
        return int(fn(line) != line)  # type: ignore[operator]
    return sum(redact(line).hits.values())


def _rate(label: str, text: str, target: int = 8_000_000) -> None:
    # Repeat short samples up to `target`, but never a corpus already >= 1 MB: repeats would
    # only measure the token-verdict cache. The cache starts cold for every sample.
    _suspect.cache_clear()
    reps = 1 if len(text) >= 1_000_000 else max(1, target // max(1, len(text)))
    sample = text * reps
    mb = len(sample.encode()) / 1e6
    # Redact line by line, the way ingestion sees records.
    lines = sample.splitlines()
    t0 = time.process_time()  # CPU time: the machine is shared, wall time is noisy
    hits = 0
    for line in lines:
        hits += _redact_hits(line)
    dt = time.process_time() - t0
    print(f"{label:>14}: {mb:6.1f} MB in {dt:5.2f}s = {mb / dt:6.1f} MB/s  (hits {hits})")
    RATES[label] = mb / dt


def main() -> None:
    args = sys.argv[1:]
    if "--engine" in args:
        i = args.index("--engine")
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from redact_engines import ENGINES
        ENGINE.append(ENGINES[args[i + 1]])
        del args[i:i + 2]
    paths = [Path(p) for p in args] or [p for p in ROOTS if p.exists()]
    text = _corpus(paths)
    print(f"corpus: {len(text) / 1e6:.2f} MB from {', '.join(map(str, paths))}")
    _rate("raw jsonl", text)
    _rate("event strings", _strings(text))
    prose = ("We decided to use PKCE instead of the implicit flow because the SPA cannot "
             "keep a client secret. The session expires when the refresh races. ") * 2000
    _rate("prose", prose)
    dense = ("export GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s1 password=hunter2 "
             "commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f\n") * 2000
    _rate("secret-dense", dense, target=2_000_000)
    if ENGINE:
        return
    # Peak memory in a separate pass: tracemalloc itself slows allocation-heavy code.
    tracemalloc.start()
    redact(text)
    _, peak = tracemalloc.get_traced_memory()
    print(f"peak traced memory redacting the corpus as one string: {peak / 1e6:.1f} MB")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.bench.report import emit, metric
    emit("redact", [metric(f"redact {k}", v, "MB/s", better="higher", note="CPU time")
                    for k, v in RATES.items()])


if __name__ == "__main__":
    main()
