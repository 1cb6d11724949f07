"""`ask`: facts answering a question (memories, WorkItem summaries, transcript messages), each
with provenance, confidence and band, from the ledger's records, the last pass's unpromoted
ones and the full-text index."""

from __future__ import annotations

from looma_git.domain import Memory
from looma_git.errors import ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.index.reads import local_rows
from looma_git.retrieval import answer, match
from looma_git.retrieval.records import ItemRecord, MemoryRecord, local_memory, local_work_item
from looma_git.retrieval.semantic import query_cosines, rank_goal
from looma_git.wire.plain import AskOut, FactOut


def ask(paths: RepoPaths, query: str, records: list[ItemRecord], *, limit: int = 10) -> AskOut:
    """Facts answering a question, with provenance, confidence and band: memories first
    (decisions, architecture, bugs, todos; a superseded decision right after the one that
    replaced it, labelled), then WorkItem summaries, then raw transcript matches.
    `records`: the WorkItems of the ledger head."""
    items = {it.id: it for it in records}
    local = unpromoted_records(paths)  # unpromoted: their memories answer as "unconfirmed"
    mems = {m.id: m for it in [*items.values(), *local] for m in it.memories}
    # Which work is the question about: the resume ranking (words; meaning when the words
    # do not decide), so a decision answers as a fact of its WorkItem too.
    ranked = rank_goal(paths, answer.topic(query), [*items.values(), *local])
    cosines = None
    if not match.lexical_decides(ranked):
        cosines = query_cosines(paths, query, ("memory",), k=max(50, limit * 3))
    facts: list[FactOut] = []
    item_scores = {m.item.id: m.score for m in ranked}
    titles = {it.id: it for it in [*items.values(), *local]}
    for m, score, how in answer.rank_memories(query, list(mems.values()), item_scores, cosines):
        facts.append(_memory_fact(m, titles.get(m.workitem or ""), score, how))
        if len(facts) >= limit:
            return AskOut(query=query, facts=facts)
    for mt in answer.rank_items(ranked):
        it = mt.item
        if not it.promoted:
            continue
        facts.append(FactOut(type="workitem", id=it.id, workitem=it.id,
                             workitem_title=it.title, text=it.summary or it.title,
                             confidence=round(it.confidence, 2), band=it.band,
                             status="confirmed", score=mt.score))
        if len(facts) >= limit:
            return AskOut(query=query, facts=facts)
    facts.extend(_message_facts(paths, query, limit - len(facts)))
    return AskOut(query=query, facts=facts[:limit])


def unpromoted_records(paths: RepoPaths) -> list[ItemRecord]:
    """The last refinery pass's unpromoted WorkItems with their memories (local only: the
    DESIGN's "unconfirmed" high scorers), as records; [] on a clone without transcripts.
    Each row becomes a domain value first (records.local_*), then the one projection."""
    mems: dict[str, list[Memory]] = {}
    for mid, m, promoted in local_rows(paths, "refine_memories"):
        if promoted or not m.get("text") or not m.get("workitem"):
            continue
        mems.setdefault(str(m["workitem"]), []).append(local_memory(mid, m))
    return [ItemRecord.of(local_work_item(wid, w, tuple(mems[wid])))
            for wid, w, promoted in (local_rows(paths, "refine_workitems") if mems else ())
            if not promoted and not w.get("quarantined") and wid in mems]


def _memory_fact(m: MemoryRecord, wi: ItemRecord | None, score: float, how: str) -> FactOut:
    source = dict(m.evidence[0]) if m.evidence else {}
    if how != "words":
        source["found_by"] = how
    if m.superseded_by:
        source["superseded_by"] = m.superseded_by
    return FactOut(type=m.kind, id=m.id, workitem=m.workitem,
                   workitem_title=wi.title if wi else None, text=m.text,
                   confidence=round(m.confidence, 2), band=m.band,
                   status="confirmed" if m.promoted else "unconfirmed", source=source,
                   score=round(score, 4), lifecycle=m.lifecycle)


def _message_facts(paths: RepoPaths, query: str, n: int) -> list[FactOut]:
    """Raw transcript matches from the full-text index as it is (rebuilt here only when it
    is missing or damaged; otherwise `ingest` and the hook drainer keep it fresh)."""
    if n <= 0:
        return []
    from looma_git.index.rebuild import fulltext_dir

    if not fulltext_dir(paths).exists() and not paths.store_db.exists():
        return []
    from looma_git.index.fulltext import FullTextIndex

    try:
        ft = FullTextIndex(fulltext_dir(paths))
        if ft.needs_populate:  # the index was missing or corrupt and was just recreated empty
            from looma_git.index.rebuild import reindex

            reindex(paths, full=True)
            ft = FullTextIndex(fulltext_dir(paths))
        hits = ft.search(query, limit=n * 3)
    except ReadOnlyError:
        return []  # read-only and no index to read: memories and summaries answered already
    out = []
    for hit in hits:
        if hit.doc_type != "message":
            continue  # WorkItems and memories were ranked from the ledger's own records
        out.append(FactOut(type="message", id=hit.doc_id, workitem=None, text=hit.snippet,
                           confidence=None, band=None, status="unconfirmed",
                           source={"agent": hit.agent, "session": hit.session,
                                   "event": hit.doc_id}, score=hit.score))
        if len(out) >= n:
            break
    return out
