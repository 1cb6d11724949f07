"""Embedding a large ingest's vectors in a detached process after `looma ingest` returns, and
the wait of a query that needs them.

A cold ingest publishes ~250 WorkItems at 1,500 sessions, and embedding their texts was ~13
CPU-s (the model runs at ~50 ms per 150-token summary here: compute-bound; batching, threads
and graph optimisations do not change it, int8 activations move the vectors too far); cut to
their first 64 tokens (`vector_sync.TOKENS_BY_KIND`) they are ~5. Those vectors serve only
the queries words do not decide, so `looma
ingest` returns once the full-text index is written (lexical answers are ready) and a
detached process embeds the texts the inline top-up would have (WorkItems, then the backlog
within the same budget). It holds `LOCK` from before it starts to its exit; a query that needs
meaning (`retrieval/semantic`) waits for the lock, so it ranks on the vectors the inline
top-up would have written, never on some of them.

A cold ingest starts that process before its work model (`prewarm`): a thread of the lowest
priority imports onnxruntime and folds the model (once per user) on the core the work model's
last steps leave idle, while the process waits for its task, handed over with LOCK when the
stamp is written (`Prewarmed.go`); ~0.8 s of the top-up no longer comes after the command.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from looma_git.gitrepo import RepoPaths

LOCK = "vectors-background.lock"
# New events in one ingest from which its vectors are embedded by the detached process (a
# cold ingest, a large backlog); a hook's ingest of a few dozen embeds its few texts inline.
BESIDE_FROM = 20_000
# How long a query waits for the background top-up before ranking on what is there (at 1,500
# sessions it ended 14-38 s after the command returned on this stop's loaded 2-core machine;
# at 5,000, 18 s quiet). A `resume` that blocked silently for minutes looked hung: the wait is
# said on stderr, and after this long the query ranks on the vectors written so far (words
# still rank every WorkItem; the rest are embedded by then or by the next run).
WAIT_S = 20.0
# A prewarmed top-up warms up at the lowest priority: while the work model keeps both cores
# busy it takes next to nothing from it (CFS weight 15 against 1024), then runs on the idle one.
PREWARM_NICE = 19
# How long the detached process waits for the index writer lock (the ingest that started it
# still holds it while it writes the stamp; another reindex may hold it next).
_WRITER_WAIT_S = 300.0
_POLL_S = 0.05


def _lock_path(paths: RepoPaths) -> Path:
    return paths.state_dir / LOCK


def start(paths: RepoPaths, budget_s: float | None, embed_new: bool,
          prewarmed: Prewarmed | None = None) -> bool:
    """Start the detached top-up (`index.rebuild.top_up` with these arguments), or hand it to
    the `prewarmed` process; False when it cannot be started here (no flock, another top-up
    still running, no process): the caller then embeds inline, as before."""
    if prewarmed is not None:
        return prewarmed.go(budget_s, embed_new)
    try:
        import fcntl
    except ImportError:  # not POSIX
        return False
    try:
        fd = os.open(_lock_path(paths), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a top-up is running: this one embeds inline (it waits for it)
            return False
        # The child inherits the locked open file: the lock is held until it exits (also
        # when it crashes), with no moment between this call and its start when a query
        # would find it free.
        _spawn(paths, "_main", fd, *_task(budget_s, embed_new))
    except OSError:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)  # the child's copy keeps the lock
    return True


def _task(budget_s: float | None, embed_new: bool) -> tuple[str, str]:
    """`top_up`'s arguments as the process reads them (`_top_up`)."""
    return ("none" if budget_s is None else repr(budget_s)), ("1" if embed_new else "0")


