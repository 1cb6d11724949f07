"""Opening the repository's object store and refs with dulwich, always closed afterwards."""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looma_git.errors import NotARepositoryError, ReadOnlyError
from looma_git.gitrepo import RepoPaths

if TYPE_CHECKING:
    pass

# Fewer objects than this go loose; more go into one pack written directly (never through
# dulwich, whose add_objects re-reads and re-indexes every pack it writes). A loose object
# costs a file create + rename each, so even a one-op batch (~7 objects) is cheaper as a
# pack. Packs looma wrote are merged geometrically (store/packs.py) so they do not pile up.
# Trees this process built or read are kept in a content-addressed cache so the next batch
# never asks the packs.
LOOSE_LIMIT = 4
_TREE_CACHE: dict[bytes, object] = {}  # content-addressed, so never stale
_TREE_CACHE_MAX = 200_000


@contextmanager
def open_repo(paths: RepoPaths) -> Iterator[Any]:
    """The dulwich Repo on the common dir (shared by every linked worktree)."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        repo = Repo(str(paths.common_dir))
    except (NotGitRepository, FileNotFoundError) as exc:
        raise NotARepositoryError(f"cannot open git repository at {paths.common_dir}") from exc
    try:
        yield repo
    finally:
        repo.close()


def write_objects(repo: Any, objects: list[Any]) -> None:
    """Add objects (dulwich ShaFiles or RawObjects): loose when few, one pack when many."""
    from looma_git.store.objects import RawObject, write_loose, write_pack
    from looma_git.store.packs import register

    unique: dict[bytes, RawObject] = {}
    for obj in objects:
        if isinstance(obj, RawObject):
            unique.setdefault(obj.id, obj)
            continue
        if obj.type_name == b"tree":
            _remember(obj)
        unique.setdefault(obj.id, RawObject(obj.type_name, obj.id, obj.as_raw_string()))
    if not unique:
        return
    store = repo.object_store
    try:
        if len(unique) < LOOSE_LIMIT:
            write_loose(Path(store.path), unique.values())
        else:
            pack_dir = Path(store.pack_dir)
            register(pack_dir, Path(repo.controldir()) / "looma",
                     write_pack(pack_dir, unique.values()))
    except OSError as exc:
        raise as_readonly(exc, paths_hint=str(repo.controldir())) from exc


def as_readonly(exc: OSError, *, paths_hint: str) -> Exception:
    """Turn permission/read-only OS errors into ReadOnlyError; pass others through."""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ReadOnlyError(f"cannot write to {paths_hint}: {exc.strerror}",
                             hint="looma needs write access to the .git directory")
    return exc


def make_commit(tree_id: Any, parents: list[Any], message: str, author: bytes) -> Any:
    """A commit object with looma as committer and `author` (b"Name <email>")."""
    from dulwich.objects import Commit

    c = Commit()
    c.tree = tree_id
    c.parents = parents
    c.author = author
    c.committer = b"looma <looma@localhost>"
    c.commit_time = c.author_time = int(time.time())
    c.commit_timezone = c.author_timezone = 0
    c.encoding = b"UTF-8"
    c.message = message.encode("utf-8")
    return c


def get_tree(repo: Any, sha: Any) -> Any:
    """The Tree object `sha` (or the tree of commit `sha`), typed loosely for dulwich."""
    cached = _TREE_CACHE.get(sha)
    if cached is not None:
        return cached
    obj = repo[sha]
    if obj.type_name == b"commit":
        return get_tree(repo, obj.tree)
    if obj.type_name != b"tree":
        raise KeyError(sha)
    _remember(obj)
    return obj


def _remember(tree: Any) -> None:
    if len(_TREE_CACHE) >= _TREE_CACHE_MAX:
        _TREE_CACHE.clear()
    _TREE_CACHE[tree.id] = tree


def get_blob_data(repo: Any, sha: Any) -> bytes:
    """The raw bytes of blob `sha`."""
    obj = repo[sha]
    if obj.type_name != b"blob":
        raise KeyError(sha)
    return bytes(obj.data)


def ref_value(repo: Any, ref: bytes) -> bytes | None:
    """The sha a ref points at, or None when it does not exist."""
    try:
        return bytes(repo.refs[ref])
    except KeyError:
        return None
