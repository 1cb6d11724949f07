"""Indexing stored messages into Tantivy ahead of `reindex`, in a process beside the work model.

A cold ingest stores ~100k messages; their full-text docs depend on nothing the work model
builds, so a forked child indexes them while the parent resolves WorkItems (the second core is
otherwise idle then), and the parent's `reindex` finds them indexed (the mark in store.db has
moved) and adds only the WorkItem and memory docs."""

from __future__ import annotations

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
    """Fork a child that runs `index_messages` when `new_events` make it pay; returns a join
    that waits for it and gives how many messages it indexed (None: nothing was started, or
    the child failed; `reindex` then indexes what is left, as it always does)."""
    from looma_git.ingest import parallel

    if new_events < BESIDE_FROM or not parallel.fork_available() or parallel.default_workers() < 2:
        return lambda: None
    from looma_git.pipeline import child

    joined = child.start(lambda: index_messages(paths), nice=child.BESIDE_NICE)

    def join() -> int | None:
        try:
            return joined()
        except Exception:  # the child failed: the parent indexes what is left
            return None

    return join
