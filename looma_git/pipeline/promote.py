"""Promotion: the ledger ops that publish what a refinery pass found (nothing when unchanged)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from looma_git.ledger.state import MemoryState, WorkItemState
from looma_git.pipeline import confidence as conf
from looma_git.pipeline.linking import Link
from looma_git.pipeline.refine import Evidence, MemoryView, RefineResult, WorkItemView

Draft = dict[str, Any]
MAX_EVIDENCE = 5


def eligible(w: WorkItemView) -> bool:
    """Published when already in the ledger, commit-linked, or confident enough."""
    if w.quarantined or w.readonly:
        return False
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


def plan_workitems(result: RefineResult, ledger_items: Mapping[str, WorkItemState],
                   redact: Callable[[str], str]) -> list[Draft]:
    """workitem.create for new eligible clusters; workitem.update for changed fields only."""
    drafts: list[Draft] = []
    for w in result.workitems:
        if not eligible(w):
            continue
        fields = _wi_fields(w)
        if w.seed_id is None:
            payload = {"status": w.status,
                       "band": w.confidence.band, **fields,
                       "evidence": _evidence(w.evidence), "local_id": w.id}
            drafts.append({"op": "workitem.create", "target": {"type": "workitem", "id": None},
                           "payload": payload})
            continue
        current = ledger_items.get(w.seed_id)
        if current is None:
            continue
        changed: dict[str, Any] = {}
        for key, value in fields.items():
            mine = _norm(value)
            if key in ("summary", "title"):
                mine = redact(value)
            if key == "title" and current.pinned_title:
                continue
            if key == "features" and current.forced:
                continue
            if _norm(getattr(current, key, None)) != mine:
                changed[key] = value
        if "confidence" in changed:
            changed["band"] = w.confidence.band
        if changed:
            drafts.append({"op": "workitem.update",
                           "target": {"type": "workitem", "id": w.seed_id}, "payload": changed})
    return drafts


def plan_links(links: tuple[Link, ...], id_map: Mapping[str, str],
               live: set[tuple[str, str]], titles: Mapping[str, str],
               patch_ids: Mapping[str, str], by: str) -> list[Draft]:
    """commit.link for each new link of a published WorkItem."""
    drafts: list[Draft] = []
    for ln in links:
        wi = id_map.get(ln.workitem)
        if wi is None or (ln.sha, wi) in live:
            continue
        drafts.append({"op": "commit.link", "target": {"type": "commit", "id": ln.sha},
                       "payload": {"workitem": wi, "title": titles.get(wi, ""),
                                   "confidence": round(ln.confidence, 2), "by": by,
                                   "patch_id": patch_ids.get(ln.sha), "files": list(ln.files),
                                   "branch": ln.branch,
                                   "why": {k: v for k, v in ln.why}}})
    return drafts


def plan_memories(memories: tuple[MemoryView, ...], id_map: Mapping[str, str],
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
