"""Scale benchmark: a heavy user's history at several sizes, measured as a user meets it.

Run: .venv/bin/python tests/bench/bench_scale.py [--sizes 250,1500,5000] [--keep]
     [--only cold,resume,new] [--work DIR] [--code DIR] [--resumes 10] [--burst 20]

`--only` runs a subset of the row groups (read, cold, resume, new, drain, reprocess; the ones
after `cold` need it). `--work DIR` keeps each generated history pristine under DIR and restores
it on the next run instead of generating it again (transcripts name their repository's path,
so the copy is restored at the same place). `--code DIR` measures another checkout of looma
(its tree first on PYTHONPATH) against the same history: an A/B in one run.

For each size (sessions; 2/3 Claude Code, 1/3 Codex, ~100 stored events each, one commit per
effort in a real git repository; see tests/bench/scale_history.py) every measure is the real
command in a fresh process (`python -m looma_git ...`, imports included), never `--no-refine`
except for the read-path diagnostic:

- read path: `looma ingest --no-refine --agent claude-code` on a cold store vs a plain FTS5
  indexer (json.loads + SQLite FTS5, what cc-search does) over the same Claude Code files: CPU
  seconds of each, in the same run (the store is then deleted);
- cold ingest: `looma ingest` (reading + the work model + the index), events/s on wall time;
  and each named phase's CPU seconds and peak RSS (a thin wrapper logs them as the CLI
  announces each phase: /proc/self/status VmHWM, reset per phase through clear_refs);
- `looma --help` and `looma resume GOAL` p50 (fresh processes, `--resumes` distinct goals);
- one new session: one more Claude Code session, then `looma ingest`;
- one commit's drain: `looma hooks install`, `git commit`, and the detached drainer the
  post-commit shim starts, reaped by this process (PR_SET_CHILD_SUBREAPER) for its CPU time;
- 20 quick commits (fixups of one file) right after it: how many drainers did work (one at a
  time; a burst is coalesced into waves), their passes and CPU;
- reprocess: `looma reprocess`, and whether the incremental runs before it ended where this
  full rebuild does (the ops it writes, and the WorkItems and notes it changes: both 0).

CPU = user + system of the process tree (wait4), wall = elapsed. Peak RSS = the largest
process of the tree. Prints a growth table (one column per size, and whether each row grows
with history size or only with new work) and, last, the BENCH-JSON line for run_all.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.report import emit, metric  # noqa: E402
from tests.bench.scale_history import (  # noqa: E402
    History,
    add_session,
    build_history,
    git_env,
    next_commit,
)

# Targets of issue 14, checked at 1,500 sessions.
TARGET_AT = 1500
TARGETS: dict[str, tuple[float, str, str]] = {  # row -> (target, unit, better)
    "cold ingest": (10_000.0, "events/s", "higher"),
    "cold ingest peak RSS": (400.0, "MB", "lower"),
    "read path CPU / FTS indexer CPU": (2.0, "x", "lower"),
    "one commit's drain CPU": (1.0, "s", "lower"),
    "reprocess wall": (15.0, "s", "lower"),
    "reprocess peak RSS": (400.0, "MB", "lower"),
    "resume p50 (fresh process)": (300.0, "ms", "lower"),
    "looma --help p50": (100.0, "ms", "lower"),
}
# Rows that should cost the same whatever the history size (new work only).
PER_WORK = ("one new session CPU", "second new session CPU", "one commit's drain CPU", "resume p50 (fresh process)",
            "resume CPU p50", "looma --help p50", "looma --help CPU p50")

FTS_BASELINE = r"""
import json, sqlite3, sys
from pathlib import Path
conn = sqlite3.connect(sys.argv[2])
conn.execute("CREATE VIRTUAL TABLE m USING fts5(session, role, ts, text)")
n = 0
for p in sorted(Path(sys.argv[1]).rglob("*.jsonl")):
    rows = []
    with open(p, "rb") as fh:
        for line in fh:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            msg = o.get("message")
            if not isinstance(msg, dict):
                continue
            c = msg.get("content")
            if isinstance(c, str):
                text = c
            elif isinstance(c, list):
                parts = []
                for b in c:
                    if not isinstance(b, dict):
                        continue
                    t = b.get("type")
                    if t == "text":
                        parts.append(b.get("text") or "")
                    elif t == "tool_result" and isinstance(b.get("content"), str):
                        parts.append(b["content"])
                    elif t == "tool_use":
                        parts.append(json.dumps(b.get("input")))
                text = "\n".join(parts)
            else:
                continue
            if text:
                rows.append((o.get("sessionId"), msg.get("role"), o.get("timestamp"), text))
    conn.executemany("INSERT INTO m VALUES(?,?,?,?)", rows)
    n += len(rows)
