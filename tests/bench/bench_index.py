"""Benchmark: full-text indexing/query, vector KNN and embedder throughput; prints, never asserts.

Run: .venv/bin/python tests/bench/bench_index.py [--messages 150000] [--workitems 500]
         [--vectors 5000] [--no-write]
Appends (or replaces) an "## Index" section in docs/performance.md unless --no-write.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from looma_git.index import embedder as emb  # noqa: E402
from looma_git.index.fulltext import Doc, FullTextIndex  # noqa: E402
from looma_git.index.vectors import VectorStore  # noqa: E402

RESULTS: dict[str, tuple[float, str]] = {}  # name -> (value, unit), for the BENCH-JSON line
REAL_WORDS = ("deploy deployed deploying rollout redis cache eviction ledger notes yaml commit branch "
              "merge rebase migration schema index query token session agent decision bug todo fix "
              "refactor auth login password secret rotate credential database timeout retry worker "
              "queue lock writer reader snapshot benchmark latency memory vector embedding search").split()


def _vocab(n: int, rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    pseudo = {"".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)}
    return REAL_WORDS + sorted(pseudo)


def _zipf_sampler(words: list[str], rng: random.Random):
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    cum: list[float] = []
    total = 0.0
    for w in weights:
        total += w
        cum.append(total)

    def sample(k: int) -> list[str]:
        return rng.choices(words, cum_weights=cum, k=k)
    return sample


def _docs(n_msg: int, n_wi: int, sample, rng: random.Random) -> list[Doc]:
    docs = [Doc(f"wi-{i:04d}", "workitem", " ".join(sample(6)), " ".join(sample(60)), ts=i, workitem=f"wi-{i:04d}")
            for i in range(n_wi)]
    for i in range(n_msg):
        wi = f"wi-{rng.randrange(n_wi):04d}"
        docs.append(Doc(f"msg-{i:06d}", "message", " ".join(sample(rng.randint(0, 8))),
                        " ".join(sample(rng.randint(10, 70))), ts=1_700_000_000 + i, workitem=wi,
                        agent=rng.choice(("claude", "codex", "gemini")), session=f"s-{i // 200}"))
    return docs


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _ms(values: list[float]) -> str:
    return f"p50 {_pct(values, 0.5) * 1000:.2f} ms, p95 {_pct(values, 0.95) * 1000:.2f} ms"


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_fulltext(args, tmp: Path, lines: list[str]) -> None:
    rng = random.Random(42)
    words = _vocab(20_000, rng)
    sample = _zipf_sampler(words, rng)
    t = time.perf_counter()
    docs = _docs(args.messages, args.workitems, sample, rng)
    gen_s = time.perf_counter() - t

    ix = FullTextIndex(tmp / "tantivy")
    t = time.perf_counter()
    ix.add_many(docs, replace=False)
    build_s = time.perf_counter() - t
    RESULTS["fulltext docs/s"] = (len(docs) / build_s, "docs/s")
    size_mb = sum(p.stat().st_size for p in (tmp / "tantivy").iterdir() if p.is_file()) / 1e6
    lines.append(f"- full-text build, {len(docs):,} docs (fresh, `replace=False`, 1 writer thread): "
                 f"{build_s:.1f} s → **{len(docs) / build_s:,.0f} docs/s**; {size_mb:.0f} MB on disk "
                 f"(doc generation {gen_s:.1f} s, not counted)")

    sub = docs[:20_000]
    t = time.perf_counter()
    ix.add_many(sub, replace=True)
    rep_s = time.perf_counter() - t
    lines.append(f"- re-adding {len(sub):,} existing docs with `replace=True` (delete-by-id + add): "
                 f"{len(sub) / rep_s:,.0f} docs/s")

    mid = words[200:2000]  # mid-frequency words
    queries = [" ".join(rng.choices(mid, k=rng.randint(1, 3))) for _ in range(500)]
    frequent = [" ".join(rng.choices(words[:60], k=rng.randint(1, 3))) for _ in range(300)]
    for label, qs, kw in (("mid-frequency 1–3 words", queries, {}),
                          ("frequent 1–3 words", frequent, {}),
                          ("mid-frequency + types=[workitem]", queries, {"types": ["workitem"]}),
                          ("mid-frequency + workitem filter", queries, {"workitem": "wi-0007"})):
        ix.search(qs[0], **kw)  # warm
        times = []
        for q in qs:
            t = time.perf_counter()
            ix.search(q, limit=20, **kw)
            times.append(time.perf_counter() - t)
        lines.append(f"- query top-20 with stored fields + snippets, {label}: {_ms(times)}")
        RESULTS[f"query p50, {label}"] = (_pct(times, 0.5) * 1000, "ms")

    ups = []
    for i in range(args.upserts):
        t = time.perf_counter()
        ix.upsert(Doc(f"msg-{i:06d}", "message", "updated", " ".join(sample(40))))
        ups.append(time.perf_counter() - t)
    lines.append(f"- single-doc upsert (flock + delete + add + commit + reload): median "
                 f"{statistics.median(ups) * 1000:.1f} ms")
    lines.append(f"- peak RSS after the full-text phase (includes the generated docs held in "
                 f"Python lists): {_rss_mib():.0f} MiB")


def bench_vectors(args, tmp: Path, lines: list[str]) -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    n, dim = args.vectors, 384
    mat = rng.normal(size=(n, dim)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    kinds = ["workitem", "memory", "session"]
    with VectorStore(tmp / "store.db", dim, "bench") as vs:
        t = time.perf_counter()
        vs.upsert_many((f"d{i}", kinds[i % 3], mat[i]) for i in range(n))
        ins_s = time.perf_counter() - t
        times, ftimes = [], []
        for i in range(200):
            q = mat[(i * 37) % n]
            t = time.perf_counter()
            vs.knn(q, 10)
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            vs.knn(q, 10, kind="memory")
            ftimes.append(time.perf_counter() - t)
    RESULTS["vector knn k=10 p50"] = (_pct(times, 0.5) * 1000, "ms")
    lines.append(f"- vectors: upsert_many {n:,} × {dim}: {n / ins_s:,.0f} rows/s; "
                 f"knn k=10: {_ms(times)}; with kind filter: {_ms(ftimes)}")


def bench_embedder(lines: list[str], n: int = 256) -> None:
    embedder, reason = emb.load_default_with_reason()
    if embedder is None:
        lines.append(f"- embedder: unavailable ({reason})")
        return
    rng = random.Random(3)
    sentences = [" ".join(rng.choices(REAL_WORDS, k=rng.randint(8, 30))) for _ in range(n)]
    embedder.embed(sentences[:8])  # warm
    rates = []
    for _ in range(3):  # neighbours on a shared host swing this by 2x: report best and median
        t = time.perf_counter()
        embedder.embed(sentences)
        rates.append(len(sentences) / (time.perf_counter() - t))
    q = []
    for text in sentences[:30]:
        t0 = time.perf_counter()
        embedder.embed_one(text)
        q.append(time.perf_counter() - t0)
    RESULTS["embedder best"] = (max(rates), "sentences/s")
    lines.append(f"- embedder ({embedder.model_id}, {min(2, os.cpu_count() or 1)} threads, batch 32, "
                 f"8–30 words, 3 rounds of {len(sentences)}): **best {max(rates):,.0f} sentences/s**, median "
                 f"{statistics.median(rates):,.0f}; single query {_ms(q)}")


def write_section(lines: list[str]) -> Path:
    perf = ROOT / "docs" / "performance.md"
    perf.parent.mkdir(parents=True, exist_ok=True)
    text = perf.read_text() if perf.exists() else "# Performance\n"
    section = "## Index\n\n" + "\n".join(lines) + "\n"
    start = text.find("\n## Index\n")
    if start >= 0:  # replace our own previous section, keep everyone else's
        nxt = text.find("\n## ", start + 1)
        text = text[:start + 1] + section + (text[nxt:] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    perf.write_text(text)
    return perf


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=150_000)
    ap.add_argument("--workitems", type=int, default=500)
    ap.add_argument("--vectors", type=int, default=5_000)
    ap.add_argument("--upserts", type=int, default=20, help="single-doc upserts timed")
    ap.add_argument("--sentences", type=int, default=256, help="embedder round size")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    lines = [f"Measured {time.strftime('%Y-%m-%d')} by `tests/bench/bench_index.py` on "
             f"{os.cpu_count()} CPUs ({platform.machine()}, Python {platform.python_version()}), "
             f"one run on a shared machine (expect ±30% noise).", ""]
    with tempfile.TemporaryDirectory() as tmp:
        bench_fulltext(args, Path(tmp), lines)
        bench_vectors(args, Path(tmp), lines)
    bench_embedder(lines, args.sentences)
    lines.append(f"- peak RSS of the whole run: {_rss_mib():.0f} MiB")
    print("\n".join(lines))
    if not args.no_write:
        print(f"\nwritten to {write_section(lines)}")
    from tests.bench.report import emit, metric
    emit("index", [metric(k, v, u, 80.0 if k == "embedder best" else None,
                          "higher" if u.endswith("/s") else "lower")
                   for k, (v, u) in RESULTS.items()])


if __name__ == "__main__":
    main()
