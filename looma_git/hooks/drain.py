"""The drainer's mechanics: one-drainer lock, taking the queues, running steps, putting back.

What the steps do (ingest, ledger ops, linking) is supplied by the caller (api/hooks.py), so
this module stays in the core and imports no api module.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from looma_git.errors import LoomaError
from looma_git.hooks import queue, state
from looma_git.store import git

LOCK = "drain.lock"
WANTED = "drain.wanted"  # an empty file the shims write: work is waiting
SPAWN = "drain.spawn"  # a directory the launching shim creates (with the pid it started)
MAX_PASSES = 20
# After the queues look empty the drainer keeps the lock this long before it leaves: commits a
# script or a rebase makes back to back then join this drainer instead of launching the next.
SETTLE_S = float(os.environ.get("LOOMA_DRAIN_SETTLE_S", "0.5"))


class StepUnavailable(Exception):
    """A step's library is not there (yet): its work stays queued for a later drain."""


@dataclass(frozen=True)
class Batch:
    """What one pass hands to the steps."""

    link_shas: tuple[str, ...]  # queued commits, followed through this batch's rewrites
    rewrites: tuple[queue.QueuedRewrite, ...]


@dataclass(frozen=True)
class Step:
    """A named unit of drain work; `consumes` names the queue whose items it completes."""

    name: str
    run: Callable[[Batch], str]  # returns a one-line detail for the log
    consumes: str = ""  # "commits" | "rewrites" | "" (nothing is put back on failure)


@dataclass(frozen=True)
class StepOutcome:
    name: str
    status: str  # ok | failed | unavailable | skipped
    ms: float
    detail: str = ""


@dataclass(frozen=True)
class DrainReport:
    """What `run_drain` did; `ran` is False when another drainer held the lock."""

    ran: bool
    passes: int = 0
    commits: int = 0
    rewrites: int = 0
    requeued: int = 0
    dropped: int = 0
    duration_ms: float = 0.0
    steps: tuple[StepOutcome, ...] = field(default_factory=tuple)


class DrainLock:
    """flock on `drain.lock`, with the holder's pid inside so the shims can skip launching a
    second drainer without any Python. The kernel drops the flock when a drainer dies, so a
    stale file (dead pid) never blocks anyone."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock without waiting; False if another drainer holds it."""
        if self.path.is_dir() and not self.path.is_symlink():
            with contextlib.suppress(OSError):
                self.path.rmdir()  # an empty mkdir-style lock left by something else: stale
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        """Empty the pid and drop the lock."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def follow_rewrites(shas: Sequence[str], rewrites: Sequence[queue.QueuedRewrite]) -> dict[str, str]:
    """Map each sha through old->new pairs (amend after rebase chains too), cycle-safe."""
    step = {r.old: r.new for r in rewrites}
    out = {}
    for sha in shas:
        seen = {sha}
        cur = sha
        while cur in step and step[cur] not in seen:
            cur = step[cur]
            seen.add(cur)
        out[sha] = cur
    return out


def missing_commits(cwd: Path, shas: Sequence[str]) -> set[str]:
    """The shas git does not know as commits (one `git cat-file --batch-check`)."""
    if not shas:
        return set()
    proc = git.run(cwd, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                   input="".join(s + "\n" for s in shas))
    if proc.returncode != 0:
        return set()  # cannot tell: keep everything rather than drop work
    found = {ln.split()[0] for ln in proc.stdout.splitlines() if ln.endswith(" commit")}
    return {s for s in shas if s not in found}


def _clear_spawn(state_dir: Path) -> None:
    """Remove the shim's `drain.spawn` marker (its launch is done: we run or someone else does)."""
    spawn = state_dir / SPAWN
    with contextlib.suppress(OSError):
        for child in spawn.iterdir():
            child.unlink()
    with contextlib.suppress(OSError):
        spawn.rmdir()


