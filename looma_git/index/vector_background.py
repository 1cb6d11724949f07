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
# How long the detached process waits for the index writer lock (the ingest that started it
# still holds it while it writes the stamp; another reindex may hold it next).
_WRITER_WAIT_S = 300.0
_POLL_S = 0.05


def _lock_path(paths: RepoPaths) -> Path:
    return paths.state_dir / LOCK


def start(paths: RepoPaths, budget_s: float | None, embed_new: bool) -> bool:
    """Start the detached top-up (`index.rebuild.top_up` with these arguments); False when
    it cannot be started here (no flock, another top-up still running, no process): the
    caller then embeds inline, as before."""
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
        subprocess.Popen(
            [sys.executable, "-c", "import sys; from looma_git.index.vector_background "
             "import _main; _main(sys.argv[1:])", str(fd), str(paths.worktree or ""),
             str(paths.git_dir), str(paths.common_dir),
             "none" if budget_s is None else repr(budget_s), "1" if embed_new else "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True, pass_fds=(fd,))
    except OSError:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)  # the child's copy keeps the lock
    return True


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


def _main(argv: list[str]) -> None:
    """The detached top-up: embed under the index writer lock, then exit (which frees LOCK)."""
    # argv[0]: the inherited descriptor of LOCK, left open (the lock lasts until this exits)
    _fd, worktree, git_dir, common, budget, embed_new = argv
    paths = RepoPaths(worktree=Path(worktree) if worktree else None, git_dir=Path(git_dir),
                      common_dir=Path(common))
    from looma_git.index.rebuild import top_up

    # A failure leaves the texts pending (recorded): the next ingest or reindex embeds them.
    with contextlib.suppress(Exception):
        top_up(paths, None if budget == "none" else float(budget), embed_new == "1",
               lock_wait_s=_WRITER_WAIT_S)
