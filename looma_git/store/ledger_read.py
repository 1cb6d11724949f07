"""Reading refs/looma/ledger: op files parsed from a commit's tree, and folds per head.

`folded_entry` is the one way to get the fold at a head: from this process's memory, else
from the state dir's fold cache (`store/fold_cache.py`), else by folding on top of the cached
head the op files added since (when they all sort after it), else by reading and folding
every op file. Each way gives the state a full fold of the same op files gives.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from looma_git.errors import InvalidDataError
from looma_git.ledger import validate
from looma_git.ledger.fold import Folder, effective_ops
from looma_git.ledger.ops import LAMPORT_JUMP_LIMIT, Op
from looma_git.store import fold_cache, ops_cache
from looma_git.store.repo import get_blob_data, get_tree

_PARSED: dict[tuple[bytes, str], validate.Parsed] = {}  # (blob id, path) -> parse result


class ReadResult:
    """What the ledger ref holds at `head`: valid ops, kept unknown-version files, rejected
    files with reasons. `ops` may be read lazily (a fold from the cache needs none of them)."""

    def __init__(self, head: bytes | None, ops: list[Op] | None = None,
                 kept: list[validate.KeptFile] | None = None,
                 rejected: list[validate.Rejected] | None = None, *,
                 loader: Callable[[], list[Op]] | None = None,
                 max_lamport: int | None = None) -> None:
        self.head = head
        self._ops = ops if ops is not None or loader is not None else []
        self._loader = loader
        self.kept = kept if kept is not None else []
        self.rejected = rejected if rejected is not None else []
        self._max_lamport = max_lamport

    @property
    def ops(self) -> list[Op]:
        if self._ops is None:
            assert self._loader is not None
            self._ops, self._loader = self._loader(), None
        return self._ops

    @ops.setter
    def ops(self, value: list[Op]) -> None:
        self._ops, self._loader = value, None

    @property
    def max_lamport(self) -> int:
        if self._max_lamport is None:
            lams = [o.lamport for o in self.ops] + [k.lamport for k in self.kept
                                                     if k.lamport is not None]
            self._max_lamport = max(lams, default=0)
        return self._max_lamport

    def extended(self, head: bytes, new: list[Op]) -> ReadResult:
        """The result after appending `new` (lazy when this one is)."""
        base = self
        top = max([self.max_lamport, *(o.lamport for o in new)])
        if self._ops is None:
            return ReadResult(head, None, self.kept, self.rejected,
                              loader=lambda: [*base.ops, *new], max_lamport=top)
        return ReadResult(head, [*self._ops, *new], self.kept, self.rejected, max_lamport=top)


def _parse_entry(repo: Any, sha: bytes, path: str,
                 disk: list[ops_cache.OpsCache]) -> validate.Parsed:
    """One op file, through the in-process and on-disk parse caches."""
    key = (sha, path)
    parsed = _PARSED.get(key)
    if parsed is not None:
        return parsed
    if not disk:  # opened on the first op not parsed in this process
        disk.append(ops_cache.for_state_dir(Path(repo.controldir()) / "looma"))
    parsed = disk[0].get(sha, path)
    if parsed is None:
        try:
            data = get_blob_data(repo, sha)
            parsed = validate.parse_op_file(path, sha.decode(), data)
        except KeyError:
            parsed = validate.Rejected(path, path.rsplit("/", 1)[-1][:64], "not a readable file")
        if isinstance(parsed, Op):
            disk[0].put(sha, parsed)
    _PARSED[key] = parsed
    return parsed


def _ops_root(repo: Any, head: bytes) -> Any:
    """The `ops` tree of ledger commit `head` (None when it has none), format checked."""
    try:
        root = get_tree(repo, head)
    except KeyError as exc:
        raise InvalidDataError(f"refs/looma/ledger points at a missing object: {exc}") from exc
    if b"format.yaml" not in root:
        raise InvalidDataError("refs/looma/ledger has no format.yaml at its root",
                               hint="this ref was not written by looma")
    validate.check_format(get_blob_data(repo, root[b"format.yaml"][1]))
    return get_tree(repo, root[b"ops"][1]) if b"ops" in root else None


def _path(prefix: bytes, name: bytes) -> str:
    return f"ops/{prefix.decode('utf-8', 'replace')}/{name.decode('utf-8', 'replace')}"


def read_tree(repo: Any, head: bytes | None) -> ReadResult:
    """Parse every op file of the ledger commit `head` (format.yaml checked first)."""
    result = ReadResult(head=head)
    if head is None:
        return result
    ops_tree = _ops_root(repo, head)
    if ops_tree is None:
        return result
    valid: list[Op] = []
    count = 0
    disk: list[ops_cache.OpsCache] = []
    for prefix in ops_tree.items():
        if not stat.S_ISDIR(prefix.mode):
            continue
        for entry in get_tree(repo, prefix.sha).items():
            count += 1
            if count > validate.MAX_OPS_PER_TREE:
                raise InvalidDataError(
                    f"refs/looma/ledger holds more than {validate.MAX_OPS_PER_TREE} op files")
            parsed = _parse_entry(repo, entry.sha, _path(prefix.path, entry.path), disk)
            if isinstance(parsed, Op):
                valid.append(parsed)
            elif isinstance(parsed, validate.KeptFile):
                result.kept.append(parsed)
            else:
                result.rejected.append(parsed)
    if disk:
        disk[0].flush()
    result.ops, jumps = validate.reject_lamport_jumps(valid)
    result.rejected.extend(jumps)
    return result


def _ops_dirs(repo: Any, head: bytes) -> dict[bytes, bytes]:
    tree = _ops_root(repo, head)
    return {} if tree is None else {
        i.path: i.sha for i in tree.items() if stat.S_ISDIR(i.mode)}


def dangling_undos(ops: Iterable[Op]) -> frozenset[str]:
    """Op ids named by an undo but absent: when one arrives, every fold must start over."""
    have = {o.id for o in ops}
    return frozenset(o.inverse_of for o in ops
                     if o.op == "undo" and o.inverse_of and o.inverse_of not in have)


def full_entry(repo: Any, head: bytes) -> tuple[fold_cache.Entry, ReadResult]:
    """Read and fold every op file at `head`."""
    result = read_tree(repo, head)
    folder = Folder()
    applied = effective_ops(result.ops)
    folder.apply(applied)
    folder.finish()
    keys = [o.sort_key for o in result.ops]
    entry = fold_cache.Entry(
        head=head, folder=folder, max_lamport=result.max_lamport,
        count=len(result.ops) + len(result.kept) + len(result.rejected),
        last_key=max(keys, default=(0, "")), ops_tree=_ops_dirs(repo, head),
        kept=result.kept, rejected=result.rejected,
        valid_max=max((o.lamport for o in result.ops), default=0),
        dangling=dangling_undos(result.ops))
    return entry, result


def advance(repo: Any, entry: fold_cache.Entry, head: bytes) -> fold_cache.Entry | None:
    """`entry` moved to `head` by folding only the op files added since, or None when that
    would not give what a full fold gives: a file removed or changed, an added file that is
    not a valid op, an undo, an op sorting before the folded ones, a lamport jump, an op an
    undo in the entry was waiting for."""
    if any("jumps" in r.reason for r in entry.rejected):
        return None  # a jump is judged against every other op: new ones can change it
    try:
        new_dirs = _ops_dirs(repo, head)
        added: list[tuple[bytes, str]] = []
        for name, sha in new_dirs.items():
            old_sha = entry.ops_tree.get(name)
            if old_sha == sha:
                continue
            old = {i.path: i.sha for i in get_tree(repo, old_sha).items()} if old_sha else {}
            new = {i.path: i.sha for i in get_tree(repo, sha).items()}
            if any(new.get(n) != s for n, s in old.items()):
                return None
            added += [(s, _path(name, n)) for n, s in new.items() if n not in old]
        if any(n not in new_dirs for n in entry.ops_tree):
            return None
    except KeyError:
        return None  # an object of the old head is gone: fold in full
    if entry.count + len(added) > validate.MAX_OPS_PER_TREE:
        return None
    disk: list[ops_cache.OpsCache] = []
    ops: list[Op] = []
    for sha, path in added:
        parsed = _parse_entry(repo, sha, path, disk)
        if not isinstance(parsed, Op):
            return None
        ops.append(parsed)
    if disk:
        disk[0].flush()
    ops.sort(key=lambda o: o.sort_key)
    if ops and (ops[0].sort_key <= entry.last_key
                or any(o.op == "undo" or o.id in entry.dangling for o in ops)
                or ops[-1].lamport > entry.valid_max + LAMPORT_JUMP_LIMIT):
        return None
    entry.folder.apply(ops)
    entry.folder.finish()
    entry.head = head
    entry.ops_tree = new_dirs
    entry.count += len(ops)
    if ops:
        entry.last_key = ops[-1].sort_key
        entry.max_lamport = max(entry.max_lamport, ops[-1].lamport)
        entry.valid_max = max(entry.valid_max, ops[-1].lamport)
    entry.projections_match = False  # written by someone else: not known to be this fold's
    entry.tree = None
    return entry