def _take_wanted(state_dir: Path) -> bool:
    """Consume the shims' `drain.wanted` marker; True if it was there."""
    path = state_dir / WANTED
    try:
        if path.is_dir():
            path.rmdir()  # an older layout
        else:
            path.unlink()
    except OSError:
        return False
    return True


def run_drain(state_dir: Path, cwd: Path, steps: Sequence[Step]) -> DrainReport:
    """Drain the queues under the lock while the shims say work is waiting.

    The shims launch at most one drainer (see templates/shim.sh): each one appends its work,
    then creates `drain.wanted`; only when no drainer holds the lock does one of them launch
    one. So the drainer consumes `drain.wanted` before every pass and looks for it again after
    releasing the lock: a burst of commits costs one pass per wave, by one process.
    """
    lock = DrainLock(state_dir / LOCK)
    started = time.perf_counter()
    reports: list[DrainReport] = []
    held: list[tuple[float, float]] = []  # wall-clock spans this process held the lock
    while len(reports) < MAX_PASSES:
        got = lock.acquire()
        first_held = time.time()
        _clear_spawn(state_dir)
        if not got:
            break  # the holder looks for drain.wanted after it releases the lock
        try:
            while len(reports) < MAX_PASSES:
                _take_wanted(state_dir)
                reports.append(_one_pass(state_dir, cwd, steps))
                if not _settled_has_work(state_dir, reports[-1].requeued):
                    break
        finally:
            lock.release()
            held.append((first_held, time.time()))
        # A shim that saw our pid alive left drain.wanted and launched nothing: look again.
        if not (os.path.exists(state_dir / WANTED) or _new_work(state_dir, reports[-1].requeued)):
            break
    if not reports:
        state.log(state_dir, f"drainer {os.getpid()}: another drainer holds the lock "
                             "(it takes the work)")
        return DrainReport(ran=False)
    total = DrainReport(
        ran=True, passes=len(reports), commits=sum(r.commits for r in reports),
        rewrites=sum(r.rewrites for r in reports), requeued=reports[-1].requeued,
        dropped=sum(r.dropped for r in reports),
        duration_ms=(time.perf_counter() - started) * 1000,
        steps=tuple(s for r in reports for s in r.steps))
    _record(state_dir, total)
    spans = " ".join(f"{a:.3f}-{b:.3f}" for a, b in held)
    state.log(state_dir, f"drainer {os.getpid()}: {total.passes} pass(es), {total.commits} "
                         f"commit(s), {total.rewrites} rewrite(s); held {spans}")
    return total


