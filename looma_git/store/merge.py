"""Union merge of two ledger commits and of two notes commits; builds objects, moves no ref."""

from __future__ import annotations

import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looma_git.errors import InvalidDataError
from looma_git.ledger import validate
from looma_git.ledger.fold import fold
from looma_git.ledger.ops import LAMPORT_JUMP_LIMIT, Op
from looma_git.ledger.projections import FORMAT_FILE, note_texts, projection_files
from looma_git.ledger.state import LedgerState
from looma_git.store import git
from looma_git.store.ledger_ref import read_tree
from looma_git.store.notes import _build as build_notes_tree
from looma_git.store.notes import fanout_level, read_notes_map
from looma_git.store.repo import get_blob_data, get_tree, make_commit

if TYPE_CHECKING:
    from dulwich.objects import ShaFile
    from dulwich.repo import Repo

FILE_MODE = 0o100644
_ROOT_ENTRIES = {b"format.yaml": False, b"ops": True, b"workitems": True, b"memories": True}
_PREFIX = re.compile(rb"[0-9a-f]{2}\Z")


@dataclass
class LedgerMerge:
    """The union of a local and a remote ledger commit."""

    head: bytes                  # where the local ref should point (may be `local` itself)
    state: LedgerState           # fold of the union
    ops: dict[str, Op]           # every valid op of the union, by id
    objects: list[ShaFile] = field(default_factory=list)
    ops_in: int = 0              # op files taken from the remote
    kept_in: int = 0             # of which unknown-version files (kept, never folded)
    ops_out: int = 0             # local op files the remote did not have
    rejected: list[validate.Rejected] = field(default_factory=list)  # remote files left out


@dataclass
class NotesMerge:
    """The notes commit matching a merged state, descending from both notes heads."""

    head: bytes | None
    objects: list[ShaFile] = field(default_factory=list)
    notes: int = 0


def is_ancestor(git_dir: Path, a: bytes, b: bytes) -> bool:
    """Whether commit `a` is `b` or one of its ancestors (git's commit-graph makes it cheap)."""
    if a == b:
        return True
    return git.is_ancestor(git_dir, a.decode(), b.decode())


def check_commit(repo: Repo, sha: bytes, what: str) -> None:
    """The remote's ref must name a commit we now hold."""
    try:
        obj = repo[sha]
    except KeyError:
        raise InvalidDataError(f"remote {what} points at {sha.decode()}, which did not arrive",
                               hint="nothing was changed locally") from None
    if obj.type_name != b"commit":
        raise InvalidDataError(
            f"remote {what} points at a {obj.type_name.decode()}, not a commit",
            hint="the remote's looma refs were not written by looma; nothing was changed "
                 "locally (a maintainer can delete the remote ref)")


def check_ledger_tree(repo: Repo, commit: bytes) -> None:
    """Only format.yaml, ops/<xx>/<file>, workitems/ and memories/ may appear in a ledger tree."""
    root = get_tree(repo, commit)
    for item in root.items():
        want_dir = _ROOT_ENTRIES.get(item.path)
        name = item.path.decode("utf-8", "replace")
        if want_dir is None:
            raise InvalidDataError(f"remote ledger has an unexpected entry {name!r} at its root",
                                   hint="allowed: format.yaml, ops/, workitems/, memories/; "
                                        "nothing was changed locally")
        if stat.S_ISDIR(item.mode) != want_dir:
            raise InvalidDataError(f"remote ledger entry {name!r} has the wrong type",
                                   hint="nothing was changed locally")
    if b"ops" not in root:
        return
    for prefix in get_tree(repo, root[b"ops"][1]).items():
        pname = prefix.path.decode("utf-8", "replace")
        if not stat.S_ISDIR(prefix.mode) or not _PREFIX.match(prefix.path):
            raise InvalidDataError(f"remote ledger has an unexpected entry 'ops/{pname}'",
                                   hint="ops/ holds only two-hex-digit directories; nothing "
                                        "was changed locally")
        for entry in get_tree(repo, prefix.sha).items():
            if not stat.S_ISREG(entry.mode):
                ename = entry.path.decode("utf-8", "replace")
                raise InvalidDataError(f"remote ledger entry 'ops/{pname}/{ename}' is not a file",
                                       hint="nothing was changed locally")


def _ops_dirs(repo: Repo, commit: bytes) -> dict[bytes, bytes]:
    root = get_tree(repo, commit)
    if b"ops" not in root:
        return {}
    return {i.path: i.sha for i in get_tree(repo, root[b"ops"][1]).items()
            if stat.S_ISDIR(i.mode)}


def _files(repo: Repo, tree: bytes) -> dict[bytes, bytes]:
    return {i.path: i.sha for i in get_tree(repo, tree).items()}


def op_files(repo: Repo, commit: bytes) -> dict[str, bytes]:
    """Every `ops/xx/name` path of a ledger commit -> blob id."""
    out: dict[str, bytes] = {}
    for prefix, sub in _ops_dirs(repo, commit).items():
        for name, blob in _files(repo, sub).items():
            out[f"ops/{prefix.decode()}/{name.decode('utf-8', 'replace')}"] = blob
    return out


