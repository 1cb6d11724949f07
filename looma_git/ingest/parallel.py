"""Reading sources in forked worker processes while the parent stores results in order."""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import sys
from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import Any

# The task runs in the child after fork; it is never pickled (only its index travels).
_TASK: Callable[[int], Any] | None = None


def _run(i: int) -> Any:
    assert _TASK is not None
    return _TASK(i)


def child_init(close_fds: tuple[int, ...], parent: int) -> None:
    # Ctrl-C goes to the whole foreground process group: the parent handles it (and
    # terminates the pool); a worker that also raised KeyboardInterrupt printed a traceback
    # and could die holding the pool's queue lock, hanging the parent's terminate().
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent's flock on ingest.lock is shared by every fork of its descriptor: a worker
    # that outlived a SIGKILLed parent would keep the lock. Close it, and die with the parent.
    for fd in close_fds:
        try:
            os.close(fd)
        except OSError:
            pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def default_workers() -> int:
    """Reader processes for a large ingest: one per CPU this process may use, at most 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def fork_available() -> bool:
    """Worker processes are only used where fork and parent-death signals exist (Linux)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def ordered_map(task: Callable[[int], Any], indices: Sequence[int], workers: int,
                close_fds: tuple[int, ...] = (), window: int = 0
                ) -> Generator[tuple[int, Any], None, None]:
    """Yield `(i, task(i))` for `indices` in order, computed by `workers` forked processes.

    Worker k computes indices[k::workers] in order and streams each result down its own pipe;
    the parent reads them back round-robin, so they arrive in order. No pool: a
    multiprocessing.Pool's three helper threads in the parent (result unpickling, task
    feeding, worker watching) cost ~40% of the parent's CPU on a bulk ingest (1,000 sources:
    2.9 of 6.9 CPU-s), contending for the GIL with the thread that stores. Memory stays
    bounded: a worker blocks once its pipe holds `window` bytes (default 1 MiB) nobody read
    and the parent holds _AHEAD bytes of its results (read while it waited on another).
    The task sees the parent's state as of this call (fork); an exception inside it
    re-raises here. Closing the generator kills the workers.
    """
    global _TASK
    order = list(indices)
    if not order:
        return
    workers = max(1, min(workers, len(order)))
    for stream in (sys.stdout, sys.stderr):  # a fork must not inherit unflushed output
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    _TASK = task
    parent = os.getpid()
    pids: list[int] = []
    reads: list[int] = []
    # The parent's objects go to the permanent generation while forking: a worker's collections
    # never walk them (nor touch, so copy, their pages); and a worker collects its young
    # objects seldom (WORKER_GC_GEN0).
    # A caller that froze its objects itself (a forked work-model child) keeps them frozen.
    thaw = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        for k in range(workers):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                code = 1
                try:
                    os.close(r)
                    for fd in reads:  # the read ends of earlier workers' pipes
                        os.close(fd)
                    child_init(close_fds, parent)
                    gc.set_threshold(WORKER_GC_GEN0, *gc.get_threshold()[1:])
                    _grow_pipe(w, window or _PIPE_BYTES)
                    _serve(order[k::workers], w)
                    code = 0
                finally:
                    os._exit(code)
            os.close(w)
            pids.append(pid)
            reads.append(r)
        if thaw:
            gc.unfreeze()
            thaw = False
        fds, reads = reads, []  # _collect closes them
        yield from _collect(order, fds, workers)
    finally:
        _TASK = None
        if thaw:
            gc.unfreeze()
        for fd in reads:
            os.close(fd)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)  # a no-op for one that already exited
            except ProcessLookupError:
                pass
            try:
                os.waitpid(pid, 0)  # reaped: its CPU time counts as this process's
            except ChildProcessError:
                pass


