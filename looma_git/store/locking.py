"""One ledger writer and one refinery pass per clone (flock), and compare-and-swap ref updates
with bounded retries."""

from __future__ import annotations

import errno
import fcntl
import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looma_git.errors import ConflictError, LockError, ReadOnlyError
from looma_git.store.repo import ref_value

if TYPE_CHECKING:
    pass

STALE_LOCK_SECONDS = 30.0
CAS_ATTEMPTS = 50
CAS_BUDGET_SECONDS = 10.0
WRITER_WAIT_SECONDS = 60.0


# A refinery pass (a cold ingest's work model can take minutes on a long history) and the
# hooks' drainer, which waits behind it in the background.
PASS_WAIT_SECONDS = 600.0
_PASSES_HELD: dict[str, int] = {}  # pass.lock paths this process (or the one it forked from) holds


@contextmanager
def writer_lock(state_dir: Path, *, wait: float = WRITER_WAIT_SECONDS) -> Iterator[None]:
    """Serialize looma writers of one clone; released by the kernel if the process dies."""
    path = state_dir / "writer.lock"
    with _flocked(path, wait, f"another looma process holds {path}"):
        yield


@contextmanager
def pass_lock(state_dir: Path, *, wait: float = PASS_WAIT_SECONDS,
              on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """One refinery pass, or drainer link step, at a time per clone. Two at once (a commit's
    drainer beside a cold ingest's work model) each published the same efforts as WorkItems
    of their own. Re-entrant in a process and in the children it forks while holding it
    (they share its open lock file, and it waits for them); per process, not per thread
    (a command runs its pass on one thread). `on_wait()` is called once if it has to wait."""
    path = state_dir / "pass.lock"
    key = str(path)
    if _PASSES_HELD.get(key):
        _PASSES_HELD[key] += 1
        try:
            yield
        finally:
            _PASSES_HELD[key] -= 1
        return
    with _flocked(path, wait, "another looma pass is running (an ingest's work model or the "
                              "hooks' drainer)", on_wait):
        _PASSES_HELD[key] = 1
        try:
            yield
        finally:
            _PASSES_HELD.pop(key, None)


@contextmanager
def _flocked(path: Path, wait: float, busy: str,
             on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """An exclusive flock on `path` (created), waiting up to `wait` seconds."""
    state_dir = path.parent
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise ReadOnlyError(f"cannot write to {state_dir}: {exc.strerror}",
                                hint="looma needs write access to the .git directory") from exc
        raise
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockError(busy, hint="wait for it to finish and retry") from None
                if on_wait is not None:
                    on_wait()
                    on_wait = None
                time.sleep(0.005 + random.random() * 0.01)
        yield
    finally:
        os.close(fd)


def cas_update(repo: Any, ref: bytes, build: Callable[[bytes | None], bytes | None],
               message: bytes) -> tuple[bytes | None, bytes | None]:
    """Move `ref` from its current value to `build(current)` by compare-and-swap.

    `build` is called again with the fresh value after every lost race; returning None means
    nothing to write. Returns (old, new). A `<ref>.lock` older than STALE_LOCK_SECONDS is
    reported as stale at once, naming the file.
    """
    from dulwich.file import FileLocked
    from dulwich.refs import ZERO_SHA

    lock_path = Path(repo.controldir()) / (ref.decode() + ".lock")
    start = time.monotonic()
    for attempt in range(CAS_ATTEMPTS):
        old = ref_value(repo, ref)
        new = build(old)
        if new is None or new == old:
            return old, old
        try:
            if repo.refs.set_if_equals(ref, old or ZERO_SHA, new, message=message):
                return old, new
        except FileLocked:
            _check_stale(lock_path)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise ReadOnlyError(f"cannot update {ref.decode()}: {exc.strerror}",
                                    hint="looma needs write access to the .git directory") \
                    from exc
            raise
        if time.monotonic() - start > CAS_BUDGET_SECONDS:
            break
        time.sleep(min(0.2, 0.002 * (2 ** min(attempt, 6))) * (0.5 + random.random()))
    if lock_path.exists():
        raise LockError(f"{lock_path} is held; {ref.decode()} could not be updated",
                        hint=f"if no git or looma process is running: rm {lock_path}")
    raise ConflictError(f"{ref.decode()} kept changing; gave up after {CAS_ATTEMPTS} attempts",
                        hint="retry the command")


def _check_stale(lock_path: Path) -> None:
    try:
        age = time.time() - lock_path.stat().st_mtime
    except FileNotFoundError:
        return
    if age > STALE_LOCK_SECONDS:
        raise LockError(f"stale lock {lock_path} (untouched for {int(age)} s)",
                        hint=f"if no git or looma process is running: rm {lock_path}")
