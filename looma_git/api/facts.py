"""Library surface of the fact commands: ask (words and meaning), timeline, recall."""

from __future__ import annotations

import dataclasses
from typing import Any

from looma_git.api.query import (
    _git_commits,
    _items,
    _require_ledger,
    _session_rows,
    _work_out,
    resolve_workitem,
)
from looma_git.api.results import AskOut, FactOut, TimelineEntry, TimelineOut
from looma_git.errors import ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.index.reads import local_rows
from looma_git.model import AGENTS
from looma_git.pipeline.confidence import band
from looma_git.retrieval import answer, match
from looma_git.retrieval.records import ItemRecord, MemoryRecord
from looma_git.retrieval.semantic import query_cosines, rank_goal


def ask(paths: RepoPaths, query: str, *, limit: int = 10) -> AskOut:
    """Facts answering a question, with provenance, confidence and band: memories first
    (decisions, architecture, bugs, todos; a superseded decision right after the one that
    replaced it, labelled), then WorkItem summaries, then raw transcript matches."""
    items = {it.id: it for it in _items(paths, _require_ledger(paths))}
    local = _unpromoted_records(paths)  # unpromoted: their memories answer as "unconfirmed"
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


def _unpromoted_records(paths: RepoPaths) -> list[ItemRecord]:
    """The last refinery pass's unpromoted WorkItems with their memories (local only: the
    DESIGN's "unconfirmed" high scorers), as records; [] on a clone without transcripts."""
    mems: dict[str, list[MemoryRecord]] = {}
    for mid, m, promoted in local_rows(paths, "refine_memories"):
        if promoted or not m.get("text") or not m.get("workitem"):
            continue
        conf = m.get("confidence") or {}
        value = float(conf.get("value", 0.0)) if isinstance(conf, dict) else 0.0
        mems.setdefault(str(m["workitem"]), []).append(MemoryRecord(
            id=mid, kind=str(m.get("kind", "decision")), text=str(m["text"]),
            workitem=str(m["workitem"]), confidence=value, band=band(value),
            lifecycle=str(m.get("lifecycle") or "active"), promoted=False,
            evidence=tuple(dict(e) for e in (m.get("evidence") or [])[:1]),
            said_at=str(m.get("ts") or ""), superseded_by=m.get("superseded_by")))
    out = []
    for wid, w, promoted in local_rows(paths, "refine_workitems") if mems else ():
        if promoted or w.get("quarantined") or wid not in mems:
            continue
        out.append(ItemRecord(
            id=wid, title=str(w.get("title", "")), kind=str(w.get("kind", "feature")),
            status="candidate", lifecycle="active", confidence=0.0, band="low",
            files=tuple(w.get("files") or ()), aliases=tuple(w.get("aliases") or ()),
            branch=w.get("branch"), summary=str(w.get("summary", "")), sessions=(),
            commits=(), memories=tuple(mems[wid]), updated="", promoted=False,
            prompts=tuple(str(e.get("quote", ""))[:300] for e in (w.get("evidence") or [])
                          if isinstance(e, dict) and e.get("quote"))[:3]))
    return out


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
    from looma_git.api.index import fulltext_dir

    if not fulltext_dir(paths).exists() and not paths.store_db.exists():
        return []
    from looma_git.index.fulltext import FullTextIndex

    try:
        ft = FullTextIndex(fulltext_dir(paths))
        if ft.needs_populate:  # the index was missing or corrupt and was just recreated empty
            from looma_git.api.index import reindex

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


def timeline(paths: RepoPaths, ref: str) -> TimelineOut:
    """Decisions, sessions, commits and ledger ops of one WorkItem, in time order."""
    from looma_git.api.ledger import log as ledger_log
    from looma_git.ledger.ops import timeline_text

    item = resolve_workitem(paths, ref)
    entries: list[TimelineEntry] = []
    for op in ledger_log(paths):
        tgt = op.target.id
        payload = op.payload or {}
        what = timeline_text(op)  # each op kind's own line (ledger/ops/<kind>.py)
        if what is None:
            continue  # links and memories are listed from the fold below, once each
        if item.id in (tgt, op.created_id(), payload.get("workitem")) or item.id in (
                payload.get("from") or []):
            entries.append(TimelineEntry(ts=op.ts, kind="op", text=what, ref=op.id[:10],
                                         actor=f"{op.actor.kind}:{op.actor.name}"))
    for s in _session_rows(paths, item.sessions):
        entries.append(TimelineEntry(ts=str(s.get("first") or ""), kind="session",
                                     text=f"{s['agent']} session", ref=s["id"]))
    link_conf = {c.sha[:12]: c.confidence for c in item.commits}
    for c in _git_commits(paths, [c.sha for c in item.commits]):
        lc = link_conf.get(c["sha"])
        entries.append(TimelineEntry(ts=c["date"], kind="commit", text=c["subject"],
                                     ref=c["sha"], confidence=lc,
                                     band=band(lc) if lc is not None else None))
    for m in item.memories:
        text = m.text if m.lifecycle == "active" else f"[{m.lifecycle}] {m.text}"
        entries.append(TimelineEntry(ts=m.said_at, kind=m.kind, text=text, ref=m.id,
                                     confidence=m.confidence, band=m.band))
    entries.sort(key=lambda e: (e.ts or "~", e.kind, e.ref))
    return TimelineOut(workitem=item.id, title=item.title, entries=entries,
                       confidence=round(item.confidence, 2), band=item.band)


def recall(paths: RepoPaths, entity: str, *, commits: frozenset[str] = frozenset(),
           via: str = "commit") -> dict[str, Any]:
    """Everything that mentions a file, commit, branch, session or term. `commits`: full
    shas the entity resolved to (a rev like HEAD, or a branch's commits), matched as `via`."""
    items = _items(paths)
    agent, sep, rest = entity.partition(":")
    if sep and agent in AGENTS and rest:
        entity = rest  # "codex:08a1d07a-..." names a session the way looma prints it
    low = entity.lower()
    hits: list[dict[str, Any]] = []
    for it in items:
        why = []
        if any(f == entity or f.startswith(entity.rstrip("/") + "/") for f in it.files):
            why.append("file")
        if any(c.sha.startswith(low) for c in it.commits) and len(low) >= 7:
            why.append("commit")
        if it.branch and it.branch == entity:
            why.append("branch")
        if commits and via not in why and any(c.sha in commits for c in it.commits):
            why.append(via)
        if any(s == entity or s.startswith(entity) for _, s in it.sessions) and len(entity) >= 6:
            why.append("session")
        if low in it.title.lower() or any(low in a.lower() for a in it.aliases):
            why.append("title")
        mems = [m for m in it.memories if low in m.text.lower()]
        if mems:
            why.append("memory")
        if why:
            hits.append({"workitem": dataclasses.asdict(_work_out(it)), "why": why,
                         "memories": [{"id": m.id, "kind": m.kind, "text": m.text,
                                       "confidence": m.confidence, "band": m.band,
                                       "lifecycle": m.lifecycle} for m in mems]})
    return {"entity": entity, "results": hits}
