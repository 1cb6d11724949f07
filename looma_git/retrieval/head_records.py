"""The live WorkItem records of the ledger head: folded once per head, kept per process and as
a snapshot in the state dir, refreshed by a detached process after system-only writes."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from looma_git.gitrepo import RepoPaths
from looma_git.retrieval.records import ItemRecord, from_ledger
from looma_git.store import git
from looma_git.store.heads import ledger_head


def load_items(paths: RepoPaths) -> tuple[Any, list[ItemRecord]]:
    """The ledger fold and its live WorkItems as retrieval records."""
    from looma_git.store.ledger_ref import LedgerStore

    state = LedgerStore(paths).state()
    return state, from_ledger(state)


# Records per (common dir, ledger head): a process (the MCP server) folds a head once.
_RECORDS: dict[str, tuple[str, list[ItemRecord]]] = {}
# Serving the records of an older head while a background process folds the new one is
# allowed only when every op since is a system op (a commit's drain, a refinery pass), and
# when there are not more of them than this; a person's correction is always folded first.
MAX_STALE_OPS = 2000
# ...and only ops that refresh what exists (a new WorkItem is always folded first).
STALE_OK_OPS = frozenset({"workitem.update", "commit.link", "commit.unlink", "commit.rewrite",
                          "memory.promote", "memory.update"})
REFRESH_LOCK = "records-refresh.lock"
REFRESH_LOCK_TTL_S = 120


def load_records(paths: RepoPaths, head: str | None = None, *, allow_stale: bool = False
                 ) -> list[ItemRecord]:
    """The live WorkItems at the ledger head, without folding the ledger when it has not moved.

    Folding parses every op file (seconds for thousands of ops), so the records of a head are
    kept per process and as a JSON snapshot in the state dir; both are keyed by the head
    commit, which changes with every ledger write (and every sync that brings ops). Right
    after system writes that only refresh existing WorkItems (a commit's drain: links and
    updates) and with `allow_stale` (resume: the fast start), the previous snapshot is served
    and a detached process folds the new head; after a user op or a new WorkItem, and for
    every listing (`work`, `ask`, ...), the fold happens here, first.
    """
    from looma_git.retrieval import snapshot

    head = head or ledger_head(paths)
    key = str(paths.common_dir)
    if head is None:
        return load_items(paths)[1]
    cached = _RECORDS.get(key)
    if cached is not None and cached[0] == head:
        return cached[1]
    items = snapshot.load(paths.state_dir, head)
    if items is None:
        prior = snapshot.load_prior(paths.state_dir)
        if allow_stale and prior is not None and _only_system_ops_since(paths, prior[0], head):
            refresh_in_background(paths)
            return prior[1]
        items = _fold_and_save(paths, head, prior)
    _RECORDS[key] = (head, items)
    return items


def _fold_and_save(paths: RepoPaths, head: str,
                   prior: tuple[str, list[ItemRecord], dict[str, str]] | None
                   ) -> list[ItemRecord]:
    """The records of `head` from its fold, those of WorkItems unchanged since the prior
    snapshot reused (a new session's pass changes a few of hundreds), saved as its snapshot."""
    from looma_git.retrieval import record_patch, snapshot
    from looma_git.store.ledger_ref import LedgerStore

    state = LedgerStore(paths).state()
    items, fps = record_patch.records(state, *(prior[1:] if prior is not None else ([], {})))
    snapshot.save(paths.state_dir, head, items, fps)
    return items


def _only_system_ops_since(paths: RepoPaths, old: str, new: str) -> bool:
    """Every op file added between two ledger commits is a system op that only refreshes
    existing WorkItems (an op whose actor line does not say `kind: system` counts as a
    person's)."""
    import re

    proc = git.run(None, "diff-tree", "-r", "--name-only", "--diff-filter=AM", old, new,
                   "--", "ops/", git_dir=paths.common_dir)
    if proc.returncode != 0:
        return False
    names = [n for n in proc.stdout.splitlines() if n.endswith(".yaml")]
    if len(names) > MAX_STALE_OPS:
        return False
    if not names:
        return True
    batch = git.run(None, "cat-file", "--batch", git_dir=paths.common_dir,
                    input="".join(f"{new}:{n}\n" for n in names))
    if batch.returncode != 0:
        return False
    actors = re.findall(r"^actor:(.*)$", batch.stdout, re.M)
    kinds = re.findall(r"^op:\s*(\S+)\s*$", batch.stdout, re.M)
    return len(actors) == len(kinds) == len(names) and all(
        re.search(r"\bkind:\s*system\b", a) for a in actors) and all(
        k in STALE_OK_OPS for k in kinds)


def refresh_in_background(paths: RepoPaths) -> bool:
    """Start one detached process that folds the current ledger head into the records
    snapshot (at most one at a time per clone); False when one is already running."""
    import sys

    lock = paths.state_dir / REFRESH_LOCK
    try:
        if time.time() - lock.stat().st_mtime < REFRESH_LOCK_TTL_S:
            return False
    except OSError:
        pass
    try:
        fd = os.open(lock, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        subprocess.Popen(
            [sys.executable, "-c", "import sys; from looma_git.retrieval.head_records import _refresh_main; "
             "_refresh_main(sys.argv[1:])", str(paths.worktree or ""), str(paths.git_dir),
             str(paths.common_dir)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
    except OSError:
        return False
    return True


def _refresh_main(argv: list[str]) -> None:
    """The detached refresher: fold the head, save the snapshot, release the lock."""
    from looma_git.retrieval import snapshot

    worktree, git_dir, common = argv
    paths = RepoPaths(worktree=Path(worktree) if worktree else None, git_dir=Path(git_dir),
                      common_dir=Path(common))
    try:
        head = ledger_head(paths)
        if head is not None and snapshot.load(paths.state_dir, head) is None:
            _fold_and_save(paths, head, snapshot.load_prior(paths.state_dir))
    except Exception:  # a cache refresh: the next query folds in the foreground instead
        pass
    finally:
        try:
            (paths.state_dir / REFRESH_LOCK).unlink()
        except OSError:
            pass
