"""Index bookkeeping: the index-meta.json stamp (format, ledger commit, model) and fcntl locks."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from looma_git.errors import LockError, ReadOnlyError

#: Bump when the layout of the local index (Tantivy schema, vec tables, doc shapes) changes,
#: so every clone rebuilds instead of reading an index it does not understand.
FORMAT_VERSION = 1

META_FILE = "index-meta.json"
LOCK_FILE = "index.lock"

# Poll interval while waiting for a lock; flock has no timed wait.
_POLL_SECONDS = 0.02


class IndexMeta(BaseModel):
    """What the local index was built from; stored as `<state>/index-meta.json`."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    format_version: int = FORMAT_VERSION
    ledger_commit: str | None = None
    model_id: str | None = None
    built_at: str = ""
    vectors: int = 0
    vectors_pending: int = 0  # texts left without a vector (topped up by later runs)

    def is_stale(self, current_ledger_commit: str | None, *, model_id: str | None = None) -> bool:
        """True when the index must be rebuilt or refreshed to match the ledger (and model).

        `model_id` is only compared when given: a clone with no embedder still has a
        valid lexical index.
        """
        if self.format_version != FORMAT_VERSION:
            return True
        if self.ledger_commit != current_ledger_commit:
            return True
        return model_id is not None and self.model_id != model_id


def now_iso() -> str:
    """The current UTC time as ISO-8601 with seconds, for `built_at`."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def read_meta(state_dir: Path) -> IndexMeta | None:
    """The stored stamp, or None if absent or unreadable (both mean: rebuild)."""
    path = Path(state_dir) / META_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    if len(raw) > 64 * 1024:  # a stamp is tiny; anything big is not ours
        return None
    try:
        return IndexMeta.model_validate(json.loads(raw))
    except (ValueError, ValidationError):
        return None


def write_meta(state_dir: Path, meta: IndexMeta) -> Path:
    """Write the stamp atomically (temp file + rename) and return its path."""
    state = Path(state_dir)
    path = state / META_FILE
    tmp = state / f".{META_FILE}.{os.getpid()}.tmp"
    try:
        state.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(meta.model_dump(), indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except PermissionError as exc:
        raise ReadOnlyError(f"cannot write {path}: {exc.strerror}") from exc
    return path


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = 10.0) -> Iterator[Path]:
    """Hold an exclusive fcntl.flock on `path` (created if needed), waiting up to `timeout` s.

    flock locks belong to the open file description, so two holders in the same process
    exclude each other too, and the kernel drops the lock when a crashed holder exits
    (no stale-lock cleanup needed). Raises LockError on timeout, ReadOnlyError if the
    file cannot be created.
    """
    lock_path = Path(path)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        raise ReadOnlyError(f"cannot create lock file {lock_path}: {exc.strerror}") from exc
    try:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    raise LockError(
                        f"{lock_path} is held by another looma process",
                        hint="wait for it to finish; the lock is released when it exits",
                    ) from None
                time.sleep(_POLL_SECONDS)
        # The pid is only a diagnostic for humans looking at the file.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield lock_path
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def index_writer_lock(state_dir: Path, timeout: float = 10.0) -> contextlib.AbstractContextManager[Path]:
    """The exclusive `<state>/index.lock` held by whoever (re)builds the local index."""
    return file_lock(Path(state_dir) / LOCK_FILE, timeout)