def left_out_by_merge(repo: Repo, child: bytes, path: str, blob: bytes) -> bool:
    """Whether a sync merge leaves this op file (absent from `child`) out on purpose.

    True for files that are not trustworthy ops (unreadable, bad id, tampered) or whose
    lamport jumps absurdly past every op of `child`; `looma verify` does not count their
    absence as an append-only violation. A valid op or an unknown-version file is never
    left out, so dropping one is still reported.
    """
    try:
        data = get_blob_data(repo, blob)
    except KeyError:
        return True
    parsed = validate.parse_op_file(path, blob.decode(), data)
    if isinstance(parsed, validate.Rejected):
        return True
    if isinstance(parsed, Op):
        top = max((o.lamport for o in read_tree(repo, child).ops), default=0)
        return parsed.lamport > top + LAMPORT_JUMP_LIMIT
    return False


def _lamport_ceiling(lamports: list[int]) -> int:
    """Largest lamport below the first gap wider than LAMPORT_JUMP_LIMIT (sorted union).

    Anything above such a gap is an absurd jump; judging gaps rather than only the maximum
    also catches several hostile ops that jump together.
    """
    ordered = sorted(set(lamports))
    if not ordered:
        return 0
    prev = 0
    for lam in ordered:
        if lam > prev + LAMPORT_JUMP_LIMIT:
            return prev
        prev = lam
    return prev


def merge_ledgers(repo: Repo, git_dir: Path, local: bytes, remote: bytes | None,
                  author: bytes, message: str) -> LedgerMerge:
    """Union of op files of `local` and `remote`, projections from the fold of the union.

    A path present on both sides with different bytes is a hard InvalidDataError naming both
    blobs (op files are content-addressed, so this is corruption or tampering). Remote files
    that fail validation (bad id, absurd Lamport jump, unreadable) are left out and reported.
    """
    local_read = read_tree(repo, local)
    if remote is None or remote == local:
        ops = {o.id: o for o in local_read.ops}
        out = 0 if remote is not None else len(op_files(repo, local))
        return LedgerMerge(head=local, state=fold(ops.values()), ops=ops, ops_out=out)
    remote_read = read_tree(repo, remote)
    local_dirs, remote_dirs = _ops_dirs(repo, local), _ops_dirs(repo, remote)
    incoming: dict[str, bytes] = {}
    ops_out = 0
    for prefix in sorted(set(local_dirs) | set(remote_dirs)):
        lsub, rsub = local_dirs.get(prefix), remote_dirs.get(prefix)
        if lsub == rsub:
            continue
        lfiles = _files(repo, lsub) if lsub else {}
        rfiles = _files(repo, rsub) if rsub else {}
        for name, blob in rfiles.items():
            path = f"ops/{prefix.decode()}/{name.decode('utf-8', 'replace')}"
            mine = lfiles.get(name)
            if mine is None:
                incoming[path] = blob
            elif mine != blob:
                raise InvalidDataError(
                    f"{path} differs between this clone (blob {mine.decode()}) and the remote "
                    f"(blob {blob.decode()})",
                    hint="op files are content-addressed, so one side is corrupt or was "
                         "tampered with; nothing was written")
        ops_out += sum(1 for name in lfiles if name not in rfiles)

    by_path_op = {f"ops/{o.id[:2]}/{o.id}.yaml": o for o in remote_read.ops}
    by_path_kept = {k.path: k for k in remote_read.kept}
    rejected = [r for r in remote_read.rejected if r.path in incoming]
    local_lams = [o.lamport for o in local_read.ops]
    local_lams += [k.lamport for k in local_read.kept if k.lamport is not None]
    new_lams = [o.lamport for p, o in by_path_op.items() if p in incoming]
    new_lams += [k.lamport for p, k in by_path_kept.items() if p in incoming and k.lamport]
    ceiling = _lamport_ceiling(local_lams + new_lams)
    accepted: dict[str, bytes] = {}
    new_ops: list[Op] = []
    kept_in = 0
    for path, blob in incoming.items():
        op, kept = by_path_op.get(path), by_path_kept.get(path)
        lam = op.lamport if op is not None else (kept.lamport if kept is not None else None)
        if op is None and kept is None:
            continue  # rejected by read_tree (already listed with its reason)
        if lam is not None and lam > ceiling:
            rejected.append(validate.Rejected(
                path, path.rsplit("/", 1)[-1].removesuffix(".yaml"),
                f"lamport {lam} jumps more than {LAMPORT_JUMP_LIMIT} past the other ops "
                f"({ceiling})"))
            continue
        accepted[path] = blob
        if op is not None:
            new_ops.append(op)
        else:
            kept_in += 1

    ops = {o.id: o for o in [*local_read.ops, *new_ops]}
    state = fold(ops.values())
    objects: list[ShaFile] = []
    root_id = _union_tree(repo, local, local_dirs, accepted, state, objects)
    local_tree = repo[local].tree  # type: ignore[attr-defined]
    remote_tree = repo[remote].tree  # type: ignore[attr-defined]
    result = LedgerMerge(head=local, state=state, ops=ops, ops_in=len(accepted),
                         kept_in=kept_in, ops_out=ops_out, rejected=rejected)
    remote_behind = is_ancestor(git_dir, remote, local)
    if root_id == local_tree and remote_behind:
        return result
    # A fresh clone's own `looma init` commit holds no ops: adopting the remote loses nothing.
    local_behind = not remote_behind and (not local_dirs or is_ancestor(git_dir, local, remote))
    if root_id == remote_tree and local_behind:
        result.head = remote  # fast-forward
        return result
    # both heads are parents, so pushing this is a fast-forward for the remote
    parents = [local] if remote_behind else [remote] if local_behind else [local, remote]
    commit = make_commit(root_id, parents, message, author)
    objects.append(commit)
    result.head, result.objects = bytes(commit.id), objects
    return result