def _settled_has_work(state_dir: Path, requeued: int) -> bool:
    """Whether more work arrived, waiting up to SETTLE_S for a burst's next commit."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        if os.path.exists(state_dir / WANTED) or _new_work(state_dir, requeued):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _new_work(state_dir: Path, requeued: int) -> bool:
    waiting = (len(queue.pending(state_dir / queue.COMMITS))
               + len(queue.pending(state_dir / queue.REWRITES)))
    return waiting > requeued


def _one_pass(state_dir: Path, cwd: Path, steps: Sequence[Step]) -> DrainReport:
    t0 = time.perf_counter()
    taken_c = queue.take(state_dir / queue.COMMITS)
    taken_r = queue.take(state_dir / queue.REWRITES)
    commits, rewrites, bad = [], [], []
    for line in taken_c.lines:
        c = queue.parse_commit(line)
        commits.append(c) if c else bad.append(line)
    for line in taken_r.lines:
        r = queue.parse_rewrite(line)
        rewrites.append(r) if r else bad.append(line)
    for line in bad:
        state.log(state_dir, f"error: dropped a malformed queue line: {line[:200]!r}")

    mapped = follow_rewrites([c.sha for c in commits], rewrites)
    first_seen: dict[str, int] = {}
    for c in commits:
        sha = mapped[c.sha]
        first_seen[sha] = min(first_seen.get(sha, c.queued_at), c.queued_at)
    missing = missing_commits(cwd, list(first_seen))
    for sha in sorted(missing):
        state.log(state_dir, f"error: queued commit {sha} does not exist (gc'd?): dropped")
        del first_seen[sha]
    batch = Batch(tuple(first_seen), tuple(rewrites))

    outcomes = [_run_step(state_dir, step, batch) for step in steps]
    failed = {s.consumes for s, o in zip(steps, outcomes, strict=True)
              if s.consumes and o.status != "ok"}
    back_c = [f"{sha} {t}" for sha, t in first_seen.items()] if "commits" in failed else []
    back_r = [r.line for r in rewrites] if "rewrites" in failed else []
    back_c += queue.late_lines(taken_c)
    back_r += queue.late_lines(taken_r)
    try:
        queue.put_back(state_dir / queue.COMMITS, back_c)
        queue.put_back(state_dir / queue.REWRITES, back_r)
    except OSError as exc:
        # Keep the .draining files: the next drainer redoes them (steps are idempotent).
        state.log(state_dir, f"error: cannot put work back into the queue: {exc}")
    else:
        queue.finish(taken_c)
        queue.finish(taken_r)
    if "commits" not in failed and first_seen:
        now = time.time()
        with contextlib.suppress(OSError):
            data = state.read_state(state_dir)
            # Commit-to-linked latency; queue times have 1 s resolution (the shim uses date +%s).
            state.add_samples(data, "queue_wait_ms",
                              [max(0.0, now - t) * 1000 for t in first_seen.values()])
            state.write_state(state_dir, data)
    return DrainReport(ran=True, passes=1, commits=len(first_seen), rewrites=len(rewrites),
                       requeued=len(back_c) + len(back_r), dropped=len(bad) + len(missing),
                       duration_ms=(time.perf_counter() - t0) * 1000, steps=tuple(outcomes))


def _run_step(state_dir: Path, step: Step, batch: Batch) -> StepOutcome:
    t0 = time.perf_counter()
    try:
        detail = step.run(batch)
        status = "ok"
    except StepUnavailable as exc:
        detail, status = str(exc), "unavailable"
        state.log(state_dir, f"{step.name}: unavailable: {exc} (work kept queued)")
    except LoomaError as exc:
        detail, status = exc.message, "failed"
        state.log(state_dir, f"{step.name}: error: {exc.message}")
    except Exception as exc:  # a drain step must never take the others down
        detail, status = f"{type(exc).__name__}: {exc}", "failed"
        state.log(state_dir, f"{step.name}: error: {detail}\n{traceback.format_exc()}")
    ms = (time.perf_counter() - t0) * 1000
    if status == "ok":
        state.log(state_dir, f"{step.name}: ok in {ms:.0f} ms: {detail}")
    return StepOutcome(step.name, status, round(ms, 3), detail)


def _record(state_dir: Path, report: DrainReport) -> None:
    data = state.read_state(state_dir)
    at = state.utc_now()
    data["last_drain"] = {
        "at": at, "duration_ms": round(report.duration_ms, 3), "passes": report.passes,
        "commits": report.commits, "rewrites": report.rewrites, "requeued": report.requeued,
        "dropped": report.dropped,
        "steps": [{"name": s.name, "status": s.status, "ms": s.ms, "detail": s.detail[:500]}
                  for s in report.steps]}
    data["drains"] = int(data.get("drains", 0)) + 1
    errors = [s for s in report.steps if s.status == "failed"]
    if errors:
        data["last_error"] = {"at": at, "step": errors[-1].name, "message": errors[-1].detail[:500]}
        data["errors"] = int(data.get("errors", 0)) + 1
    state.add_samples(data, "drain_ms", [report.duration_ms])
    for s in report.steps:
        state.add_samples(data, f"step_ms.{s.name}", [s.ms])
    try:
        state.write_state(state_dir, data)
    except OSError as exc:
        state.log(state_dir, f"error: cannot write {state.STATE}: {exc}")