_PIPE_BYTES = 1 << 20
_AHEAD = 16 << 20  # bytes of one worker's results the parent holds before it stops reading
# Allocations between a forked worker's gen-0 collections (Python: 700). Its work keeps what
# it loaded alive until a batch is done, so most young objects survive and each collection
# walks them again: at 7,000 a pass's segmenting workers spent 0.3 CPU-s each in collections
# at 1,500 sessions, at 100,000 0.04, the same peak RSS (`looma reprocess` forks them from a
# collecting process; a cold ingest's, forked by a pipeline/child.py child, inherit its
# disabled collector).
WORKER_GC_GEN0 = 100_000
_BUF = 1 << 16
_F_SETPIPE_SZ = 1031  # Linux fcntl


def _grow_pipe(fd: int, size: int) -> None:
    """Let a worker run ahead of the parent by up to `size` bytes of results."""
    try:
        import fcntl

        fcntl.fcntl(fd, _F_SETPIPE_SZ, size)
    except (OSError, ImportError):
        pass  # the default 64 KiB: a worker waits for the parent sooner, nothing breaks


def _collect(order: list[int], fds: list[int], workers: int
             ) -> Generator[tuple[int, Any], None, None]:
    """Yield the workers' results in `order`, reading every worker's pipe while waiting for
    the one whose turn it is (so a worker that is ahead does not stop on a full pipe, leaving
    its core idle while the parent waits on the other), holding at most _AHEAD bytes of a
    worker's results here. Each result is read straight into a buffer of its size (no
    copies of ~150 MB of staged rows on a cold 1,500-session read). Closes `fds`."""
    boxes = [_Inbox() for _ in fds]
    try:
        for j, i in enumerate(order):
            box = boxes[j % workers]
            while not box.ready:
                if not box.live:
                    raise RuntimeError("an ingest reader process died")
                want = [fd for b, fd in zip(boxes, fds, strict=True)
                        if b.live and (b is box or b.held < _AHEAD)]
                ready, _, _ = select.select(want, [], [])
                for fd in ready:
                    boxes[fds.index(fd)].take(fd)
            blob = box.ready.popleft()
            box.held -= len(blob)
            ok, value = pickle.loads(blob)
            del blob
            if not ok:
                raise value
            yield i, value
    finally:
        for fd in fds:
            os.close(fd)


class _Inbox:
    """One worker's results as they arrive: each an 8-byte length, then that many bytes."""

    __slots__ = ("frame", "got", "head", "held", "live", "ready")

    def __init__(self) -> None:
        self.head = b""
        self.frame: bytearray | None = None
        self.got = 0
        self.ready: deque[bytearray] = deque()
        self.held = 0  # bytes read and not yet taken
        self.live = True

    def take(self, fd: int) -> None:
        """One read from `fd` (readable): of the length, or into the result it announced."""
        if self.frame is None:
            data = os.read(fd, 8 - len(self.head))
            if not data:
                self.live = False
                return
            self.head += data
            if len(self.head) == 8:
                self.frame = bytearray(int.from_bytes(self.head, "little"))
                self.head, self.got = b"", 0
                if not self.frame:  # (a pickle never is empty)
                    self.ready.append(self.frame)
                    self.frame = None
            return
        n = os.readv(fd, [memoryview(self.frame)[self.got:]])
        if not n:
            self.live = False
            return
        self.got += n
        self.held += n
        if self.got == len(self.frame):
            self.ready.append(self.frame)
            self.frame = None


def _serve(mine: list[int], fd: int) -> None:
    """Compute each index and write (ok, value) pickles to `fd` in order."""
    with os.fdopen(fd, "wb", buffering=_BUF) as out:
        for i in mine:
            try:
                payload: tuple[bool, Any] = (True, _run(i))
            except Exception as exc:  # re-raised in the parent
                payload = (False, exc)
            try:
                blob = pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # an unpicklable result or exception
                blob = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
            try:
                out.write(len(blob).to_bytes(8, "little"))  # framed: see _collect
                out.write(blob)
                out.flush()  # the parent reads result by result
            except BrokenPipeError:
                return  # the parent stopped reading
