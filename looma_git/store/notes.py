"""refs/notes/looma: one batched, CAS-updated writer with git's fanout, and note reads."""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from typing import Any

from looma_git.gitrepo import RepoPaths
from looma_git.ledger.projections import note_texts
from looma_git.ledger.state import LedgerState
from looma_git.store.locking import cas_update
from looma_git.store.objects import RawObject, raw_object
from looma_git.store.refnames import NOTES_REF_B
from looma_git.store.repo import (
    get_blob_data,
    get_tree,
    make_commit,
    open_repo,
    ref_value,
    write_objects,
)

NOTES_REF = NOTES_REF_B
FILE_MODE = 0o100644


@dataclass
class NotesReport:
    """What a notes sync did."""

    written: int = 0
    removed: int = 0
    skipped_missing: list[str] = field(default_factory=list)
    commit: bytes | None = None

    @property
    def warnings(self) -> list[str]:
        return [f"note for missing commit {s} skipped" for s in self.skipped_missing]


def fanout_level(count: int) -> int:
    """git fast-import's rule: flat below 256 notes, one level below 65,536, then two."""
    level = 0
    while count > 255:
        count //= 256
        level += 1
    return level


# Notes commits are content-addressed, so their maps never go stale: every append syncs the
# notes ref, and re-walking its fanout trees (a pack lookup each) dominated a small batch.
_MAPS: dict[bytes, dict[str, bytes]] = {}
_MAPS_MAX = 8
# Commits seen to exist stay existing for the life of a process (for the note skip check).
_PRESENT: set[str] = set()
_PRESENT_MAX = 1_000_000


def read_notes_map(repo: Any, commit: bytes | None) -> dict[str, bytes]:
    """sha -> note blob id for a notes commit, whatever fanout it was written with."""
    out: dict[str, bytes] = {}
    if commit is None:
        return out
    cached = _MAPS.get(commit)
    if cached is not None:
        return dict(cached)

    def walk(tree_sha: bytes, prefix: str) -> None:
        for item in get_tree(repo, tree_sha).items():
            name = prefix + item.path.decode("ascii", "replace")
            if stat.S_ISDIR(item.mode):
                walk(item.sha, name)
            elif len(name) == 40:
                out[name] = item.sha

    walk(commit, "")
    _remember_map(commit, out)
    return dict(out)


def _remember_map(commit: bytes, mapping: dict[str, bytes]) -> None:
    if len(_MAPS) >= _MAPS_MAX:
        _MAPS.pop(next(iter(_MAPS)))
    _MAPS[commit] = dict(mapping)


def _present(store: Any, sha: str) -> bool:
    if sha in _PRESENT:
        return True
    try:
        found = len(sha) == 40 and bool(bytes.fromhex(sha)) and sha.encode() in store
    except ValueError:
        return False
    if found:
        if len(_PRESENT) >= _PRESENT_MAX:
            _PRESENT.clear()
        _PRESENT.add(sha)
    return found


def _build(repo: Any, entries: dict[str, bytes], level: int, old_root: Any,
           old_level: int | None, objects: list[Any]) -> bytes:
    """Root tree id for `entries`; at an unchanged level, untouched subtrees are reused."""
    from dulwich.objects import Tree

    if level == 0:
        root = Tree()
        for sha, blob in entries.items():
            root.add(sha.encode(), FILE_MODE, blob)  # type: ignore[arg-type]
        objects.append(root)
        return bytes(root.id)
    groups: dict[str, dict[str, bytes]] = {}
    for sha, blob in entries.items():
        groups.setdefault(sha[:2], {})[sha[2:]] = blob
    root = Tree()
    reuse = old_root is not None and old_level == level
    for prefix, sub in groups.items():
        if reuse and prefix.encode() in old_root:
            old_sub = old_root[prefix.encode()][1]
            existing = {i.path.decode("ascii", "replace"): i.sha
                        for i in get_tree(repo, old_sub).items()}
            if level == 1 and existing == sub:
                root.add(prefix.encode(), stat.S_IFDIR, old_sub)
                continue
        child = _build(repo, sub, level - 1, None, None, objects)
        root.add(prefix.encode(), stat.S_IFDIR, child)  # type: ignore[arg-type]
    objects.append(root)
    return bytes(root.id)


@dataclass(frozen=True)
class Touched:
    """The append a notes sync follows: ledger `parent` -> `head`, and the commits whose
    notes it may have changed (None: unknown, sync every note)."""

    parent: str | None
    head: str
    shas: frozenset[str] | None = None


def sync_notes(paths: RepoPaths, state: LedgerState, *, author: bytes = b"looma <looma@localhost>",
               touched: Touched | None = None) -> NotesReport:
    """Make refs/notes/looma equal the projection of `state`'s live links (CAS, one commit);
    notes on commits this clone does not have are kept unchanged. After an append
    (`touched`) whose parent's projection the notes ref is known to be, only the notes of the
    commits it touched are rewritten (store/notes_delta.py)."""
    from looma_git.store import gcpause, notes_delta

    report = NotesReport()
    mark = notes_delta.read_marker(paths.state_dir) if touched and touched.shas is not None \
        else None
    if mark is not None and (touched is None or mark.ledger != touched.parent):
        mark = None
    done: list[notes_delta.Synced | None] = [None]
    # (a full sync renders a note per linked commit beside whatever heap the caller holds)
    with open_repo(paths) as repo, gcpause.paused():
        store: Any = repo.object_store

        def build(old: bytes | None) -> bytes | None:
            done[0] = None
            if mark is not None and touched is not None and old is not None \
                    and old.decode() == mark.notes:
                quick = _patch(repo, store, old, mark, touched, state, author, report, done)
                if quick is not None:
                    return quick
            return _full(repo, store, old, state, author, report, done, touched)

        _, report.commit = cas_update(repo, NOTES_REF, build, message=b"looma: notes")
    notes_delta.write_marker(paths.state_dir, done[0])
    return report