def _spawn(paths: RepoPaths, entry: str, fd: int, *args: str, keep: int | None = None) -> None:
    """Start a detached process running `entry(argv)` of this module: `fd` (LOCK's open
    file) and `keep` are inherited, then the repository's paths and `args` (OSError when it
    cannot be started)."""
    subprocess.Popen(
        [sys.executable, "-c", f"import sys; from looma_git.index.vector_background import "
         f"{entry}; {entry}(sys.argv[1:])", str(fd), str(paths.worktree or ""),
         str(paths.git_dir), str(paths.common_dir), *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
        pass_fds=(fd,) if keep is None else (fd, keep))


class Prewarmed:
    """The top-up's process, started before the work model and waiting for its task (`go`):
    a thread of the lowest priority imports onnxruntime and folds the model (once per user)
    on whatever core is idle, which at a cold ingest's end is one of two (the work model's
    last steps run on one), instead of after the command returned."""

    def __init__(self, fd: int, pipe: int) -> None:
        self.fd, self.pipe = fd, pipe  # LOCK's open file (shared with the process), its task

    def go(self, budget_s: float | None, embed_new: bool) -> bool:
        """Take LOCK for the process (a flock is the open file's: it holds it until it
        exits) and hand it the top-up; False when another top-up holds LOCK or the process
        is gone: it is told to exit, and the caller embeds inline."""
        import fcntl

        try:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False
            try:
                os.write(self.pipe, (" ".join(_task(budget_s, embed_new)) + "\n").encode())
            except OSError:  # it died while warming up: nobody holds the lock but us
                with contextlib.suppress(OSError):
                    fcntl.flock(self.fd, fcntl.LOCK_UN)
                return False
            return True
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Close this side: a process that got no task reads the end and exits."""
        for fd in (self.pipe, self.fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pipe = self.fd = -1


def prewarm(paths: RepoPaths) -> Prewarmed | None:
    """Start the top-up's process now (`Prewarmed`); None where it cannot be (not Linux,
    where a thread's priority is its own; no process): `start` then starts one when the
    vectors are due, as before."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fd = os.open(_lock_path(paths), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    r, w = os.pipe()
    try:
        _spawn(paths, "_main_prewarmed", fd, str(r), keep=r)
    except OSError:
        for x in (fd, w):
            os.close(x)
        return None
    finally:
        os.close(r)
    return Prewarmed(fd, w)


def running(paths: RepoPaths) -> bool:
    """Whether a background top-up holds the lock now."""
    return not _try_shared(paths)


def wait(paths: RepoPaths, timeout: float = WAIT_S,
         say: Callable[[str], None] | None = None) -> bool:
    """Wait until no background top-up runs (at most `timeout` s); True when none does. One
    open and one flock when none runs (the usual case). `say`: told once when the wait
    starts and once when it gives up (what a person at the terminal sees)."""
    if _try_shared(paths):
        return True
    if say is not None:
        say(f"looma: waiting for the background embedding of the last ingest (at most "
            f"{timeout:.0f} s)")
    deadline = time.monotonic() + timeout
    while not _try_shared(paths):
        if time.monotonic() >= deadline:
            if say is not None:
                say("looma: still embedding; ranking on the vectors written so far")
            return False
        time.sleep(_POLL_S)
    return True


def _try_shared(paths: RepoPaths) -> bool:
    """True when the lock is free (or there is no lock file: no top-up ever ran here)."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fd = os.open(_lock_path(paths), os.O_RDONLY)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _warm_up() -> None:
    """What a top-up loads before it embeds: the imports and the folded model (built once per
    user, index/model_cache). In a thread of the lowest priority (on Linux a thread has its
    own nice value, and threads it starts inherit it): the session that embeds is created by
    the main thread after it, at the usual priority, so the embedding never runs niced."""
    with contextlib.suppress(OSError):
        os.nice(PREWARM_NICE)
    with contextlib.suppress(Exception):  # (a model that cannot load: the top-up says why)
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401

        from looma_git.index import model_cache, rebuild, vectors  # noqa: F401
        from looma_git.index.embedder import prepare_batch

        prepare_batch(model_cache.FOLD_AT_TEXTS)


def _paths(worktree: str, git_dir: str, common: str) -> RepoPaths:
    return RepoPaths(worktree=Path(worktree) if worktree else None, git_dir=Path(git_dir),
                     common_dir=Path(common))


def _main(argv: list[str]) -> None:
    """The detached top-up: embed under the index writer lock, then exit (which frees LOCK)."""
    # argv[0]: the inherited descriptor of LOCK, left open (the lock lasts until this exits)
    _fd, worktree, git_dir, common, budget, embed_new = argv
    _top_up(_paths(worktree, git_dir, common), budget, embed_new)


def _main_prewarmed(argv: list[str]) -> None:
    """The prewarmed top-up (`Prewarmed`): warm up while waiting for the task on the pipe,
    then `_main`'s work; exit without a task (the ingest embedded nothing here, or died)."""
    import threading

    _fd, worktree, git_dir, common, pipe = argv
    warm = threading.Thread(target=_warm_up, daemon=True)
    warm.start()
    with os.fdopen(int(pipe), "rb") as task_in:
        task = task_in.readline().decode().split()
    if len(task) != 2:
        return
    warm.join()
    _top_up(_paths(worktree, git_dir, common), *task)


def _top_up(paths: RepoPaths, budget: str, embed_new: str) -> None:
    from looma_git.index.rebuild import top_up

    # A failure leaves the texts pending (recorded): the next ingest or reindex embeds them.
    with contextlib.suppress(Exception):
        top_up(paths, None if budget == "none" else float(budget), embed_new == "1",
               lock_wait_s=_WRITER_WAIT_S)
