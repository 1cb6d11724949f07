"""Runs every benchmark as a subprocess, one after another, and prints one table.

Run: .venv/bin/python -m tests.bench.run_all [--quick] [--write-docs] [--only NAME ...] [-v]

Each benchmark prints human-readable lines and, last, `BENCH-JSON {...}` (tests/bench/report.py).
The table has: benchmark, measured value, target, ratio to target, pass/miss, peak RSS (of the
benchmark's process tree, from wait4). `--quick` runs reduced sizes (a smoke test: its numbers
are not the targets' sizes). `--write-docs` rewrites the "## Summary" section at the top of
docs/performance.md (machine description + table) and leaves every other section as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = ROOT / "tests" / "bench"
PREFIX = "BENCH-JSON "

# name -> (script, full-size args, quick args). Full sizes are the issues' sizes.
BENCHES: dict[str, tuple[str, list[str], list[str]]] = {
    "ledger": ("bench_ledger.py", [], ["--quick"]),
    "ingest": ("bench_ingest.py", [], ["--claude", "20", "--codex", "10"]),
    "index": ("bench_index.py", ["--no-write"],
              ["--no-write", "--messages", "500", "--workitems", "50", "--vectors", "200",
               "--upserts", "5", "--sentences", "8"]),
    "hooks": ("bench_hooks.py", ["--no-write"],
              ["--no-write", "--commits", "3", "--sessions", "0"]),
    "redact": ("bench_redact.py", [], ["QUICK"]),
    "sync": ("bench_sync.py", [], ["1", "2"]),  # runs, batches of 100 ops per clone
    "backfill": ("bench_backfill.py", ["--no-write"],
                 ["--no-write", "--commits", "200", "--efforts", "10", "--runs", "1"]),
    "retrieval": ("bench_retrieval.py", [], ["--quick"]),
    "mcp": ("bench_mcp.py", [], ["--runs", "2"]),
    # A heavy user's history at three sizes (issue 14); 5,000 sessions alone take tens of minutes.
    "scale": ("bench_scale.py", ["--sizes", "250,1500,5000"], ["--sizes", "12", "--burst", "3"]),
}


@dataclass
class Result:
    """One benchmark run: its metrics, or why there are none."""

    name: str
    seconds: float
    rc: int
    rss_mb: float
    metrics: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    output: str = ""  # stdout
    stderr: str = ""
    reduced: bool = False  # ran at --quick sizes: not judged against the targets


def _quick_redact_corpus() -> Path:
    """A small real corpus for the quick redaction run: the repository's own fixtures."""
    return ROOT / "fixtures" / "claude-code"


def run_one(name: str, quick: bool, verbose: bool, timeout: float | None) -> Result:
    """Run one benchmark script; peak RSS comes from wait4 (its whole waited-for tree)."""
    script, full, small = BENCHES[name]
    args = small if quick else full
    if args == ["QUICK"]:
        args = [str(_quick_redact_corpus())]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, str(BENCH_DIR / script), *args], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        lines: list[str] = []
        assert proc.stdout is not None
        deadline = None if timeout is None else t0 + timeout
        for line in proc.stdout:  # streamed so -v shows progress of long runs
            lines.append(line)
            if verbose:
                print(f"  [{name}] {line}", end="", flush=True)
            if deadline is not None and time.perf_counter() > deadline:
                proc.kill()
                break
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    res = Result(name, time.perf_counter() - t0, proc.returncode, usage.ru_maxrss / 1024,
                 output="".join(lines), stderr=stderr)
    tagged = [ln for ln in lines if ln.startswith(PREFIX)]
    if proc.returncode != 0:
        tail = (stderr.strip().splitlines() or ["(no stderr)"])[-1]
        res.error = f"exit {proc.returncode}: {tail}"
    elif not tagged:
        res.error = "no BENCH-JSON line"
    else:
        try:
            res.metrics = list(json.loads(tagged[-1][len(PREFIX):])["metrics"])
        except (ValueError, KeyError, TypeError) as exc:
            res.error = f"unreadable BENCH-JSON line: {exc}"
    return res


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip()


