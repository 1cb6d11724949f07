"""Building the local search index (Tantivy docs, vectors) from the ledger and store.db events."""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from looma_git.errors import ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.index.message_docs import message_docs
from looma_git.retrieval.head_records import load_records
from looma_git.retrieval.records import ItemRecord
from looma_git.store.heads import ledger_head


@dataclass
class ReindexReport:
    """What a reindex did."""

    workitems: int = 0
    memories: int = 0
    messages: int = 0
    vectors: int = 0
    vectors_pending: int = 0  # memory vectors left for a later refresh (time budget)
    merged_remotes: list[str] = field(default_factory=list)  # fetched refs merged first
    embedder: str | None = None  # model id, or None when running lexically
    embedder_reason: str | None = None
    ledger_commit: str | None = None
    rebuilt: bool = False
    duration_s: float = 0.0
    repaired: str | None = None  # a damaged store.db that was set aside and rebuilt
    vectors_beside: bool = False  # the vectors are being topped up by a detached process


def fulltext_dir(paths: RepoPaths) -> Path:
    return paths.state_dir / "tantivy"


def _item_docs(items: list[ItemRecord]) -> list[Any]:
    from looma_git.index.fulltext import Doc

    docs = []
    for it in items:
        docs.append(Doc(doc_id=it.id, doc_type="workitem", title=it.title,
                        body=" ".join([" ".join(it.aliases), " ".join(it.files), it.summary]),
                        workitem=it.id))
        for m in it.memories:
            docs.append(Doc(doc_id=m.id, doc_type="memory", title=m.kind, body=m.text,
                            workitem=it.id))
    return docs


