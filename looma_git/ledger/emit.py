"""What the fold emits for readers: its records as frozen domain types (WorkItem, Memory, ...).

The state's own records (`ledger/state.py`) stay mutable and keep ledger data exactly as the
ops wrote it, because the projections are emitted from them byte for byte; everything that
reads WorkItems takes these domain values instead, whose fields always have their declared
types (a value of another type, which only a foreign or hostile op can carry, reads as empty)."""

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


def _features(raw: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(raw, dict):
        return ()
    return tuple(sorted((k, float(v)) for k, v in raw.items() if isinstance(k, str)
                        and isinstance(v, (int, float)) and not isinstance(v, bool)))


def _s(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def _opt(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def commit_link(link: LinkState) -> CommitLink:
    return CommitLink(sha=link.sha, workitem=link.workitem, confidence=_num(link.confidence),
                      by=_s(link.by), files=link.files, branch=_opt(link.branch),
                      patch_id=_opt(link.patch_id), why=_features(link.why),
                      by_user=link.user, subject=link.subject, ts=link.ts,
                      title=_s(link.title))


def memory(mem: MemoryState) -> Memory:
    return Memory(id=mem.id, kind=_s(mem.kind), text=_s(mem.text), workitem=_opt(mem.workitem),
                  confidence=_num(mem.confidence), band=_s(mem.band),
                  lifecycle=_s(mem.lifecycle) or "active",
                  superseded_by=_opt(mem.superseded_by), evidence=_evidence(mem.evidence),
                  said_at=_s(mem.said_at), features=_features(mem.features),
                  decision=mem.forced, false_positive=mem.false_positive)


def _workitem(wi: WorkItemState, links: tuple[CommitLink, ...],
              mems: tuple[Memory, ...]) -> WorkItem:
    return WorkItem(
        id=wi.id, title=_s(wi.title), kind=_s(wi.kind), status=_s(wi.status) or "active",
        summary=_s(wi.summary), files=wi.files, aliases=wi.aliases, branch=_opt(wi.branch),
        confidence=_num(wi.confidence), band=_s(wi.band), features=_features(wi.features),
        sessions=_sessions(wi.sessions), evidence=_evidence(wi.evidence), commits=links,
        memories=mems, last_active=_s(wi.last_active), updated=wi.updated_ts,
        decision=wi.forced,
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
        if isinstance(m.workitem, str) and (owner := state.survivor(m.workitem)) in keep:
            out = memory(m)
            if out.live:
                mems.setdefault(owner, []).append(out)
    return tuple(_workitem(state.workitems[wid], tuple(links.get(wid, ())),
                           tuple(mems.get(wid, ()))) for wid in wanted)


def listed(state: LedgerState) -> tuple[WorkItem, ...]:
    """The WorkItems a listing shows: live and not split up (sorted by id)."""
    return workitems(state, [w.id for w in state.workitems.values()
                             if w.live and not w.split_into])
