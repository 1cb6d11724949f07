"""Reading sources in forked worker processes while the parent stores results in order."""

from __future__ import annotations

import os
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


def _child_init(close_fds: tuple[int, ...], parent: int) -> None:
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


def fork_available() -> bool:
    """Worker processes are only used where fork and parent-death signals exist (Linux)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def ordered_map(task: Callable[[int], Any], indices: Sequence[int], workers: int,
                close_fds: tuple[int, ...] = (), window: int = 0) -> Generator[tuple[int, Any], None, None]:
    """Yield `(i, task(i))` for `indices` in order, computed by `workers` forked processes.

    At most `window` results are in flight (bounded memory). The task sees the parent's
    state as of this call (fork); exceptions inside it re-raise here. Closing the generator
    terminates the workers.
    """
    global _TASK
    import multiprocessing

    window = window or 4 * workers
    for stream in (sys.stdout, sys.stderr):  # a fork must not inherit unflushed output
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    _TASK = task
    ctx = multiprocessing.get_context("fork")
    pool = ctx.Pool(workers, initializer=_child_init, initargs=(close_fds, os.getpid()))
    try:
        pending: deque[tuple[int, Any]] = deque()
        it = iter(indices)
        for i in it:
            pending.append((i, pool.apply_async(_run, (i,))))
            if len(pending) >= window:
                break
        while pending:
            i, res = pending.popleft()
            value = res.get()
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt, pool.apply_async(_run, (nxt,))))
            yield i, value
    finally:
        _TASK = None
        pool.terminate()
        pool.join()
