"""`timeline`: one WorkItem's ledger ops, sessions, commits and memories as dated entries."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from looma_git.ledger.ops import Op, timeline_text
from looma_git.pipeline.confidence import band
from looma_git.retrieval.records import ItemRecord
from looma_git.wire.plain import TimelineEntry, TimelineOut


def timeline(item: ItemRecord, ops: Iterable[Op], sessions: list[dict[str, Any]],
             commits: list[dict[str, Any]]) -> TimelineOut:
    """Decisions, sessions, commits and ledger ops of one WorkItem, in time order. `ops`: the
    whole ledger; `sessions`, `commits`: the rows of the item's sessions (store.db) and
    commits (git) as `index.reads.session_rows` and the read path's commit rows give them."""
    entries: list[TimelineEntry] = []
    for op in ops:
        tgt = op.target.id
        payload = op.payload or {}
        what = timeline_text(op)  # each op kind's own line (ledger/ops/<kind>.py)
        if what is None:
            continue  # links and memories are listed from the fold below, once each
        if item.id in (tgt, op.created_id(), payload.get("workitem")) or item.id in (
                payload.get("from") or []):
            entries.append(TimelineEntry(ts=op.ts, kind="op", text=what, ref=op.id[:10],
                                         actor=f"{op.actor.kind}:{op.actor.name}"))
    for s in sessions:
        entries.append(TimelineEntry(ts=str(s.get("first") or ""), kind="session",
                                     text=f"{s['agent']} session", ref=s["id"]))
    link_conf = {c.sha[:12]: c.confidence for c in item.commits}
    for c in commits:
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
