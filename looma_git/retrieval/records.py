"""WorkItem and memory records for retrieval, built from the ledger fold (plus local candidates)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the fold's types; a resume served from the snapshot never imports them
    from looma_git.ledger.state import LedgerState

TRUNKS = frozenset({"main", "master", "trunk", "develop", "HEAD"})


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
    superseded_by: str | None = None


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
    branches: tuple[str, ...] = ()  # its own branch and its linked commits' branches
    prompts: tuple[str, ...] = ()  # the effort's own words: opening requests it was made from

    def text_fields(self) -> str:
        """Everything searchable about the item, for matching and indexing."""
        mems = " ".join(m.text for m in self.memories if m.lifecycle == "active")
        return " ".join([self.title, " ".join(self.aliases), " ".join(self.files),
                         " ".join(self.branches), " ".join(self.prompts), self.summary, mems])


def from_ledger(state: LedgerState) -> list[ItemRecord]:
    """Live WorkItems of the fold (merged-away, split and false-positive ones excluded)."""
    from looma_git.pipeline.confidence import band

    links_by_wi: dict[str, list[LinkRecord]] = {}
    branches_by_wi: dict[str, set[str]] = {}
    for (sha, wi), link in sorted(state.links.items()):
        links_by_wi.setdefault(wi, []).append(
            LinkRecord(sha=sha, confidence=link.confidence, by=link.by))
        if link.branch and link.branch not in TRUNKS:
            branches_by_wi.setdefault(wi, set()).add(link.branch)
    mems_by_wi: dict[str, list[MemoryRecord]] = {}
    for mid, m in sorted(state.memories.items()):
        if m.false_positive or m.forced == "reject":
            continue
        mems_by_wi.setdefault(m.workitem or "", []).append(MemoryRecord(
            id=mid, kind=m.kind, text=m.text, workitem=m.workitem, confidence=m.confidence,
            band=m.band or band(m.confidence), lifecycle=m.lifecycle or "active", promoted=True,
            # The first quote is the memory's source (what bundle, ask and MCP show); the
            # ledger keeps every quote, the read model (and its snapshot) only that one.
            evidence=tuple(dict(e) for e in m.evidence[:1]), said_at=m.said_at,
            superseded_by=m.superseded_by))
    out = []
    for wid, it in sorted(state.workitems.items()):
        if it.merged_into or it.false_positive or it.split_into:
            continue
        out.append(ItemRecord(
            id=wid, title=it.title, kind=it.kind, status=it.status or "active",
            lifecycle="active", confidence=it.confidence, band=it.band or band(it.confidence),
            files=it.files, aliases=it.aliases, branch=it.branch, summary=it.summary,
            sessions=tuple(sorted((str(s.get("agent")), str(s.get("id")))
                                  for s in it.sessions)),
            commits=tuple(links_by_wi.get(wid, [])), memories=tuple(mems_by_wi.get(wid, [])),
            updated=it.last_active or it.updated_ts, promoted=True,
            features=tuple(sorted(it.features.items())),
            branches=tuple(sorted(branches_by_wi.get(wid, set()) | (
                {it.branch} if it.branch else set()))),
            prompts=tuple(dict.fromkeys(str(e.get("quote") or "")[:300] for e in it.evidence
                                        if e.get("quote")))[:3]))
    return out
