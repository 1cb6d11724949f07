"""The fold cache's appended steps: each append's ops and tree changes, replayed on its entry.

A drain's link step appends one `commit.link` op; re-pickling the whole fold for it
(`fold_cache.save`) cost ~0.1 CPU-s at 5,000 sessions and grew with the history. Instead the
append writes one step to `<git-common-dir>/looma/fold-cache.delta`: the ops it folded, what
its ledger commit changed in the tree (the `ops/<xx>` entries, the root, the projection
entries it re-rendered) and the commit facts at its head (`fold_cache.CommitFacts`, read by a
drain without loading the fold). A reader loads the entry and replays the steps in order:
each step's ops are applied and finished exactly as the appender applied and finished them
(the fold derives per batch), so the result is the entry the appender held.

The file: a header `looma-fold-delta 1 <fingerprint> <base head>` naming the entry it
extends, then per step a line `S <parent> <head> <facts bytes> <step bytes>` and two pickles.
A step is replayed only when its parent is the head reached so far, so a torn write, a delta
left beside a replaced entry or steps of two racing writers can only stop the replay early
(the reader then folds the rest as before), never give another fold. After `MAX_STEPS` steps
(or `MAX_BYTES`) the next append saves the whole entry again, which drops the steps.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looma_git.store import fold_cache
from looma_git.store.ledger_tree import LedgerTree, entry_is_dir, entry_sha
from looma_git.store.objects import write_all

if TYPE_CHECKING:
    from looma_git.ledger.fold import Folder
    from looma_git.ledger.ops import Op

FILE_NAME = "fold-cache.delta"
_FORMAT = b"looma-fold-delta 1"
# A reader replays every step: each costs a fold `finish` (~2 ms at 5,000 sessions) and its
# ops' fold steps. Past these bounds (a pass's batch of hundreds of ops, a cold ingest's
# thousands) the append saves the whole entry instead.
MAX_STEPS = 16
MAX_OPS = 64  # ops in all the steps
MAX_BYTES = 8 * 1024 * 1024
MIN_BYTES = 64 * 1024  # the delta may grow to this, or to a quarter of the entry's file


@dataclass
class Step:
    """One append: its ops and what its ledger commit changed in the entry's tree."""

    ops: list[Op]
    ops_entries: dict[bytes, bytes]  # the ops/<xx> lines it rewrote
    root: dict[bytes, bytes]
    plain: set[bytes]
    projections: dict[bytes, dict[bytes, bytes]]  # per projection dir: the lines it changed
    whole: frozenset[bytes] = frozenset()  # projection dirs it rendered in full
    tree: LedgerTree | None = None  # the whole tree, when the entry had none at the parent


@dataclass
class Changes:
    """What one ledger commit changed in the tree an append patches (`ledger_ref._commit`)."""

    ops: list[bytes]  # the ops/<xx> prefixes it wrote to
    projections: dict[bytes, dict[bytes, bytes]] = field(default_factory=dict)
    whole: set[bytes] = field(default_factory=set)  # projection dirs rendered in full


def step_of(ops: list[Op], tree: LedgerTree, entry: fold_cache.Entry, changes: Changes,
            had_tree: bool) -> Step:
    """The step of an append whose commit has `tree` and whose fold-cache entry is `entry`
    (`had_tree`: whether the stored fold held the parent's tree, which the step then patches)."""
    kept = entry.tree
    return Step(ops, {p: tree.ops[p] for p in changes.ops}, dict(tree.root),
                set(kept.plain) if kept else set(), changes.projections,
                frozenset(changes.whole), None if had_tree else kept)


def next_entry(base: fold_cache.Entry | None, head: bytes, ops: list[Op], folder: Folder,
                tree: LedgerTree) -> fold_cache.Entry | None:
    """The fold-cache entry of the commit an append wrote on top of `base`'s head."""
    if base is None or not ops:
        return None
    top = max(o.lamport for o in ops)
    keys = max(o.sort_key for o in ops)
    # the tree as the next append patches it, without the ops/<xx> subtrees it loaded (those
    # are read again on demand: keeping them would grow the cache with every op)
    kept_tree = LedgerTree(tree.commit, dict(tree.ops), {}, tree.projections, tree.root,
                           {p for p in tree.plain if not p.startswith(b"ops/")})
    return fold_cache.Entry(
        head=head, folder=folder, max_lamport=max(base.max_lamport, top),
        count=base.count + len(ops), last_key=max(base.last_key, keys),
        ops_tree={n: entry_sha(line) for n, line in tree.ops.items() if entry_is_dir(line)},
        kept=base.kept, rejected=base.rejected, projections_match=True, tree=kept_tree,
        valid_max=max(base.valid_max, top), dangling=base.dangling)


def _header(base: bytes) -> bytes:
    return b"%s %s %s\n" % (_FORMAT, fold_cache.fingerprint(), base)


def _records(state_dir: Path, base: bytes) -> list[tuple[bytes, bytes, int, int, int, int]]:
    """(parent, head, offset, facts length, step length, ops) of each whole step of the delta
    extending `base`, in file order up to the first one that does not continue the chain."""
    out: list[tuple[bytes, bytes, int, int, int, int]] = []
    try:
        with open(state_dir / FILE_NAME, "rb") as fh:
            if fh.readline(256) != _header(base):
                return out
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_BYTES * 2:
                return out
            at = base
            while True:
                parts = fh.readline(256).split()
                if len(parts) != 6 or parts[0] != b"S" or parts[1] != at:
                    return out
                nf, ns, nops = int(parts[3]), int(parts[4]), int(parts[5])
                offset = fh.tell()
                if offset + nf + ns > size:
                    return out  # cut short (a crash mid-append)
                out.append((parts[1], parts[2], offset, nf, ns, nops))
                at = parts[2]
                fh.seek(nf + ns, os.SEEK_CUR)
    except (OSError, ValueError):
        return out


