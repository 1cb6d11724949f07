"""Opening the repository's object store and refs with dulwich, always closed afterwards."""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from looma_git.errors import NotARepositoryError, ReadOnlyError
from looma_git.gitrepo import RepoPaths

if TYPE_CHECKING:
    pass

# Fewer objects than this go loose; more go into one pack (a loose object costs ~0.3 ms to
# create here). Packs pile up, and every pack is searched on each lookup, so trees this
# process built or read are kept in a content-addressed cache and the next batch never asks
# the packs for them.
LOOSE_LIMIT = 100
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
    """Add objects not already present: loose when few, one pack when many."""
    store = repo.object_store
    unique = list({o.id: o for o in objects}.values())
    for obj in unique:
        if obj.type_name == b"tree":
            _remember(obj)
    try:
        if len(unique) < LOOSE_LIMIT:
            for obj in unique:
                if not store.contains_loose(obj.id):
                    store.add_object(obj)
        else:
            # a duplicate inside a pack is harmless; probing every object first is not cheap
            store.add_objects([(o, None) for o in unique])
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