def _doc_hash(doc: Any) -> str:
    import hashlib

    return hashlib.sha1("\x00".join((doc.doc_type, doc.title, doc.body, doc.workitem or ""))
                        .encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _indexed_items(conn: Any) -> dict[str, str]:
    """WorkItem/memory doc id -> hash of what the index holds for it ("" when unknown: an
    index written before hashes were kept, so every such doc is rewritten once)."""
    from looma_git.index import storedb

    raw = storedb.get_meta(conn, "index_item_docs")
    if raw is not None:
        try:
            known = json.loads(raw)
            if isinstance(known, dict):
                return {str(k): str(v) for k, v in known.items()}
        except ValueError:
            pass
    return {str(i): "" for i in json.loads(storedb.get_meta(conn, "index_item_ids") or "[]")}


# Memory and session-window vectors left over (the backlog: a cold store, a fresh clone) are
# topped up within this many CPU seconds per (re)index; WorkItem vectors are always complete,
# and `looma ingest` also embeds what its own new work added (`embed_new`), so its cost follows
# the new work, never the history. Budgets per caller: a query's automatic refresh never waits
# on embedding; an explicit reindex tops some up (`--all-vectors`: all); each ingest a little
# more of the backlog (at 1,500 sessions a cold store's backlog is ~25 CPU-s of embedding: it
# is not paid in one run, nor all by the next one).
MEMORY_EMBED_BUDGET_S = 0.5
QUERY_MEMORY_BUDGET_S = 0.0
INGEST_BACKLOG_BUDGET_S = 1.0
BACKGROUND_MEMORY_BUDGET_S = INGEST_BACKLOG_BUDGET_S  # the older name (api surface)


def release_memory(collect: bool = False) -> None:
    """Hand freed heap pages back to the system (glibc keeps them otherwise): each indexing
    step then starts from what is live, not from the peak of the step before (the work
    model's, in `looma ingest`). `collect` first frees cycles too: a full collection costs
    ~0.2 CPU-s after a work model at 1,500 sessions, so only where a fold was dropped."""
    import gc
    import sys

    if collect:
        gc.collect()
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (musl): nothing to trim
            pass


def reindex(paths: RepoPaths, *, full: bool = True,
            memory_budget_s: float | None = MEMORY_EMBED_BUDGET_S,
            embed_new: bool = False, last_use: bool = False,
            vectors_beside: bool = False, prewarmed: Any = None) -> ReindexReport:
    """Rebuild (full) or refresh the Tantivy index and vectors from the ledger + local events;
    `embed_new`: texts new since the last top-up are embedded whatever the budget;
    `last_use`: this process reads the ledger no more (a command's last step), so its
    in-memory fold is dropped once the records are taken (the state dir's fold cache keeps
    it for the next process); `vectors_beside`: the vectors are topped up by a detached
    process (index/vector_background: a cold ingest's), the index and its stamp are written
    here and the report counts what that process will embed as pending (`prewarmed`: that
    process, started earlier: `vector_background.prewarm`)."""
    from looma_git.index import storedb
    from looma_git.index.fulltext import FullTextIndex
    from looma_git.index.meta import IndexMeta, index_writer_lock, now_iso, read_meta, write_meta

    t0 = time.perf_counter()
    report = ReindexReport()
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    from looma_git.index import vector_background

    # A cold ingest's detached top-up holds the writer lock for as long as it embeds (10-40 s
    # at 1,500 sessions): a reindex waits for it rather than fail after the usual 10 s.
    wait_s = vector_background.WAIT_S if vector_background.running(paths) else 10.0
    with index_writer_lock(paths.state_dir, wait_s):
        head = ledger_head(paths)
        # The records of the head: the snapshot when one was saved for it, else folded (and
        # saved); only these records are held from here on, never the fold.
        items = load_records(paths, head)
        if last_use:
            from looma_git.store.ledger_ref import release_fold

            release_fold(paths)
        release_memory(collect=last_use)
        meta = read_meta(paths.state_dir)
        full = full or meta is None
        # A full rebuild wipes whatever is there, damaged or not.
        ft = FullTextIndex(fulltext_dir(paths), reset=full)
        full = full or ft.needs_populate
        report.rebuilt = full
        conn = storedb.connect(paths)
        try:
            storedb.ensure_schema(conn)
            since = 0 if full else int(storedb.get_meta(conn, "index_events_mark") or 0)
            docs = _item_docs(items)
            report.workitems = len(items)
            report.memories = sum(len(it.memories) for it in items)
            indexed = {} if full else _indexed_items(conn)
            wanted = {d.doc_id: _doc_hash(d) for d in docs}
            # Only WorkItem/memory docs that are new, changed or gone are touched.
            gone = sorted(i for i in indexed if i not in wanted)
            fresh = [d for d in docs if indexed.get(d.doc_id) != wanted[d.doc_id]]
            mark = [since]
            # One writer commit: those docs out and in, plus the messages ingested since the
            # last mark (not every message on every run), streamed from store.db; a fresh
            # index has nothing to replace.
            added = ft.apply(gone, itertools.chain(fresh, message_docs(conn, since, mark)),
                             replace=not full)
            report.messages = added - len(fresh)
            storedb.set_meta(conn, "index_item_docs", json.dumps(wanted, sort_keys=True))
            storedb.set_meta(conn, "index_item_ids", json.dumps(sorted(wanted)))  # older readers
            storedb.set_meta(conn, "index_events_mark", str(mark[0]))
        finally:
            conn.close()
        del ft, docs, wanted, indexed, fresh
        release_memory()  # the writer's heap and merges are done: the model starts from here
        if vectors_beside and _beside(paths, items, report, memory_budget_s, embed_new,
                                      prewarmed):
            # (the process waits for this lock: it starts from the stamp written here)
            model_id = meta.model_id if meta is not None else None
        else:
            model_id = _embed(paths, items, report, memory_budget_s, embed_new)
        write_meta(paths.state_dir, IndexMeta(ledger_commit=head, model_id=model_id,
                                              built_at=now_iso(), vectors=report.vectors,
                                              vectors_pending=report.vectors_pending))
    report.ledger_commit = head
    report.duration_s = round(time.perf_counter() - t0, 3)
    return report


def _embed(paths: RepoPaths, items: list[ItemRecord], report: ReindexReport,
           memory_budget_s: float | None, embed_new: bool = False) -> str | None:
    """Top up the vectors (index/vector_sync) and record what happened in `report`."""
    from looma_git.index import vector_sync

    texts = vector_sync.item_texts(items) + vector_sync.window_texts(paths)
    out = vector_sync.sync(paths, texts, memory_budget_s, embed_new)
    report.vectors, report.vectors_pending = out.vectors, out.pending
    report.embedder, report.embedder_reason = out.model_id, out.reason
    return out.model_id


def _beside(paths: RepoPaths, items: list[ItemRecord], report: ReindexReport,
            memory_budget_s: float | None, embed_new: bool, prewarmed: Any = None) -> bool:
    """Start the detached top-up (index/vector_background); False: embed inline instead."""
    from looma_git.index import vector_background, vector_sync

    if not vector_background.start(paths, memory_budget_s, embed_new, prewarmed):
        return False
    texts = vector_sync.item_texts(items) + vector_sync.window_texts(paths)
    report.vectors, report.vectors_pending = vector_sync.counts(paths, texts)
    report.vectors_beside = True
    return True


def top_up(paths: RepoPaths, memory_budget_s: float | None, embed_new: bool,
           lock_wait_s: float = 10.0) -> ReindexReport | None:
    """The vectors of the index as its stamp last wrote it (`_embed` for the records of its
    ledger commit), the stamp's counts updated: what a reindex that deferred them
    (`vectors_beside`) would have done inline. None when there is no index (any more)."""
    from looma_git.index.meta import index_writer_lock, now_iso, read_meta, write_meta

    with index_writer_lock(paths.state_dir, lock_wait_s):
        meta = read_meta(paths.state_dir)
        if meta is None:
            return None
        items = load_records(paths, meta.ledger_commit)
        report = ReindexReport(ledger_commit=meta.ledger_commit)
        model_id = _embed(paths, items, report, memory_budget_s, embed_new)
        write_meta(paths.state_dir, meta.model_copy(update={
            "model_id": model_id, "built_at": now_iso(), "vectors": report.vectors,
            "vectors_pending": report.vectors_pending}))
    return report


def window_owners(paths: RepoPaths) -> dict[str, str]:
    """Vector doc id of each window -> the WorkItem it belongs to."""
    from looma_git.index.vector_sync import window_owners as owners

    return owners(paths)


def ensure_fresh(paths: RepoPaths) -> bool:
    """Refresh the index when the ledger moved, events arrived, or it is missing/corrupt.
    Returns True when work was done."""
    return fresh_head(paths)[1]


def fresh_head(paths: RepoPaths) -> tuple[str | None, bool]:
    """`ensure_fresh` that also returns the ledger head it checked (one `git rev-parse`)."""
    from looma_git.index.meta import read_meta

    meta = read_meta(paths.state_dir)
    head = ledger_head(paths)
    if meta is None or meta.is_stale(head) or not fulltext_dir(paths).exists():
        try:
            reindex(paths, full=meta is None, memory_budget_s=QUERY_MEMORY_BUDGET_S)
        except ReadOnlyError:
            # A read-only file system (or .git): read what is there rather than fail a read.
            return head, False
        return head, True
    return head, False