def rows(results: list[Result]) -> list[list[str]]:
    """Table rows: benchmark, measure, value, target, ratio to target, verdict, peak RSS.
    Runs at reduced (--quick) sizes are not judged against the targets."""
    out = []
    for r in results:
        rss = f"{r.rss_mb:.0f} MiB"
        if r.error:
            out.append([r.name, "-", "-", "-", "-", f"ERROR ({r.error})", rss])
            continue
        for m in r.metrics:
            value, target, better = m["value"], m.get("target"), m.get("better", "lower")
            if target:
                ratio = value / target
                ok = value <= target if better == "lower" else value >= target
                verdict = "(quick)" if r.reduced else "pass" if ok else "MISS"
                ratio_s = f"{ratio:.2f}"
                target_s = ("≤ " if better == "lower" else "≥ ") + _fmt(target, m["unit"])
            else:
                verdict, ratio_s, target_s = "info", "-", "-"
            measure = m["name"] + (f" ({m['note']})" if m.get("note") else "")
            out.append([r.name, measure, _fmt(value, m["unit"]), target_s, ratio_s, verdict,
                        rss])
    return out


HEADER = ["benchmark", "measure", "value", "target", "ratio", "result", "peak RSS"]


def text_table(table: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [HEADER, *table]) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(HEADER, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
    return "\n".join(lines)


def machine() -> str:
    """nproc, CPU model, RAM, Python and git versions, date."""
    cpu, ram = platform.processor() or platform.machine(), "?"
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
        for ln in Path("/proc/meminfo").read_text().splitlines():
            if ln.startswith("MemTotal:"):
                ram = f"{int(ln.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    gitv = subprocess.run(["git", "--version"], capture_output=True, text=True,
                          check=False).stdout.strip()
    try:
        load = f", load average at start {os.getloadavg()[0]:.1f}"
    except OSError:
        load = ""
    return (f"{time.strftime('%Y-%m-%d')}, nproc={os.cpu_count()}, {cpu}, RAM {ram}, "
            f"Python {platform.python_version()}, {gitv}{load}")


def summary_section(table: list[list[str]], desc: str, quick: bool, total_s: float) -> str:
    lines = ["## Summary", "",
             f"Measured by `python -m tests.bench.run_all{' --quick' if quick else ''}` "
             f"({total_s:.0f} s, every benchmark as a subprocess, one after another): {desc}. "
             "One run on a shared machine: expect ±30% noise. Ratio = value / target; "
             "the sections below hold each benchmark's details.", ""]
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "---|" * len(HEADER))
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in table]
    return "\n".join(lines) + "\n"


def write_docs(section: str, doc: Path | None = None) -> Path:
    """Replace (or insert) the Summary section right under the title; keep the rest."""
    doc = doc or ROOT / "docs" / "performance.md"
    text = doc.read_text() if doc.exists() else "# Performance\n"
    marker = "\n## Summary\n"
    if marker in text:
        start = text.index(marker) + 1
        nxt = text.find("\n## ", start)
        rest = text[nxt + 1:] if nxt >= 0 else ""
        text = text[:start] + section + ("\n" + rest if rest else "")
    else:
        head, sep, body = text.partition("\n## ")
        title = head.rstrip("\n") + "\n\n"
        text = title + section + (("\n## " + body) if sep else "")
    doc.write_text(text)
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="reduced sizes: a smoke run")
    ap.add_argument("--write-docs", action="store_true",
                    help="rewrite the Summary section of docs/performance.md")
    ap.add_argument("--docs", type=Path, default=ROOT / "docs" / "performance.md",
                    help="the file --write-docs rewrites (default: docs/performance.md)")
    ap.add_argument("--only", nargs="+", choices=sorted(BENCHES), help="run only these")
    ap.add_argument("-v", "--verbose", action="store_true", help="stream each benchmark's lines")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per benchmark")
    args = ap.parse_args(argv)
    names = [n for n in BENCHES if not args.only or n in args.only]
    desc = machine()
    print(f"machine: {desc}", flush=True)
    t0 = time.perf_counter()
    results = []
    for name in names:
        if not (BENCH_DIR / BENCHES[name][0]).exists():
            print(f"{name}: {BENCHES[name][0]} not present, skipped", flush=True)
            continue
        r = run_one(name, args.quick, args.verbose, args.timeout)
        r.reduced = args.quick and BENCHES[name][1] != BENCHES[name][2]
        print(f"{name}: {r.seconds:.1f} s" + (f"  {r.error}" if r.error else ""), flush=True)
        if r.error and not args.verbose:
            tail = (r.output + r.stderr).splitlines()[-15:]
            print("\n".join("  | " + ln for ln in tail), flush=True)
        results.append(r)
    total = time.perf_counter() - t0
    table = rows(results)
    print()
    print(text_table(table))
    if args.write_docs:
        section = summary_section(table, desc, args.quick, total)
        print(f"\nwritten to {write_docs(section, args.docs)}")
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