def last_head(state_dir: Path, base: bytes) -> bytes:
    """The head the entry at `base` reaches with its steps replayed."""
    recs = _records(state_dir, base)
    return recs[-1][1] if recs else base


def facts_at(state_dir: Path, base: bytes, head: bytes) -> Any:
    """The commit facts a step stored for `head` (None: no step reaches it)."""
    for _, h, offset, nf, _, _ in _records(state_dir, base):
        if h == head:
            with open(state_dir / FILE_NAME, "rb") as fh:
                fh.seek(offset)
                return pickle.loads(fh.read(nf))
    return None


def replay(state_dir: Path, entry: fold_cache.Entry) -> fold_cache.Entry | None:
    """`entry` with the steps appended since it was saved folded on top (in place); None when
    a step failed half applied (the entry is then no fold at all: the reader folds anew)."""
    recs = _records(state_dir, entry.head)
    if not recs:
        return entry
    steps: list[tuple[bytes, bytes, object]] = []
    try:
        with open(state_dir / FILE_NAME, "rb") as fh:
            for parent, head, offset, nf, ns, _ in recs:
                fh.seek(offset + nf)
                steps.append((parent, head, pickle.loads(fh.read(ns))))
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError,
            IndexError, TypeError, ValueError):
        pass  # replay the steps read whole: the reader folds the rest as before
    for parent, head, step in steps:
        if not isinstance(step, Step):
            break
        try:
            if not _apply(entry, parent, head, step):
                break  # the entry stays at the last step replayed whole
        except Exception:  # a step's ops raised in the fold: never hand out that entry
            return None
    return entry


def _apply(entry: fold_cache.Entry, parent: bytes, head: bytes, step: Step) -> bool:
    """Fold one step on top of `entry` (at `parent`): what `next_entry` built."""
    if entry.head != parent or not step.ops:
        return False
    tree = entry.tree
    if step.tree is None and (tree is None or tree.commit != parent):
        return False
    if step.tree is not None:
        tree = step.tree
    else:
        assert tree is not None
        projections = dict(tree.projections)
        for name, lines in step.projections.items():
            projections[name] = dict(lines) if name in step.whole \
                else {**projections.get(name, {}), **lines}
        tree = LedgerTree(head, {**tree.ops, **step.ops_entries}, {}, projections,
                          dict(step.root), set(step.plain))
    folder = entry.folder
    folder.apply(step.ops)
    folder.finish()
    entry.head = head
    entry.count += len(step.ops)
    top = max(o.lamport for o in step.ops)
    entry.max_lamport = max(entry.max_lamport, top)
    entry.valid_max = max(entry.valid_max, top)
    entry.last_key = max(entry.last_key, max(o.sort_key for o in step.ops))
    entry.ops_tree = {n: entry_sha(line) for n, line in tree.ops.items() if entry_is_dir(line)}
    entry.projections_match = True
    entry.tree = tree
    return True


def save_step(state_dir: Path, parent: bytes | None, entry: fold_cache.Entry, step: Step) -> None:
    """Record the append that moved the stored fold from `parent` to `entry.head`: one step
    appended when the stored fold is at `parent`, else (or when the delta is long) the whole
    entry saved. Best effort, like every cache write."""
    if not state_dir.is_dir():
        return
    base = fold_cache.base_head(state_dir)
    recs = _records(state_dir, base) if base is not None else []
    end = recs[-1][1] if recs else base
    if parent is None or end != parent or len(recs) >= MAX_STEPS \
            or sum(r[5] for r in recs) + len(step.ops) > MAX_OPS:
        fold_cache.save(state_dir, entry)
        return
    try:
        facts = pickle.dumps(fold_cache.commit_facts_of(entry.folder.state),
                             protocol=pickle.HIGHEST_PROTOCOL)
        body = pickle.dumps(step, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        fold_cache.save(state_dir, entry)
        return
    record = b"S %s %s %d %d %d\n" % (parent, entry.head, len(facts), len(body),
                                       len(step.ops)) + facts + body
    path = state_dir / FILE_NAME
    try:
        entry_size = (state_dir / fold_cache.FILE_NAME).stat().st_size
        limit = min(MAX_BYTES, max(MIN_BYTES, entry_size // 4))
        have = path.stat().st_size if recs else len(_header(parent))
        if have + len(record) > limit:
            fold_cache.save(state_dir, entry)
        elif recs:
            # appended with one write; a reader seeing it half written stops before it
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                write_all(fd, record)
            finally:
                os.close(fd)
        else:  # a new delta, whole or not at all
            tmp = state_dir / f"{FILE_NAME}.{os.getpid()}.tmp"
            tmp.write_bytes(_header(parent) + record)
            os.replace(tmp, path)
    except OSError:
        drop(state_dir)  # a step half recorded is never replayed, but start clean


def drop(state_dir: Path) -> None:
    """Forget the steps (the entry they extended was replaced or dropped)."""
    with contextlib.suppress(OSError):
        (state_dir / FILE_NAME).unlink()
