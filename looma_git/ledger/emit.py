"""What the fold emits for readers: its records as frozen domain types (WorkItem, Memory, ...).

The state's own records (`ledger/state.py`) stay mutable and keep ledger data exactly as the
ops wrote it, because the projections are emitted from them byte for byte; everything that
reads WorkItems takes these domain values instead."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from looma_git.domain import CommitLink, Evidence, Memory, SessionRef, WorkItem

if TYPE_CHECKING:
    from looma_git.ledger.state import LedgerState, LinkState, MemoryState, WorkItemState


def _evidence(raw: Iterable[Any]) -> tuple[Evidence, ...]:
    return tuple(Evidence.from_mapping(e) for e in raw if isinstance(e, dict))


def _sessions(raw: Iterable[Any]) -> tuple[SessionRef, ...]:
    refs = {SessionRef.from_mapping(s) for s in raw if isinstance(s, dict)}
    return tuple(sorted(r for r in refs if r is not None))


def _features(raw: dict[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(raw.items()))


def commit_link(link: LinkState) -> CommitLink:
    return CommitLink(sha=link.sha, workitem=link.workitem, confidence=link.confidence,
                      by=link.by, files=link.files, branch=link.branch, patch_id=link.patch_id,
                      why=link.why, by_user=link.user, subject=link.subject, ts=link.ts,
                      title=link.title)


def memory(mem: MemoryState) -> Memory:
    return Memory(id=mem.id, kind=mem.kind, text=mem.text, workitem=mem.workitem,
                  confidence=mem.confidence, band=mem.band, lifecycle=mem.lifecycle or "active",
                  superseded_by=mem.superseded_by, evidence=_evidence(mem.evidence),
                  said_at=mem.said_at, features=_features(mem.features), decision=mem.forced,
                  false_positive=mem.false_positive)


def _workitem(wi: WorkItemState, links: tuple[CommitLink, ...],
              mems: tuple[Memory, ...]) -> WorkItem:
    return WorkItem(
        id=wi.id, title=wi.title, kind=wi.kind, status=wi.status or "active",
        summary=wi.summary, files=wi.files, aliases=wi.aliases, branch=wi.branch,
        confidence=wi.confidence, band=wi.band, features=_features(wi.features),
        sessions=_sessions(wi.sessions), evidence=_evidence(wi.evidence), commits=links,
        memories=mems, last_active=wi.last_active, updated=wi.updated_ts, decision=wi.forced,
        pinned_title=wi.pinned_title, false_positive=wi.false_positive,
        merged_into=wi.merged_into, split_from=wi.split_from, split_into=wi.split_into,
        ops=wi.ops)


def workitems(state: LedgerState, ids: Iterable[str] | None = None) -> tuple[WorkItem, ...]:
    """The WorkItems `ids` (default: every one the state holds), sorted by id, each with its
    commit links (sorted by sha) and its live memories, those of WorkItems merged into it
    included (sorted by id)."""
    wanted = sorted(state.workitems if ids is None else set(ids) & set(state.workitems))
    keep = set(wanted)
    links: dict[str, list[CommitLink]] = {}
    for key in sorted(state.links):
        link = state.links[key]
        if link.workitem in keep:
            links.setdefault(link.workitem, []).append(commit_link(link))
    mems: dict[str, list[Memory]] = {}
    for mid in sorted(state.memories):
        m = state.memories[mid]
        if m.workitem and (owner := state.survivor(m.workitem)) in keep:
            out = memory(m)
            if out.live:
                mems.setdefault(owner, []).append(out)
    return tuple(_workitem(state.workitems[wid], tuple(links.get(wid, ())),
                           tuple(mems.get(wid, ()))) for wid in wanted)


def listed(state: LedgerState) -> tuple[WorkItem, ...]:
    """The WorkItems a listing shows: live and not split up (sorted by id)."""
    return workitems(state, [w.id for w in state.workitems.values()
                             if w.live and not w.split_into])
