"""The persistent fold: the folded ledger at one ledger head, kept in the local state dir.

Every process that reads the ledger (each hook drain after a commit, `status`, `resume`'s
refresh, an ingest's pass) used to fold every op again: read each op file, parse it, apply it,
derive every WorkItem. The fold is a pure function of the op files at a ledger commit, so it is
kept here keyed by that commit: a process whose head matches loads it in one read, and a head
that only added ops after it (this clone's own appends, ops that sort after every folded one)
folds only those new ops on top of it (`store/ledger_ref.py` decides). A sync that brings a
teammate's older-sorting ops moves the head to a commit the entry cannot reach that way, so the
next reader folds in full and replaces the entry.

The file is `<git-common-dir>/looma/fold-cache`: a header line (format, code fingerprint,
head), a small pickle of what the fold says of the commits it constrains (`CommitFacts`: all
the drain's link step asks, read without the entry), a pickle of the entry without its
memories, and the memories (`store/fold_lazy.py`: pickled per WorkItem, unpickled when
read). It is local like store.db (never shared, outside every ref) and written atomically
(temp file + rename).
An entry written by another version of looma's code (the fold's rules may differ) is
ignored: the fingerprint covers the package's source files. Pickle is safe here for the same
reason store.db and .git/hooks are: only this user's own processes write the state dir.

An append (a drain's one `commit.link`) does not rewrite that file (a pickle of the whole fold,
~9 MB at 5,000 sessions, ~0.1 CPU-s to dump): it appends one step to `fold-cache.delta`
(`store/fold_delta.py`: the ops it folded and what its commit changed in the tree), and a
reader replays the steps on top of the entry. A full save (a reader's fold, every
`MAX_STEPS`-th append) replaces the entry and drops the steps.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Loads and saves run with the cyclic collector paused: unpickling the fold (~100,000
# containers at 5,000 sessions) otherwise triggers collections that traverse it as it grows
# (~40% of the load: 0.10 -> 0.06 CPU-s); nothing it builds is garbage.
from looma_git.store.gcpause import paused

if TYPE_CHECKING:
    from looma_git.ledger import validate
    from looma_git.ledger.fold import Folder
    from looma_git.store.ledger_tree import LedgerTree

FILE_NAME = "fold-cache"
_FORMAT = b"looma-fold 4"
_MAX_BYTES = 1024 * 1024 * 1024


@dataclass
class Entry:
    """The fold at `head`, and what the next reader or writer needs besides it."""

    head: bytes  # the ledger commit (40 hex, as bytes)
    folder: Folder  # finished: its state is the fold of every effective op at `head`
    max_lamport: int  # of every op file, valid or kept (the next op's clock starts above it)
    count: int  # op files read (valid, kept and rejected)
    last_key: tuple[int, str]  # the largest (lamport, id) folded: newer ops may fold on top
    ops_tree: dict[bytes, bytes]  # ops/<xx> name -> subtree id at `head` (the incremental diff)
    kept: list[validate.KeptFile] = field(default_factory=list)
    rejected: list[validate.Rejected] = field(default_factory=list)
    # whether the projections in `head`'s tree are exactly this fold's (this code wrote them):
    # the next append then renders only what its ops change
    projections_match: bool = False
    tree: LedgerTree | None = None  # `head`'s tree as the next append patches it
    valid_max: int = 0  # the largest lamport of a valid op (the jump rule's bound)
    dangling: frozenset[str] = frozenset()  # ids an undo names that are not here (yet)


@dataclass(frozen=True)
class CommitFacts:
    """What the fold at one head says of one commit that a link must honour."""

    unlinked: tuple[str, ...] = ()  # WorkItems a user unlinked it from
    settled: bool = False  # linked to a part of a split by files (that decided its part)


def commit_facts_of(state: Any) -> dict[str, tuple[tuple[str, ...], bool]]:
    """`CommitFacts` of every commit a LedgerState constrains, as plain tuples (small: user
    unlinks and the commits of splits by files, never every link)."""
    parts = state.constraints.partitions
    settled = {sha for sha, wi in state.links if (parts.get(wi) or {}).get("by") == "files"}
    unlinked: dict[str, list[str]] = {}
    for sha, wi in state.constraints.unlinked:
        unlinked.setdefault(sha, []).append(wi)
    return {sha: (tuple(sorted(unlinked.get(sha, ()))), sha in settled)
            for sha in unlinked.keys() | settled}


_FINGERPRINT: bytes | None = None


def fingerprint() -> bytes:
    """A hash of looma's own source files (name, size, mtime): a fold from other code is not
    reused. Computed once per process (~300 stats)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        stack = [root]
        while stack:
            d = stack.pop()
            try:
                entries = sorted(os.scandir(d), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append(Path(e.path))
                elif e.name.endswith(".py"):
                    with contextlib.suppress(OSError):
                        st = e.stat()
                        h.update(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _FINGERPRINT = h.hexdigest()[:32].encode()
    return _FINGERPRINT


def _header(head: bytes) -> bytes:
    return b"%s %s %s\n" % (_FORMAT, fingerprint(), head)


def load(state_dir: Path) -> Entry | None:
    """The stored entry, or None (absent, damaged, from other code)."""
    path = state_dir / FILE_NAME
    try:
        with open(path, "rb") as fh:
            line = fh.readline(256)
            parts = line.split()
            if len(parts) != 4 or b" ".join(parts[:2]) != _FORMAT \
                    or parts[2] != fingerprint():
                return None
            if os.fstat(fh.fileno()).st_size > _MAX_BYTES:
                return None
            pickle.load(fh)  # the commit facts (load_facts)
            with paused():
                entry = pickle.load(fh)
            memories = pickle.load(fh)
        if not isinstance(entry, Entry) or entry.head != parts[3]:
            return None
        from looma_git.store import fold_lazy

        entry.folder.state.memories = fold_lazy.load(memories)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError,
            IndexError, TypeError, ValueError):
        return None
    from looma_git.store import fold_delta

    with paused():
        return fold_delta.replay(state_dir, entry)


def save(state_dir: Path, entry: Entry) -> None:
    """Replace the stored entry (best effort: a cache that cannot be written costs a re-fold)."""
    if not state_dir.is_dir():
        return  # never create the state dir just for a cache
    from looma_git.store import fold_lazy

    tmp = state_dir / f"{FILE_NAME}.{os.getpid()}.tmp"
    state = entry.folder.state
    memories = state.memories
    try:
        with open(tmp, "wb") as fh:
            fh.write(_header(entry.head))
            pickle.dump(commit_facts_of(state), fh, protocol=pickle.HIGHEST_PROTOCOL)
            state.memories = {}  # stored apart, after the entry
            try:
                pickle.dump(entry, fh, protocol=pickle.HIGHEST_PROTOCOL)
            finally:
                state.memories = memories
            pickle.dump(fold_lazy.dump(memories), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, state_dir / FILE_NAME)
        from looma_git.store import fold_delta

        fold_delta.drop(state_dir)  # its steps extend the entry this one replaced
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        with contextlib.suppress(OSError):
            tmp.unlink()


def load_facts(state_dir: Path, head: bytes, shas: Any) -> dict[str, CommitFacts] | None:
    """What the stored fold says of these commits when it is the fold at `head` (this code's),
    else None; reads the header and the small facts pickle only, never the entry."""
    try:
        with open(state_dir / FILE_NAME, "rb") as fh:
            parts = fh.readline(256).split()
            if len(parts) != 4 or b" ".join(parts[:2]) != _FORMAT \
                    or parts[2] != fingerprint():
                return None
            if parts[3] == head:
                facts = pickle.load(fh)
            else:  # the head of a step appended since
                from looma_git.store import fold_delta

                facts = fold_delta.facts_at(state_dir, parts[3], head)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError,
            IndexError, TypeError, ValueError):
        return None
    if not isinstance(facts, dict):
        return None
    return {sha: CommitFacts(*facts[sha]) if sha in facts else CommitFacts() for sha in shas}


