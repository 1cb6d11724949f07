"""WorkItem and memory records for retrieval, built from the ledger fold (plus local candidates)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looma_git.pipeline.confidence import band


@dataclass(frozen=True)
class MemoryRecord:
    """A decision, todo, bug or architecture note with provenance."""

    id: str
    kind: str
    text: str
    workitem: str | None
    confidence: float
    band: str
    lifecycle: str
    promoted: bool
    evidence: tuple[dict[str, Any], ...]
    said_at: str = ""


@dataclass(frozen=True)
class LinkRecord:
    """A commit that implements a WorkItem."""

    sha: str
    confidence: float
    by: str


@dataclass(frozen=True)
class ItemRecord:
    """A WorkItem as every read command sees it."""

    id: str
    title: str
    kind: str
    status: str
    lifecycle: str
    confidence: float
    band: str
    files: tuple[str, ...]
    aliases: tuple[str, ...]
    branch: str | None
    summary: str
    sessions: tuple[tuple[str, str], ...]
    commits: tuple[LinkRecord, ...]
    memories: tuple[MemoryRecord, ...]
    updated: str
    promoted: bool
    features: tuple[tuple[str, float], ...] = ()

    def text_fields(self) -> str:
        """Everything searchable about the item, for matching and indexing."""
        mems = " ".join(m.text for m in self.memories if m.lifecycle == "active")
        return " ".join([self.title, " ".join(self.aliases), " ".join(self.files),
                         self.summary, mems])


def _g(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if hasattr(value, "__dataclass_fields__"):
        return {k: getattr(value, k) for k in value.__dataclass_fields__}
    return value


def from_ledger(state: Any) -> list[ItemRecord]:
    """Live WorkItems of the fold (merged-away, split and false-positive ones excluded)."""
    links_by_wi: dict[str, list[LinkRecord]] = {}
    for (sha, wi), link in sorted((_g(state, "links", {}) or {}).items()):
        links_by_wi.setdefault(wi, []).append(LinkRecord(
            sha=sha, confidence=float(_g(link, "confidence", 0.0) or 0.0),
            by=str(_g(link, "by", "") or "")))
    mems_by_wi: dict[str, list[MemoryRecord]] = {}
    for mid, m in sorted((_g(state, "memories", {}) or {}).items()):
        if _g(m, "false_positive") or _g(m, "forced") == "reject":
            continue
        wi = _g(m, "workitem")
        c = float(_g(m, "confidence", 0.0) or 0.0)
        mems_by_wi.setdefault(wi or "", []).append(MemoryRecord(
            id=mid, kind=str(_g(m, "kind", "")), text=str(_g(m, "text", "")), workitem=wi,
            confidence=c, band=str(_g(m, "band", None) or band(c)),
            lifecycle=str(_g(m, "lifecycle", "active") or "active"), promoted=True,
            evidence=tuple(_plain(e) for e in (_g(m, "evidence", ()) or ())),
            said_at=str(_g(m, "said_at", "") or "")))
    out = []
    for wid, it in sorted((_g(state, "workitems", {}) or {}).items()):
        if _g(it, "merged_into") or _g(it, "false_positive") or _g(it, "split_into"):
            continue
        if _g(it, "status") in ("split",):
            continue
        c = float(_g(it, "confidence", 0.0) or 0.0)
        sessions = tuple(sorted((str(_g(s, "agent")), str(_g(s, "id")))
                                for s in (_g(it, "sessions", ()) or ())))
        out.append(ItemRecord(
            id=wid, title=str(_g(it, "title", "")), kind=str(_g(it, "kind", "feature")),
            status=str(_g(it, "status", "active") or "active"),
            lifecycle=str(_g(it, "lifecycle", "active") or "active"), confidence=c,
            band=str(_g(it, "band", None) or band(c)),
            files=tuple(_g(it, "files", ()) or ()), aliases=tuple(_g(it, "aliases", ()) or ()),
            branch=_g(it, "branch"), summary=str(_g(it, "summary", "") or ""),
            sessions=sessions, commits=tuple(links_by_wi.get(wid, [])),
            memories=tuple(mems_by_wi.get(wid, [])),
            updated=str(_g(it, "last_active", "") or _g(it, "updated_ts", "") or ""),
            promoted=True,
            features=tuple(sorted((_g(it, "features", {}) or {}).items()))))
    return out