def _full(repo: Any, store: Any, old: bytes | None, state: LedgerState, author: bytes,
          report: NotesReport, done: list[Any], touched: Touched | None) -> bytes | None:
    """Every note rendered and compared: the notes commit `state` projects to."""
    from looma_git.store.notes_delta import Synced

    blobs: dict[str, RawObject] = {}
    report.skipped_missing = []
    for sha, text in note_texts(state).items():
        if not _present(store, sha):
            report.skipped_missing.append(sha)
            continue
        blobs[sha] = raw_object(b"blob", text)
    current = read_notes_map(repo, old)
    desired = {sha: b.id for sha, b in blobs.items()}
    # A note on a commit this clone lacks (shallow clone, unfetched teammate work)
    # stays as it is: only a clone that has the commit may rewrite or drop it.
    for sha, blob_id in current.items():
        if sha not in desired and not _present(store, sha):
            desired[sha] = blob_id
    if current == desired:
        if touched is not None and old is not None:
            done[0] = Synced(touched.head, old.decode(), len(desired),
                             tuple(report.skipped_missing))
        return old
    objects: list[Any] = [b for sha, b in blobs.items() if current.get(sha) != b.id]
    old_root = get_tree(repo, old) if old else None
    old_level = _level_of(old_root) if old_root is not None else None
    tree_id = _build(repo, desired, fanout_level(len(desired)), old_root, old_level, objects)
    commit = make_commit(tree_id, [old] if old else [], "looma: notes\n", author)
    objects.append(commit)
    write_objects(repo, objects)
    report.written = sum(1 for s in desired if current.get(s) != desired[s])
    report.removed = sum(1 for s in current if s not in desired)
    _remember_map(bytes(commit.id), desired)
    if touched is not None:
        done[0] = Synced(touched.head, commit.id.decode(), len(desired),
                         tuple(report.skipped_missing))
    return bytes(commit.id)


def _patch(repo: Any, store: Any, old: bytes, mark: Any, touched: Touched, state: LedgerState,
           author: bytes, report: NotesReport, done: list[Any]) -> bytes | None:
    """The notes commit after only `touched.shas` (and the commits lacked before) changed,
    or None when a full sync must decide (the fanout level would change)."""
    from looma_git.store.notes_delta import Synced, note_at, patch_tree

    root = get_tree(repo, old)
    level = _level_of(root)
    if level != fanout_level(mark.count):
        return None
    shas = sorted(set(touched.shas or ()) | set(mark.missing))
    texts = note_texts(state, shas)
    changes: dict[str, bytes | None] = {}
    objects: list[Any] = []
    missing: list[str] = []
    for sha in shas:
        text = texts.get(sha)
        if not _present(store, sha):
            if text is not None:
                missing.append(sha)
            continue  # a note on a commit this clone lacks stays as it is
        blob = raw_object(b"blob", text) if text is not None else None
        if note_at(repo, root, level, sha) != (blob.id if blob else None):
            changes[sha] = blob.id if blob else None
            if blob is not None:
                objects.append(blob)
    report.skipped_missing = missing
    if not changes:
        done[0] = Synced(touched.head, old.decode(), mark.count, tuple(missing))
        return old
    tree_id, delta = patch_tree(repo, bytes(root.id), level, changes, objects)
    count = mark.count + delta
    if tree_id is None or fanout_level(count) != level:
        return None
    commit = make_commit(tree_id, [old], "looma: notes\n", author)
    objects.append(commit)
    write_objects(repo, objects)
    report.written = sum(1 for b in changes.values() if b is not None)
    report.removed = len(changes) - report.written
    done[0] = Synced(touched.head, commit.id.decode(), count, tuple(missing))
    return bytes(commit.id)


def _level_of(root: Any) -> int:
    for item in root.items():
        name = item.path.decode("ascii", "replace")
        return 0 if len(name) == 40 else (1 if len(name) == 2 and stat.S_ISDIR(item.mode) else -1)
    return 0


def read_note(paths: RepoPaths, sha: str) -> str | None:
    """The looma note attached to commit `sha`, or None."""
    with open_repo(paths) as repo:
        head = ref_value(repo, NOTES_REF)
        blob = read_notes_map(repo, head).get(sha)
        return get_blob_data(repo, blob).decode("utf-8", "replace") if blob else None


def notes_map(paths: RepoPaths) -> dict[str, str]:
    """Every note: sha -> text (used by verify)."""
    with open_repo(paths) as repo:
        head = ref_value(repo, NOTES_REF)
        return {sha: get_blob_data(repo, b).decode("utf-8", "replace")
                for sha, b in read_notes_map(repo, head).items()}
