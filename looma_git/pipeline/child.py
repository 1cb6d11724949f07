"""One call run in a forked child process, its result sent back: the heap it grew (a cold
work model's, hundreds of MB at 5,000 sessions) is gone when it returns, not left
fragmented under the steps that follow; or run beside the parent's own work (`start`, the
message index during the work model)."""

from __future__ import annotations

import gc
import os
import pickle
import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def in_child(fn: Callable[[], T]) -> T:
    """`fn()`, computed in a forked child (its return value and any exception it raised
    come back pickled); in this process where fork is not available (not Linux)."""
    from looma_git.ingest import parallel

    if not parallel.fork_available():
        return fn()
    return start(fn)()


def start(fn: Callable[[], T]) -> Callable[[], T]:
    """Fork a child computing `fn()` now; returns the join that waits for it and gives its
    value (or raises what it raised). The caller checked that fork is available."""
    from looma_git.ingest import parallel

    for stream in (sys.stdout, sys.stderr):  # a fork must not inherit unflushed output
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    r, w = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(r)
            parallel.child_init((), parent)
            # No cyclic collection: a child runs one call and exits, and what a pass leaves is
            # not cycles. Collections walked what the pass keeps until it ends (a cold work
            # model at 5,000 sessions: 13 of them, 0.65 CPU-s; its rows' child 0.8 of 2.4),
            # for the same peak RSS (482 MB either way). Workers it forks inherit this. (What
            # the parent holds is frozen too, so an explicit collect does not walk it.)
            gc.freeze()
            gc.disable()
            payload: tuple[bool, Any]
            try:
                payload = (True, fn())
            except BaseException as exc:  # re-raised in the parent
                payload = (False, exc)
                if os.environ.get("LOOMA_DEBUG"):  # (the parent's traceback ends at join)
                    import traceback

                    traceback.print_exc()
            try:
                blob = pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)
                pickle.loads(blob)  # an exception whose __init__ takes other arguments
            except Exception as exc:  # an unpicklable result or exception
                what = payload[1] if not payload[0] else exc
                blob = pickle.dumps((False, RuntimeError(f"{type(what).__name__}: {what}")))
            with os.fdopen(w, "wb") as out:
                out.write(blob)
            code = 0
        finally:
            os._exit(code)
    os.close(w)

    def join() -> T:
        with os.fdopen(r, "rb") as fh:
            data = fh.read()
        _, status = os.waitpid(pid, 0)
        if not data:
            raise RuntimeError(f"a forked child process died (status {status})")
        ok, value = pickle.loads(data)
        if not ok:
            raise value
        return value

    return join