def facts_at_head(common_dir: Path, state_dir: Path, shas: Any
                  ) -> dict[str, CommitFacts] | None:
    """What the fold at the ledger's head says of these commits (user unlinks, splits by
    files), from the stored facts without loading the fold; None when the stored fold is not
    at the head (then fold the ledger: that brings it there)."""
    from looma_git.store import git
    from looma_git.store.refnames import LEDGER_REF

    found = git.resolve_ref(common_dir, LEDGER_REF)
    if not found:
        return {sha: CommitFacts() for sha in shas}  # no ledger: nothing is known of them
    return load_facts(state_dir, found.encode(), shas)


def drop(state_dir: Path) -> None:
    """Forget the stored entry (tests, and a reader that found it inconsistent)."""
    with contextlib.suppress(OSError):
        (state_dir / FILE_NAME).unlink()
    from looma_git.store import fold_delta

    fold_delta.drop(state_dir)


def peek_head(state_dir: Path) -> bytes | None:
    """The head the stored entry is for (after the steps appended to it), from the headers
    alone (no unpickling)."""
    base = base_head(state_dir)
    if base is None:
        return None
    from looma_git.store import fold_delta

    return fold_delta.last_head(state_dir, base)


def base_head(state_dir: Path) -> bytes | None:
    """The head the stored entry itself is for (before any step), from its header."""
    try:
        with open(state_dir / FILE_NAME, "rb") as fh:
            parts = fh.readline(256).split()
    except OSError:
        return None
    return parts[3] if len(parts) == 4 else None


def copy_folder(folder: Any) -> Any:
    """A deep copy of a folder (one pickle round trip, faster than copy.deepcopy)."""
    data = pickle.dumps(folder, protocol=pickle.HIGHEST_PROTOCOL)
    with paused():
        return pickle.loads(data)