def _union_tree(repo: Repo, local: bytes, local_dirs: dict[bytes, bytes],
                accepted: dict[str, bytes], state: LedgerState, objects: list[Any]) -> bytes:
    """Root tree: format.yaml, local ops/ plus `accepted`, projections of `state`."""
    from dulwich.objects import Blob, Tree

    by_prefix: dict[bytes, dict[bytes, bytes]] = {}
    for path, blob_id in accepted.items():
        _, pfx, fname = path.split("/", 2)
        by_prefix.setdefault(pfx.encode(), {})[fname.encode()] = blob_id
    ops_tree = Tree()
    for prefix, sub in local_dirs.items():
        if prefix not in by_prefix:
            ops_tree.add(prefix, stat.S_IFDIR, sub)  # type: ignore[arg-type]
    for prefix, extra in by_prefix.items():
        t = Tree()
        base = _files(repo, local_dirs[prefix]) if prefix in local_dirs else {}
        for name, file_id in {**base, **extra}.items():
            t.add(name, FILE_MODE, file_id)  # type: ignore[arg-type]
        objects.append(t)
        ops_tree.add(prefix, stat.S_IFDIR, t.id)
    objects.append(ops_tree)
    root = Tree()
    fmt = Blob.from_string(FORMAT_FILE)
    objects.append(fmt)
    root.add(b"format.yaml", FILE_MODE, fmt.id)
    root.add(b"ops", stat.S_IFDIR, ops_tree.id)
    subtrees: dict[bytes, Tree] = {}
    for rel, data in projection_files(state).items():
        if "/" not in rel:
            continue
        top, fname = rel.split("/", 1)
        pblob = Blob.from_string(data)
        objects.append(pblob)
        subtrees.setdefault(top.encode(), Tree()).add(fname.encode(), FILE_MODE, pblob.id)
    for topb, t in subtrees.items():
        objects.append(t)
        root.add(topb, stat.S_IFDIR, t.id)
    objects.append(root)
    return bytes(root.id)


def merge_notes(repo: Repo, git_dir: Path, state: LedgerState, local: bytes | None,
                remote: bytes | None, author: bytes, message: str) -> NotesMerge:
    """Notes regenerated from `state`, committed on top of both the local and remote notes.

    A note on a commit this clone lacks (a shallow clone, a teammate's commit not fetched) is
    carried over unchanged from the remote (else from the local notes), never regenerated
    and never dropped: this clone cannot check that commit, a clone that has it will.
    """
    from dulwich.objects import Blob

    remote_map = read_notes_map(repo, remote) if remote else {}
    local_map = read_notes_map(repo, local) if local else {}
    store: Any = repo.object_store
    entries: dict[str, bytes] = {}
    objects: list[Any] = []
    desired = note_texts(state)
    for sha in sorted(set(desired) | set(remote_map) | set(local_map)):
        try:
            present = len(sha) == 40 and bool(bytes.fromhex(sha)) and sha.encode() in store
        except ValueError:
            present = False
        if not present:
            kept = remote_map.get(sha) or local_map.get(sha)
            if kept is not None:
                entries[sha] = kept
            continue
        if sha in desired:
            blob = Blob.from_string(desired[sha])
            entries[sha] = blob.id
            objects.append(blob)
    if local is None and remote is None and not entries:
        return NotesMerge(None)
    tree_id = build_notes_tree(repo, entries, fanout_level(len(entries)), None, None, objects)
    tree_of = {h: repo[h].tree for h in (local, remote) if h is not None}  # type: ignore[attr-defined]
    if local is not None and tree_of[local] == tree_id and (
            remote is None or is_ancestor(git_dir, remote, local)):
        return NotesMerge(local, notes=len(entries))
    if remote is not None and tree_of[remote] == tree_id and (
            local is None or is_ancestor(git_dir, local, remote)):
        return NotesMerge(remote, notes=len(entries))
    parents = [h for h in (local, remote) if h is not None]
    if len(parents) == 2 and is_ancestor(git_dir, parents[1], parents[0]):
        parents = parents[:1]
    elif len(parents) == 2 and is_ancestor(git_dir, parents[0], parents[1]):
        parents = parents[1:]
    commit = make_commit(tree_id, parents, message, author)
    objects.append(commit)
    return NotesMerge(bytes(commit.id), objects, len(entries))
