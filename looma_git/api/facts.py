"""Library surface of the fact commands: ask (words and meaning), timeline, recall."""

from __future__ import annotations

from typing import Any

from looma_git.api.query import (
    _git_commits,
    _items,
    _require_ledger,
    _semantic,
    _session_rows,
    _work_out,
    resolve_workitem,
)
from looma_git.errors import ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.model import AGENTS
from looma_git.pipeline.confidence import band
from looma_git.retrieval.records import ItemRecord
from looma_git.schemas import AskOut, FactOut, TimelineEntry, TimelineOut


def ask(paths: RepoPaths, query: str, *, limit: int = 10) -> AskOut:
    """Facts matching a question, with provenance, confidence and band."""
    from looma_git.api.index import fresh_head, fulltext_dir
    from looma_git.index.fulltext import FullTextIndex

    _require_ledger(paths)
    items = {it.id: it for it in _items(paths, fresh_head(paths)[0])}
    mems = {m.id: m for it in items.values() for m in it.memories}
    try:
        ft = FullTextIndex(fulltext_dir(paths))
        if ft.needs_populate:  # the index was missing or corrupt and was just recreated empty
            from looma_git.api.index import reindex

            reindex(paths, full=True)
            ft = FullTextIndex(fulltext_dir(paths))
        hits = ft.search(query, limit=limit * 3)
    except ReadOnlyError:
        hits = []  # read-only and no index to read: answer from meaning alone (below)
    facts: list[FactOut] = []
    for hit in hits:
        if hit.doc_type == "workitem" and hit.doc_id in items:
            it = items[hit.doc_id]
            facts.append(FactOut(type="workitem", id=it.id, workitem=it.id,
                                 workitem_title=it.title, text=it.summary or it.title,
                                 confidence=round(it.confidence, 2), band=it.band,
                                 status="confirmed", score=hit.score))
        elif hit.doc_type == "memory" and hit.doc_id in mems:
            m = mems[hit.doc_id]
            wi = items.get(m.workitem or "")
            facts.append(FactOut(type=m.kind, id=m.id, workitem=m.workitem,
                                 workitem_title=wi.title if wi else None, text=m.text,
                                 confidence=round(m.confidence, 2), band=m.band,
                                 status="confirmed" if m.promoted else "unconfirmed",
                                 source=dict(m.evidence[0]) if m.evidence else {},
                                 score=hit.score, lifecycle=m.lifecycle))
        elif hit.doc_type == "message":
            facts.append(FactOut(type="message", id=hit.doc_id, workitem=None, text=hit.snippet,
                                 confidence=None, band=None, status="unconfirmed",
                                 source={"agent": hit.agent, "session": hit.session,
                                         "event": hit.doc_id}, score=hit.score))
        if len(facts) >= limit:
            break
    _semantic_memories(paths, query, facts, mems, items, limit)
    # Confirmed, still-true facts first; raw transcript hits next; superseded and expired
    # facts last but still visible, marked (BM25 order within each group).
    facts.sort(key=lambda f: 2 if f.lifecycle not in (None, "active")
               else (0 if f.status == "confirmed" else 1))
    return AskOut(query=query, facts=facts[:limit])


SEMANTIC_MIN_COSINE = 0.35  # a memory this close in meaning answers the question too


def _semantic_memories(paths: RepoPaths, query: str, facts: list[FactOut], mems: dict[str, Any],
                       items: dict[str, ItemRecord], limit: int) -> None:
    """When words found too few confirmed facts, memories close in meaning fill the list
    (sqlite-vec over memory vectors); each is marked as found by meaning."""
    confirmed = sum(1 for f in facts if f.status == "confirmed")
    if confirmed >= limit:
        return
    near = _semantic(paths, query, kind="memory", k=limit) or {}
    have = {f.id for f in facts}
    for mid, cos in sorted(near.items(), key=lambda kv: -kv[1]):
        m = mems.get(mid)
        if m is None or mid in have or cos < SEMANTIC_MIN_COSINE:
            continue
        wi = items.get(m.workitem or "")
        facts.append(FactOut(type=m.kind, id=m.id, workitem=m.workitem,
                             workitem_title=wi.title if wi else None, text=m.text,
                             confidence=round(m.confidence, 2), band=m.band,
                             status="confirmed" if m.promoted else "unconfirmed",
                             source={**(dict(m.evidence[0]) if m.evidence else {}),
                                     "found_by": "meaning", "cosine": round(cos, 3)},
                             score=round(cos, 4), lifecycle=m.lifecycle))
        confirmed += 1
        if confirmed >= limit:
            break


TIMELINE_OPS = frozenset({"workitem.create", "workitem.rename", "workitem.merge",
                          "workitem.split", "node.false_positive", "undo"})


def timeline(paths: RepoPaths, ref: str) -> TimelineOut:
    """Decisions, sessions, commits and ledger ops of one WorkItem, in time order."""
    from looma_git.api.ledger import log as ledger_log

    item = resolve_workitem(paths, ref)
    entries: list[TimelineEntry] = []
    for op in ledger_log(paths):
        tgt = op.target.id
        payload = op.payload or {}
        if op.op not in TIMELINE_OPS and not (op.op == "workitem.update" and "status" in payload):
            continue  # links and memories are listed from the fold below, once each
        if item.id in (tgt, op.created_id(), payload.get("workitem")) or item.id in (
                payload.get("from") or []):
            what = op.op if op.op != "workitem.update" else f"status -> {payload['status']}"
            if op.op == "workitem.rename":
                what = f"renamed to {payload.get('title')!r}"
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
            hits.append({"workitem": _work_out(it).model_dump(), "why": why,
                         "memories": [{"id": m.id, "kind": m.kind, "text": m.text,
                                       "confidence": m.confidence, "band": m.band,
                                       "lifecycle": m.lifecycle} for m in mems]})
    return {"entity": entity, "results": hits}
