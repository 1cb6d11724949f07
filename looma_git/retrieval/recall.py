"""`recall`: the WorkItems (and their memories) that mention a file, directory, commit,
branch, session or term, each with why it matched."""

from __future__ import annotations

from looma_git.ingest.registry import ADAPTERS
from looma_git.retrieval.records import ItemRecord
from looma_git.wire.plain import RecallHit, RecallMemoryOut, RecallOut, SessionRef, WorkItemOut


def work_out(it: ItemRecord) -> WorkItemOut:
    """A WorkItem record as its `work --json` row."""
    return WorkItemOut(
        id=it.id, title=it.title, kind=it.kind, status=it.status, lifecycle=it.lifecycle,
        confidence=round(it.confidence, 2), band=it.band, files=list(it.files),
        commits=[c.sha for c in it.commits],
        sessions=[SessionRef(agent=a, id=s) for a, s in it.sessions], promoted=it.promoted,
        branch=it.branch, summary=it.summary, features=dict(it.features))


def _why(it: ItemRecord, entity: str, commits: frozenset[str], via: str) -> list[str]:
    low = entity.lower()
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
    return why


def recall(items: list[ItemRecord], entity: str, *, commits: frozenset[str] = frozenset(),
           via: str = "commit") -> RecallOut:
    """Every item that mentions `entity`. `commits`: the full shas the entity names as git
    understands it (a rev like HEAD, or a branch's commits), matched as `via`."""
    agent, sep, rest = entity.partition(":")
    if sep and agent in ADAPTERS and rest:
        entity = rest  # "codex:08a1d07a-..." names a session the way looma prints it
    low = entity.lower()
    hits = []
    for it in items:
        why = _why(it, entity, commits, via)
        mems = [m for m in it.memories if low in m.text.lower()]
        if mems:
            why.append("memory")
        if why:
            hits.append(RecallHit(workitem=work_out(it), why=why, memories=[
                RecallMemoryOut(id=m.id, kind=m.kind, text=m.text, confidence=m.confidence,
                                band=m.band, lifecycle=m.lifecycle) for m in mems]))
    return RecallOut(entity=entity, results=hits)
