"""Promotion: the ledger ops that publish what a refinery pass found (nothing when unchanged)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from looma_git.ledger import derive
from looma_git.ledger.state import MemoryState, WorkItemState
from looma_git.pipeline import confidence as conf
from looma_git.pipeline.views import Evidence, MemoryView, RefineResult, WorkItemView

Draft = dict[str, Any]
MAX_EVIDENCE = 5


def eligible(w: WorkItemView) -> bool:
    """Published when already in the ledger, commit-linked, or confident enough; work that
    changed nothing only when corroborated (an `investigation`: >= 2 sessions or one long)."""
    if w.quarantined:
        return False
    if w.readonly:
        return bool(w.seed_id) or w.corroborated
    return bool(w.seed_id) or bool(w.commits) or w.confidence.value >= conf.PROMOTE_AT


def _evidence(ev: tuple[Evidence, ...]) -> list[dict[str, Any]]:
    return [{"quote": e.quote, "agent": e.agent, "session": e.session, "event": e.event,
             "hash": e.hash} for e in ev[:MAX_EVIDENCE]]


def _wi_fields(w: WorkItemView) -> dict[str, Any]:
    return {
        "title": w.title,
        "kind": w.kind,
        "summary": w.summary,
        "files": list(w.files),
        "aliases": list(w.aliases),
        "branch": w.branch,
        "confidence": round(w.confidence.value, 2),
        "features": {k: round(v, 2) for k, v in w.confidence.features},
        "sessions": [{"agent": a, "id": s} for a, s in w.sessions],
        "last_active": w.last_active,
    }


def _norm(value: Any) -> Any:
    """Ledger values (tuples, dicts, floats) compared as plain JSON-like data."""
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, Mapping):
        return {str(k): _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def local_observations(w: WorkItemView, redact: Callable[[str], str]) -> list[dict[str, Any]]:
    """This clone's observations of `w` as the fold will store them (prompt redacted)."""
    out = []
    for raw in w.observed:
        o = derive.clean({**raw, "prompt": redact(str(raw.get("prompt") or ""))})
        if o is not None:
            out.append(o)
    return out


def plan_workitems(result: RefineResult, ledger_items: Mapping[str, WorkItemState],
                   redact: Callable[[str], str],
                   observed: Mapping[str, Mapping[str, dict[str, Any]]] | None = None
                   ) -> list[Draft]:
    """workitem.create for new eligible clusters; for a WorkItem already in the ledger a
    workitem.update only when this clone observed something the ledger does not hold yet
    (a new session, or a session that grew: new days, files, windows). Its shared fields are
    derived by the fold from every clone's observations, so nothing else is ever written."""
    drafts: list[Draft] = []
    observed = observed or {}
    for w in result.workitems:
        if not eligible(w):
            continue
        obs = local_observations(w, redact)
        if w.seed_id is None:
            payload = {"status": w.status,
                       "band": w.confidence.band, **_wi_fields(w),
                       "evidence": _evidence(w.evidence), "local_id": w.id,
                       "observe": {"sessions": obs}}
            drafts.append({"op": "workitem.create", "target": {"type": "workitem", "id": None},
                           "payload": payload})
            continue
        current = ledger_items.get(w.seed_id)
        if current is None or current.false_positive or current.merged_into:
            continue
        have = observed.get(w.seed_id, {})
        new = [o for o in obs if not derive.covers(have.get(f"{o['agent']}:{o['id']}"), o)]
        if new:
            drafts.append({"op": "workitem.update",
                           "target": {"type": "workitem", "id": w.seed_id},
                           "payload": {"observe": {"sessions": new}}})
    return drafts


def plan_memories(memories: Sequence[MemoryView], id_map: Mapping[str, str],
                  ledger_memories: Mapping[str, MemoryState],
                  redact: Callable[[str], str]) -> list[Draft]:
    """memory.promote for memories of published WorkItems; memory.update when superseded."""
    known: dict[tuple[str, str], str] = {}
    for mid, lm in ledger_memories.items():
        known[(lm.kind, lm.text)] = mid
    drafts: list[Draft] = []
    local_to_ledger: dict[str, str] = {}
    for m in memories:
        wi = id_map.get(m.workitem or "")
        if wi is None:
            continue
        key = (m.kind, redact(m.text))
        if key in known:
            local_to_ledger[m.id] = known[key]
            continue
        drafts.append({"op": "memory.promote", "target": {"type": "memory", "id": None},
                       "payload": {"kind": m.kind, "text": m.text, "workitem": wi,
                                   "confidence": round(m.confidence.value, 2),
                                   "band": m.confidence.band,
                                   "features": {k: round(v, 2) for k, v in m.confidence.features},
                                   "evidence": _evidence(m.evidence), "local_id": m.id,
                                   "said_at": m.ts}})
    for m in memories:
        if m.lifecycle == "active" or m.id not in local_to_ledger:
            continue
        target = local_to_ledger[m.id]
        current = ledger_memories.get(target)
        if current is None or current.forced or current.lifecycle != "active":
            continue
        if m.lifecycle == "superseded":
            by = local_to_ledger.get(m.superseded_by or "")
            if by is None:
                continue
            payload: dict[str, Any] = {"lifecycle": "superseded", "superseded_by": by}
        else:
            payload = {"lifecycle": m.lifecycle}
        drafts.append({"op": "memory.update", "target": {"type": "memory", "id": target},
                       "payload": payload})
    return drafts
