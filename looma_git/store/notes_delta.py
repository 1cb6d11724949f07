"""Bringing refs/notes/looma up to date for the few commits one append touched.

`sync_notes` used to render every live link's note, hash every blob, look every commit up
in the object store and walk the whole fanout tree (~0.06 CPU-s at 5,000 sessions, growing
with the history) after each append, a drain's one `commit.link` included. When the notes
ref is known to be the projection of the ledger commit the append started from, only the
notes of the commits the append touched can differ; those are re-rendered and patched into
the fanout tree (one subtree per commit, the root), which gives the tree a full sync builds.

What is known is recorded in `<git-common-dir>/looma/notes-synced` after every sync: the
ledger head, the notes commit that is its projection, its note count (the fanout level) and
the linked commits this clone lacked (their notes are retried on every sync). Any other notes
commit (a sync merged a teammate's notes, a sync that failed half way) or ledger head means a
full sync, which writes the marker anew.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE_NAME = "notes-synced"
FILE_MODE = 0o100644


@dataclass(frozen=True)
class Synced:
    """What the marker says: notes commit `notes` is the projection of ledger `ledger`."""

    ledger: str
    notes: str
    count: int
    missing: tuple[str, ...] = ()


def read_marker(state_dir: Path) -> Synced | None:
    try:
        parts = (state_dir / FILE_NAME).read_text("ascii").split()
        return Synced(parts[0], parts[1], int(parts[2]), tuple(parts[3:]))
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None


# Linked commits this clone lacks are re-rendered by every quick sync: past this many (a
# shallow clone of a busy team), syncs are full as before.
MAX_MISSING = 256


def write_marker(state_dir: Path, mark: Synced | None) -> None:
    """Record (or with None forget) what the notes ref is the projection of; best effort."""
    path = state_dir / FILE_NAME
    with contextlib.suppress(OSError):
        if mark is None or len(mark.missing) > MAX_MISSING:
            path.unlink(missing_ok=True)
            return
        if not state_dir.is_dir():
            return
        tmp = state_dir / f"{FILE_NAME}.{os.getpid()}.tmp"
        tmp.write_text(" ".join([mark.ledger, mark.notes, str(mark.count), *mark.missing])
                       + "\n", "ascii")
        os.replace(tmp, path)


def patch_tree(repo: Any, root: bytes, level: int, changes: dict[str, bytes | None],
               objects: list[Any], *, top: bool = True) -> tuple[bytes | None, int]:
    """Tree `root` (a notes fanout tree at `level`) with these notes set (blob id) or removed
    (None): (the new tree id, None for a subtree left empty; the change in the note count)."""
    from dulwich.objects import Tree

    from looma_git.store.repo import get_tree

    old = get_tree(repo, root)
    entries = {item.path: (item.mode, item.sha) for item in old.iteritems()}
    delta = 0
    if level == 0:
        for name, blob in changes.items():
            key = name.encode()
            had = key in entries
            if blob is None:
                entries.pop(key, None)
            else:
                entries[key] = (FILE_MODE, blob)
            delta += (blob is not None) - had
    else:
        groups: dict[str, dict[str, bytes | None]] = {}
        for name, blob in changes.items():
            groups.setdefault(name[:2], {})[name[2:]] = blob
        for prefix, sub in groups.items():
            key = prefix.encode()
            current = entries.get(key)
            if current is not None and stat.S_ISDIR(current[0]):
                child, d = patch_tree(repo, current[1], level - 1, sub, objects, top=False)
            else:
                child, d = _new_tree(sub, level - 1, objects)
            delta += d
            if child is None:
                entries.pop(key, None)
            else:
                entries[key] = (stat.S_IFDIR, child)
    if not entries and not top:
        return None, delta
    tree = Tree()
    for name, (mode, sha) in entries.items():
        tree.add(name, mode, sha)
    objects.append(tree)
    return bytes(tree.id), delta


def note_at(repo: Any, root: Any, level: int, sha: str) -> bytes | None:
    """The blob id of `sha`'s note in notes tree `root` (a Tree) at `level`, or None."""
    from looma_git.store.repo import get_tree

    tree, name = root, sha
    for _ in range(level):
        key = name[:2].encode()
        if key not in tree:
            return None
        mode, sub = tree[key]
        if not stat.S_ISDIR(mode):
            return None
        tree, name = get_tree(repo, sub), name[2:]
    key = name.encode()
    return bytes(tree[key][1]) if key in tree else None


def _new_tree(changes: dict[str, bytes | None], level: int, objects: list[Any]
              ) -> tuple[bytes | None, int]:
    from looma_git.store.notes import _build

    notes = {name: blob for name, blob in changes.items() if blob is not None}
    if not notes:
        return None, 0
    return _build(None, notes, level, None, None, objects), len(notes)


# Op kinds whose effect on notes is bounded by their commit targets and the WorkItems the
# fold marks dirty (re-rendered projections): a merge, split, rewrite, false positive or undo
# can move or hide links of WorkItems it does not touch, so their batches sync every note.
_BOUNDED = frozenset({"commit.link", "commit.unlink", "workitem.create", "workitem.update",
                      "workitem.rename", "memory.update", "memory.promote", "memory.reject"})


def touched_commits(ops: list[Any], state: Any, dirty: set[str] | None) -> frozenset[str] | None:
    """The commits whose notes a batch of ops can have changed: those it targets, and every
    commit linked to a WorkItem whose projection it changed (title, liveness); None when that
    is not known (`dirty` None: the fold re-rendered everything)."""
    if dirty is None or any(o.op not in _BOUNDED for o in ops):
        return None
    shas: set[str] = set()
    for o in ops:
        if o.target.type == "commit" and isinstance(o.target.id, str) and o.target.id:
            shas |= {o.target.id, state.resolve_sha(o.target.id)}
    shas |= {sha for sha, wid in state.links if wid in dirty}
    return frozenset(shas)
