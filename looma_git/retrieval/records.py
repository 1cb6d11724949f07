"""WorkItem and memory records for retrieval, built from the ledger fold (plus local candidates)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the fold's types; a resume served from the snapshot never imports them
    from looma_git.domain import Memory
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
    """Live WorkItems of the fold (merged-away, split and false-positive ones excluded), read
    from its domain values: a field a hostile or foreign op wrote with the wrong type reads as
    empty there, so no teammate's op can stop resume or work on this clone."""
    from looma_git.pipeline.confidence import band

    out = []
    for w in state.work_items():
        branches = {c.branch for c in w.commits if c.branch and c.branch not in TRUNKS}
        out.append(ItemRecord(
            id=w.id, title=w.title, kind=w.kind, status=w.status, lifecycle="active",
            confidence=w.confidence, band=w.band or band(w.confidence),
            files=tuple(f for f in w.files if isinstance(f, str)),
            aliases=tuple(a for a in w.aliases if isinstance(a, str)), branch=w.branch,
            summary=w.summary, sessions=tuple(sorted((s.agent, s.id) for s in w.sessions)),
            commits=tuple(LinkRecord(sha=c.sha, confidence=c.confidence, by=c.by)
                          for c in w.commits),
            memories=tuple(_memory(m) for m in w.memories),
            updated=w.last_active or w.updated, promoted=True, features=w.features,
            branches=tuple(sorted(branches | ({w.branch} if w.branch else set()))),
            prompts=tuple(dict.fromkeys(e.quote[:300] for e in w.evidence if e.quote))[:3]))
    return out


def _memory(m: Memory) -> MemoryRecord:
    from looma_git.pipeline.confidence import band

    # The first quote is the memory's source (what bundle, ask and MCP show); the ledger keeps
    # every quote, the read model (and its snapshot) only that one, in the ledger's five keys.
    return MemoryRecord(
        id=m.id, kind=m.kind, text=m.text, workitem=m.workitem, confidence=m.confidence,
        band=m.band or band(m.confidence), lifecycle=m.lifecycle, promoted=True,
        evidence=tuple({"quote": e.quote, "agent": e.agent, "session": e.session,
                        "event": e.event, "hash": e.hash} for e in m.evidence[:1]),
        said_at=m.said_at, superseded_by=m.superseded_by)