conn.commit()
print(n)
"""


@dataclass
class Run:
    """One measured process (tree)."""

    wall: float
    cpu: float
    rss_mb: float
    rc: int
    out: str = ""
    err: str = ""


def run(cmd: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> Run:
    """Run `cmd` to completion; CPU and peak RSS of it and every child it waited for."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        r = Run(wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, proc.returncode,
                out.read().decode(errors="replace"), err.read().decode(errors="replace"))
    if check and r.rc != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.rc}: {r.err[-2000:]}")
    return r


def looma(*args: str) -> list[str]:
    return [sys.executable, "-m", "looma_git", *args]


# The CLI with a log of each phase it announces: CPU seconds and peak RSS of the main process
# in that phase (VmHWM, reset after each phase; the largest of them is the process's peak).
PHASED = r"""
import os, sys, time
import looma_git.cli.progress as progress

def _hwm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return float("nan")

_now = {"name": "start", "cpu": time.process_time()}

def _end(following):
    cpu = time.process_time()
    print("PHASE\t%s\t%.3f\t%.1f" % (_now["name"], cpu - _now["cpu"], _hwm()), file=sys.stderr,
          flush=True)
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    _now.update(name=following, cpu=time.process_time())

_phase = progress.Phases.phase
def phase(self, name):
    _end(name)
    return _phase(self, name)
progress.Phases.phase = phase
import atexit
atexit.register(lambda: _end("end"))
from looma_git.cli.main import main
sys.argv[0] = "looma"
main()
"""


def phases(err: str) -> list[tuple[str, float, float]]:
    """(phase, CPU s, peak RSS MB) from PHASED's log."""
    out = []
    for line in err.splitlines():
        if line.startswith("PHASE\t"):
            _, name, cpu, rss = line.split("\t")
            out.append((name, float(cpu), float(rss)))
    return out


def become_subreaper() -> bool:
    """Orphaned descendants (the shim's detached drainer) are re-parented to this process,
    so it can wait for them and read their CPU time."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap_detached(timeout: float) -> tuple[float, float, float, int]:
    """Wait for every re-parented descendant; (cpu, wall, peak RSS MB, processes)."""
    t0 = time.perf_counter()
    cpu, rss, n = 0.0, 0.0, 0
    while time.perf_counter() - t0 < timeout:
        try:
            pid, _, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)
            continue
        cpu += ru.ru_utime + ru.ru_stime
        rss = max(rss, ru.ru_maxrss / 1024)
        n += 1
    return cpu, time.perf_counter() - t0, rss, n


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class SizeResult:
    """Every row measured at one size."""

    sessions: int
    rows: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def put(self, name: str, value: float, unit: str) -> None:
        self.rows[name] = value
        self.units[name] = unit


def _pending(repo: Path, env: dict[str, str]) -> float:
    """Texts the index left without a vector (`looma status`: topped up by later runs)."""
    st = json.loads(run(looma("status", "--json"), repo, env).out)
    return float((st.get("index") or {}).get("vectors_pending", float("nan")))


GROUPS = ("read", "cold", "resume", "new", "drain", "reprocess")
PHASE_ROWS = {"reading transcripts": "reading", "building the work model": "work model",
              "indexing": "indexing"}


def _history(n: int, base: Path, work: Path | None, varied: bool = False
             ) -> tuple[History, float, bool]:
    """The history of `n` sessions: generated, or restored from `work`'s pristine copy."""
    import pickle

    root = (work or base) / f"h{n}{'v' if varied else ''}"
    pristine = root.with_name(f"{root.name}.pristine")
    handle = root.with_name(f"{root.name}.history.pickle")
    t0 = time.perf_counter()
    if work is not None and pristine.is_dir() and handle.is_file():
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run(["cp", "-a", str(pristine), str(root)], check=True)
        h: History = pickle.loads(handle.read_bytes())
        return h, time.perf_counter() - t0, True
    shutil.rmtree(root, ignore_errors=True)
    h = build_history(root, n, varied=varied)
    gen_s = time.perf_counter() - t0
    if work is not None:
        shutil.rmtree(pristine, ignore_errors=True)
        subprocess.run(["cp", "-a", str(root), str(pristine)], check=True)
        handle.write_bytes(pickle.dumps(h))
    return h, gen_s, False


