"""Library surface of the fact commands: ask (words and meaning), timeline, recall."""

from __future__ import annotations

from looma_git.api.query import (
    _git_commits,
    _items,
    _require_ledger,
    _session_rows,
    resolve_workitem,
)
from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.pipeline.confidence import band
from looma_git.wire.plain import AskOut, RecallOut, TimelineEntry, TimelineOut


def ask(paths: RepoPaths, query: str, *, limit: int = 10) -> AskOut:
    """Facts answering a question, with provenance, confidence and band (retrieval/ask.py)."""
    from looma_git.retrieval.ask import ask as ask_in

    return ask_in(paths, query, _items(paths, _require_ledger(paths)), limit=limit)


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


def recall(paths: RepoPaths, entity: str) -> RecallOut:
    """Everything that mentions a file, commit, branch, session or term; when nothing does
    and git knows the name (`HEAD~2`, a tag, a branch), the commits it names."""
    from looma_git.retrieval.recall import recall as recall_in
    from looma_git.store.gitfacts import rev_commits

    items = _items(paths)
    out = recall_in(items, entity)
    if not out.results:
        shas, via = rev_commits(require_worktree(paths), entity)
        if shas:
            out = recall_in(items, entity, commits=shas, via=via)
            out.resolved = sorted(shas)[:1] if via == "commit" else []
    return out
