"""Indexing stored messages into Tantivy ahead of `reindex`, in a process beside the work model.

A cold ingest stores ~100k messages; their full-text docs depend on nothing the work model
builds, so a process of its own indexes them while the parent resolves WorkItems (the second
core is otherwise idle then), and the parent's `reindex` finds them indexed (the mark in
store.db has moved) and adds only the WorkItem and memory docs."""

from __future__ import annotations

import os
from collections.abc import Callable

from looma_git.gitrepo import RepoPaths

# New events in one ingest from which indexing their messages beside the work model pays for
# the fork (a hook's ingest stores a few dozen: it indexes them in `reindex` as before).
BESIDE_FROM = 20_000


def index_messages(paths: RepoPaths) -> int:
    """Add the messages stored since the index's mark to the full-text index (creating it when
    there is none) and move the mark; returns how many. A new index gets a stamp that names no
    ledger commit, so the next `reindex` adds the WorkItem docs to it instead of rebuilding."""
    from looma_git.index import storedb
    from looma_git.index.fulltext import FullTextIndex
    from looma_git.index.message_docs import message_docs
    from looma_git.index.meta import IndexMeta, index_writer_lock, now_iso, read_meta, write_meta
    from looma_git.index.rebuild import fulltext_dir

    with index_writer_lock(paths.state_dir):
        meta = read_meta(paths.state_dir)
        fresh = meta is None
        ft = FullTextIndex(fulltext_dir(paths), reset=fresh)
        fresh = fresh or ft.needs_populate
        conn = storedb.connect(paths)
        try:
            since = 0 if fresh else int(storedb.get_meta(conn, "index_events_mark") or 0)
            mark = [since]
            added = ft.apply((), message_docs(conn, since, mark), replace=not fresh)
            with storedb.transaction(conn):
                storedb.set_meta(conn, "index_events_mark", str(mark[0]))
                if fresh:  # what the index holds of WorkItems: nothing yet
                    storedb.set_meta(conn, "index_item_docs", "{}")
        finally:
            conn.close()
        if fresh:
            write_meta(paths.state_dir, IndexMeta(built_at=now_iso()))
    return added


def start_beside(paths: RepoPaths, new_events: int) -> Callable[[], int | None]:
    """Start a process that runs `index_messages` when `new_events` make it pay; returns a
    join that waits for it and gives how many messages it indexed (None: nothing was started,
    or the process failed; `reindex` then indexes what is left, as it always does).

    A new interpreter, not a fork: a fork of the work model's process inherits SQLite's
    in-process state for store.db (what it knows of the file's locks and WAL index through the
    parent's open connection: SQLite's "do not carry a connection across fork()"), and when
    it ran late (niced, or delayed 2.5 s to test it) it read "database disk image is
    malformed" during the settling pass's writes and failed. It runs at a lower priority: the
    work model's steps are the ones the command waits on."""
    from looma_git.ingest import parallel

    if new_events < BESIDE_FROM or not parallel.fork_available() or parallel.default_workers() < 2:
        return lambda: None
    import subprocess
    import sys

    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from looma_git.index.message_index import "
             "_main; _main(sys.argv[1:])", str(os.getpid()), str(paths.worktree or ""),
             str(paths.git_dir), str(paths.common_dir)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            close_fds=True)
    except OSError:
        return lambda: None

    def join() -> int | None:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            return None
        try:
            return int(out.decode().strip())
        except ValueError:
            return None

    return join


BESIDE_NICE = 10  # how much lower the indexing process runs than the work model beside it


def _main(argv: list[str]) -> None:
    """The indexing process: `index_messages`, its count on stdout; it dies with its parent."""
    from pathlib import Path

    from looma_git.ingest import parallel

    parent, worktree, git_dir, common = argv
    parallel.child_init((), int(parent))
    try:
        os.nice(BESIDE_NICE)
    except OSError:
        pass
    paths = RepoPaths(worktree=Path(worktree) if worktree else None, git_dir=Path(git_dir),
                      common_dir=Path(common))
    print(index_messages(paths), flush=True)