@contextlib.contextmanager
def _work_lock(work: Path | None, n: int) -> Iterator[None]:
    """Hold `work/h{n}.lock` while a run uses `work/h{n}`: a pristine history restores to one
    fixed path (its sessions record that project path), so two runs sharing `--work` must wait
    for each other rather than overwrite each other's copy."""
    if work is None:
        yield
        return
    import fcntl

    work.mkdir(parents=True, exist_ok=True)
    with open(work / f"h{n}.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"[{n}] waiting for another run using {work / f'h{n}'}", flush=True)
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _settle_disk() -> None:
    """Write back what earlier rows left dirty in the page cache (a restored history, a cold
    ingest) before a measured command, as the kernel does within ~30 s of a user's next one:
    else the first fsync of the measured command (store.db's WAL checkpoint) pays for pages it
    did not write, more of them the larger the history."""
    os.sync()


def _model(repo: Path, env: dict[str, str]) -> dict[str, str]:
    """What the work model shows a user: each WorkItem's listing (candidates too) and each
    commit's looma note, keyed for a comparison."""
    out = json.loads(run(looma("work", "--json", "--candidates"), repo, env).out)
    model = {f"wi {w['id']}": json.dumps(w, sort_keys=True) for w in out["workitems"]}
    notes = subprocess.run(["git", "notes", "--ref=looma", "list"], cwd=repo, env=env,
                           capture_output=True, text=True).stdout.split()
    for note, commit in zip(notes[::2], notes[1::2], strict=True):
        model[f"note {commit}"] = note  # a note's blob id names its content
    return model


def _differences(a: dict[str, str], b: dict[str, str]) -> int:
    """Entries present in one model only or with another value."""
    return sum(a.get(k) != b.get(k) for k in a.keys() | b.keys())


def measure(n: int, base: Path, reaps: bool, only: frozenset[str] = frozenset(GROUPS),
            work: Path | None = None, code: Path | None = None, resumes: int = 10,
            burst: int = 20, varied: bool = False) -> SizeResult:
    res = SizeResult(n)
    h, gen_s, restored = _history(n, base, work, varied)
    print(f"[{n}] {'restored' if restored else 'generated'} "
          f"{h.claude} Claude Code + {h.codex} Codex sessions, {h.records:,} "
          f"records, {h.bytes / 1e6:.0f} MB, {h.commits} commits in {gen_s:.1f} s", flush=True)
    if not restored:
        res.put("generate history", gen_s, "s")
    env = git_env(h.home)
    if code is not None:  # another checkout of looma: its tree first on the import path
        env["PYTHONPATH"] = str(code)
    repo = h.repo
    run(looma("init"), repo, env)
    state = repo / ".git" / "looma"

    if "read" in only:
        # Read path alone (diagnostic): Claude Code files into store.db, vs a plain FTS indexer.
        rp = run(looma("ingest", "--json", "--no-refine", "--agent", "claude-code"), repo, env)
        fts_db = base / f"fts{n}.db"
        fts = run([sys.executable, "-c", FTS_BASELINE, str(h.home / ".claude"), str(fts_db)],
                  repo, env)
        fts_db.unlink(missing_ok=True)
        rp_events = json.loads(rp.out)["events_added"]
        print(f"[{n}] read path: {h.claude} Claude Code files -> {rp_events:,} events, "
              f"{rp.cpu:.1f} CPU-s ({rp.wall:.1f} s wall, {rp.rss_mb:.0f} MB); plain FTS5 indexer "
              f"{fts.cpu:.1f} CPU-s ({fts.rss_mb:.0f} MB) -> {rp.cpu / fts.cpu:.2f}x", flush=True)
        res.put("read path CPU (Claude Code files)", rp.cpu, "s")
        res.put("plain FTS indexer CPU", fts.cpu, "s")
        res.put("read path CPU / FTS indexer CPU", rp.cpu / fts.cpu, "x")
        for p in state.glob("store.db*"):
            p.unlink()

    if not only & set(GROUPS[1:]):
        return res
    cold = run([sys.executable, "-c", PHASED, "ingest", "--json"], repo, env)
    rep = json.loads(cold.out)
    events = rep["events_added"]
    refine = rep.get("refine") or {}
    logged = phases(cold.err)
    # Resetting VmHWM per phase also resets what wait4 reports for the main process: its
    # peak is the largest phase's (children, the reading workers, are in ru_maxrss).
    peak = max([cold.rss_mb, *(rss for _, _, rss in logged)])
    print(f"[{n}] cold `looma ingest`: {events:,} events in {cold.wall:.1f} s wall, "
          f"{cold.cpu:.1f} CPU-s -> {events / cold.wall:,.0f} events/s; peak RSS "
          f"{peak:.0f} MB; work model: {refine.get('workitems')} WorkItems, "
          f"{refine.get('links')} links, {refine.get('ops_written')} ops", flush=True)
    for name, cpu, rss in logged:
        if name in PHASE_ROWS:
            print(f"[{n}]   phase {name}: {cpu:.1f} CPU-s (main process), peak {rss:.0f} MB",
                  flush=True)
            res.put(f"cold ingest: {PHASE_ROWS[name]} CPU", cpu, "s")
            res.put(f"cold ingest: {PHASE_ROWS[name]} peak RSS", rss, "MB")
    res.put("events stored", events, "events")
    res.put("cold ingest", events / cold.wall, "events/s")
    res.put("cold ingest wall", cold.wall, "s")
    res.put("cold ingest CPU", cold.cpu, "s")
    res.put("cold ingest peak RSS", peak, "MB")
    if reaps:
        # What `looma ingest` left detached (index/vector_background: the vectors) is waited
        # for and counted here, so the rows below measure a settled store and no CPU hides.
        bg_cpu, bg_wall, bg_rss, procs = reap_detached(600)
        if procs:
            print(f"[{n}]   detached after it: {procs} process(es), {bg_cpu:.1f} CPU-s, done "
                  f"{bg_wall:.1f} s after it returned, peak {bg_rss:.0f} MB", flush=True)
        res.put("cold ingest: detached after it CPU", bg_cpu, "s")
        res.put("cold ingest CPU incl. detached", cold.cpu + bg_cpu, "s")
    res.put("vectors pending after cold ingest", _pending(repo, env), "texts")

    goals = [f"{e.topic} {e.area}" for e in h.efforts[:: max(1, len(h.efforts) // resumes)]]
    goals = goals[:resumes]
    if "resume" in only:
        helps = [run(looma("--help"), repo, env) for _ in range(5)]
        res.put("looma --help p50", p50([r.wall * 1000 for r in helps]), "ms")
        res.put("looma --help CPU p50", p50([r.cpu * 1000 for r in helps]), "ms")
        rs = [run(looma("resume", g), repo, env) for g in goals]
        res.put("resume p50 (fresh process)", p50([r.wall * 1000 for r in rs]), "ms")
        res.put("resume CPU p50", p50([r.cpu * 1000 for r in rs]), "ms")
        res.put("resume peak RSS", max(r.rss_mb for r in rs), "MB")
        states = [r.out.split(":", 1)[0] for r in rs]
        print(f"[{n}] looma --help p50 {res.rows['looma --help p50']:.0f} ms; resume p50 "
              f"{res.rows['resume p50 (fresh process)']:.0f} ms, CPU p50 "
              f"{res.rows['resume CPU p50']:.0f} ms over {len(rs)} goals (first "
              f"{rs[0].wall * 1000:.0f} ms, {res.rows['resume peak RSS']:.0f} MB; "
              f"{', '.join(f'{k} {states.count(k)}' for k in sorted(set(states)))})", flush=True)

    if "new" in only or "drain" in only or "reprocess" in only:
        add_session(h, effort=len(h.efforts) - 1)
        _settle_disk()
        one = run(looma("ingest", "--json"), repo, env)
        added = json.loads(one.out)["events_added"]
        print(f"[{n}] one new session ({added} events): `looma ingest` {one.cpu:.2f} CPU-s, "
              f"{one.wall:.2f} s wall, {one.rss_mb:.0f} MB", flush=True)
        res.put("one new session CPU", one.cpu, "s")
        res.put("one new session wall", one.wall, "s")
        res.put("one new session peak RSS", one.rss_mb, "MB")
        res.put("vectors pending after it", _pending(repo, env), "texts")
        # The first pass after the cold one is the first with its WorkItems as seeds (it
        # renames every window's cluster); a second new session is what each later one costs.
        add_session(h, effort=len(h.efforts) - 2, seed=88_888_888)
        _settle_disk()
        two = run([sys.executable, "-c", PHASED, "ingest", "--json"], repo, env)
        index_cpu = sum(cpu for name, cpu, _ in phases(two.err) if name == "indexing")
        print(f"[{n}] a second new session: `looma ingest` {two.cpu:.2f} CPU-s "
              f"(indexing {index_cpu:.2f}), {two.wall:.2f} s wall, {two.rss_mb:.0f} MB",
              flush=True)
        res.put("second new session CPU", two.cpu, "s")
        res.put("second new session: indexing CPU", index_cpu, "s")

    if "drain" in only and reaps:
        reap_detached(0)  # processes detached by earlier rows are not the drain's
        run(looma("hooks", "install"), repo, env)
        e = h.efforts[-1]
        # The work of the session added last (`add_session`), committed after it: a commit
        # that links on content, as a user's commit of an agent's work does.
        target, text, dated = next_commit(h, len(h.efforts) - 1)
        target.write_text(target.read_text() + text)
        _settle_disk()
        subprocess.run(["git", "commit", "-q", "-am", f"{e.verb.lower()} {e.topic}: edge case"],
                       cwd=repo, env={**env, **dated}, check=True, capture_output=True)
        cpu, wall, rss, procs = reap_detached(600)
        queue = state / "queue"
        left = queue.read_text().strip() if queue.exists() else ""
        print(f"[{n}] one commit's drain: {cpu:.2f} CPU-s, {wall:.2f} s until done, {rss:.0f} MB, "
              f"{procs} process(es) reaped; queue left: {left or 'empty'}", flush=True)
        res.put("one commit's drain CPU", cpu, "s")
        res.put("one commit's drain wall", wall, "s")
        res.put("one commit's drain peak RSS", rss, "MB")
        after = run(looma("resume", goals[0]), repo, env)
        res.put("resume right after a commit", after.wall * 1000, "ms")
        # `burst` quick commits (a user's fixups): one drainer at a time, a pass per wave.
        log = state / "hooks.log"
        seen = log.read_text() if log.exists() else ""
        reap_detached(0)
        for i in range(burst):
            with open(repo / "CHANGES.txt", "a") as fh:
                fh.write(f"fixup {i}\n")
            subprocess.run(["git", "add", "CHANGES.txt"], cwd=repo, env=env, check=True)
            subprocess.run(["git", "commit", "-q", "-m", f"changes: fixup {i}"], cwd=repo,
                           env=env, check=True, capture_output=True)
        cpu, wall, _, _ = reap_detached(600)
        lines = re.findall(r"drainer (\d+): (.*)", log.read_text()[len(seen):])
        held = [(pid, t) for pid, t in lines if " held " in t]
        passes = sum(int(m.group(1)) for _, t in held if (m := re.match(r"(\d+) pass", t)))
        print(f"[{n}] {burst} quick commits: {len({pid for pid, _ in held})} drainer(s) did work, "
              f"{passes} pass(es), {cpu:.2f} CPU-s, {wall:.2f} s until done", flush=True)
        res.put("20 quick commits: drainers that did work", len({pid for pid, _ in held}), "drainers")
        res.put("20 quick commits: drain passes", passes, "passes")
        res.put("20 quick commits: drain CPU", cpu, "s")
    elif "drain" in only:
        res.notes.append("drain not measured: no PR_SET_CHILD_SUBREAPER on this platform")

    if "reprocess" in only:
        # The incremental runs above (cold, new sessions, the drain) must end where the full
        # rebuild does: reprocess then publishes nothing and lists the same WorkItems and notes.
        before = _model(repo, env)
        rp2 = run(looma("reprocess", "--json"), repo, env)
        written = json.loads(rp2.out)["ops_written"]
        differ = _differences(before, _model(repo, env))
        print(f"[{n}] `looma reprocess`: {rp2.wall:.1f} s wall, {rp2.cpu:.1f} CPU-s, "
              f"{rp2.rss_mb:.0f} MB; after the incremental runs it wrote {written} op(s), "
              f"{differ} of {len(before)} WorkItem(s)/note(s) differ", flush=True)
        res.put("reprocess: ops written after incremental runs", written, "ops")
        res.put("reprocess: WorkItems/notes changed by it", differ, "items")
        res.put("reprocess wall", rp2.wall, "s")
        res.put("reprocess CPU", rp2.cpu, "s")
        res.put("reprocess peak RSS", rp2.rss_mb, "MB")
    return res


ORDER = ("generate history", "events stored", "read path CPU (Claude Code files)",
         "plain FTS indexer CPU", "read path CPU / FTS indexer CPU", "cold ingest",
         "cold ingest wall", "cold ingest CPU", "cold ingest peak RSS",
         "cold ingest: reading CPU", "cold ingest: reading peak RSS",
         "cold ingest: work model CPU", "cold ingest: work model peak RSS",
         "cold ingest: indexing CPU", "cold ingest: indexing peak RSS",
         "cold ingest: detached after it CPU", "cold ingest CPU incl. detached",
         "vectors pending after cold ingest", "one new session CPU", "one new session wall",
         "one new session peak RSS", "vectors pending after it", "second new session CPU",
         "second new session: indexing CPU",
         "one commit's drain CPU",
         "20 quick commits: drainers that did work", "20 quick commits: drain passes",
         "20 quick commits: drain CPU",
         "one commit's drain wall", "one commit's drain peak RSS", "reprocess wall",
         "reprocess CPU", "reprocess peak RSS",
         "reprocess: ops written after incremental runs", "reprocess: WorkItems/notes changed by it", "resume p50 (fresh process)",
         "resume CPU p50", "resume right after a commit", "resume peak RSS", "looma --help p50",
         "looma --help CPU p50")


def _fmt(v: float) -> str:
    if v != v:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"


def growth(results: list[SizeResult], name: str) -> str:
    """How a row scales from the smallest to the largest size, next to the history's growth."""
    vals = [r.rows.get(name) for r in results]
    if len(results) < 2 or vals[0] in (None, 0) or vals[-1] is None:
        return "-"
    ratio = vals[-1] / vals[0]
    hist = results[-1].sessions / results[0].sessions
    if name == "cold ingest":  # a rate: flat means linear total cost
        return f"x{ratio:.2f} (rate)"
    kind = "flat" if ratio < 1.5 else "with history" if ratio >= hist / 2 else "sublinear"
    return f"x{ratio:.2f} ({kind})"


def table(results: list[SizeResult]) -> str:
    head = ["measure", *[f"{r.sessions:,} sessions" for r in results], "growth"]
    names = [n for n in ORDER if any(n in r.rows for r in results)]
    body = []
    for name in names:
        unit = next(r.units[name] for r in results if name in r.units)
        body.append([f"{name} ({unit})",
                     *[_fmt(r.rows[name]) if name in r.rows else "-" for r in results],
                     growth(results, name)])
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(head, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
              for row in body]
    return "\n".join(lines)


def metrics(results: list[SizeResult]) -> list[dict[str, Any]]:
    out = []
    by_size = {r.sessions: r for r in results}
    for r in results:
        for name, (target, unit, better) in TARGETS.items():
            if name not in r.rows:
                continue
            judged = target if r.sessions == TARGET_AT else None
            out.append(metric(f"{name} @{r.sessions:,}", r.rows[name], unit, judged, better))
        for name in PER_WORK:
            if name in r.rows and name not in TARGETS:
                out.append(metric(f"{name} @{r.sessions:,}", r.rows[name], r.units[name]))
    big, mid = by_size.get(5000), by_size.get(TARGET_AT)
    if big and mid:
        for name in ("one new session CPU", "second new session CPU", "one commit's drain CPU"):
            if name in big.rows and name in mid.rows and mid.rows[name] > 0:
                out.append(metric(f"{name}: 5,000 / 1,500", big.rows[name] / mid.rows[name],
                                  "x", 1.5))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="250,1500,5000",
                    help="comma-separated session counts (default 250,1500,5000)")
    ap.add_argument("--keep", action="store_true", help="keep the generated histories")
    ap.add_argument("--only", default=",".join(GROUPS),
                    help=f"row groups to run (default all: {','.join(GROUPS)})")
    ap.add_argument("--work", type=Path, default=None,
                    help="keep pristine histories here and restore them instead of generating")
    ap.add_argument("--code", type=Path, default=None,
                    help="measure this checkout of looma (first on PYTHONPATH) instead")
    ap.add_argument("--burst", type=int, default=20,
                    help="quick commits in the burst after the drain row (rows say 20)")
    ap.add_argument("--varied", action="store_true",
                    help="every prompt, reply and thought says something of its own, as in real "
                         "transcripts (the templates alone repeat: a per-text memo hides costs)")
    ap.add_argument("--resumes", type=int, default=10,
                    help="fresh `looma resume` processes (distinct goals) per size")
    args = ap.parse_args()
    only = frozenset(g.strip() for g in args.only.split(",") if g.strip())
    if only - set(GROUPS):
        ap.error(f"--only: unknown group(s) {', '.join(sorted(only - set(GROUPS)))}")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    reaps = become_subreaper()
    base = Path(tempfile.mkdtemp(prefix="looma-bench-scale-"))
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"machine: nproc={os.cpu_count()}, load average at start {load:.1f}; temp {base}"
          + (f"; code {args.code}" if args.code else ""), flush=True)
    results = []
    try:
        for n in sizes:
            with _work_lock(args.work, n):
                results.append(measure(n, base, reaps, only, args.work, args.code, args.resumes,
                                       args.burst, args.varied))
                if not args.keep:
                    shutil.rmtree((args.work or base) / f"h{n}{'v' if args.varied else ''}",
                                  ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    try:
        load_end = f"{os.getloadavg()[0]:.1f}"
    except OSError:
        load_end = "?"
    print(f"\nload average at end {load_end}; wall-time rows swing with the machine's load, "
          "judge growth on the CPU rows\n")
    print(table(results), flush=True)
    emit("scale", metrics(results), sizes=sizes)


if __name__ == "__main__":
    main()
