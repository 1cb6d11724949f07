"""The read index's projection of domain.WorkItem/Memory/CommitLink: what queries rank and show.

A WorkItem exists in one shape, looma_git.domain.WorkItem, which the ledger fold emits
(LedgerState.work_items()). ItemRecord is not a second one: it is that value projected,
field by field, onto what resume/work/ask/recall/timeline read and what the per-head
snapshot (retrieval/snapshot.py) stores, plus two index fields derived from it (`branches`,
`prompts`). It is built by one constructor, `ItemRecord.of(WorkItem)` (MemoryRecord.of,
LinkRecord.of for its parts); the snapshot restores saved projections. Unpromoted local
candidates become domain values first (`local_work_item`), then the same projection.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the fold's types; a resume served from the snapshot never imports them
    from looma_git.domain import CommitLink, Memory, WorkItem
    from looma_git.ledger.state import LedgerState

TRUNKS = frozenset({"main", "master", "trunk", "develop", "HEAD"})
PROMPT_CHARS = 300  # of an opening request kept for matching
PROMPTS = 3


def _band(confidence: float) -> str:
    from looma_git.pipeline.confidence import band

    return band(confidence)


@dataclass(frozen=True)
class MemoryRecord:
    """domain.Memory as the read index keeps it: its first quote only (what bundle, ask and
    MCP show), in the ledger's five evidence keys, so the snapshot stays small."""

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

    @classmethod
    def of(cls, m: Memory) -> MemoryRecord:
        return cls(
            id=m.id, kind=m.kind, text=m.text, workitem=m.workitem, confidence=m.confidence,
            band=m.band or _band(m.confidence), lifecycle=m.lifecycle, promoted=m.promoted,
            evidence=tuple({"quote": e.quote, "agent": e.agent, "session": e.session,
                            "event": e.event, "hash": e.hash} for e in m.evidence[:1]),
            said_at=m.said_at, superseded_by=m.superseded_by)


@dataclass(frozen=True)
class LinkRecord:
    """domain.CommitLink as the read index keeps it: which commit, how sure, what linked it."""

    sha: str
    confidence: float
    by: str

    @classmethod
    def of(cls, c: CommitLink) -> LinkRecord:
        return cls(sha=c.sha, confidence=c.confidence, by=c.by)


@dataclass(frozen=True)
class ItemRecord:
    """domain.WorkItem as every read command sees it (see the module docstring).

    Projection rules: `sessions` as sorted (agent, id) pairs; `updated` is when the work
    last moved (`last_active`, else the ledger's `updated`); `band` falls back to the
    confidence's; `lifecycle` is "active" (only live WorkItems are projected); `branches`
    its own branch and its linked commits' non-trunk branches; `prompts` its first few
    distinct evidence quotes (the opening requests it was made from)."""

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

    @classmethod
    def of(cls, w: WorkItem) -> ItemRecord:
        """The projection of one live domain WorkItem (the only way a record is made)."""
        branches = {c.branch for c in w.commits if c.branch and c.branch not in TRUNKS}
        return cls(
            id=w.id, title=w.title, kind=w.kind, status=w.status, lifecycle="active",
            confidence=w.confidence, band=w.band or _band(w.confidence),
            files=tuple(f for f in w.files if isinstance(f, str)),
            aliases=tuple(a for a in w.aliases if isinstance(a, str)), branch=w.branch,
            summary=w.summary, sessions=tuple(sorted((s.agent, s.id) for s in w.sessions)),
            commits=tuple(LinkRecord.of(c) for c in w.commits),
            memories=tuple(MemoryRecord.of(m) for m in w.memories),
            updated=w.last_active or w.updated, promoted=w.promoted, features=w.features,
            branches=tuple(sorted(branches | ({w.branch} if w.branch else set()))),
            prompts=tuple(dict.fromkeys(e.quote[:PROMPT_CHARS] for e in w.evidence
                                        if e.quote))[:PROMPTS])

    def text_fields(self) -> str:
        """Everything searchable about the item, for matching and indexing."""
        mems = " ".join(m.text for m in self.memories if m.lifecycle == "active")
        return " ".join([self.title, " ".join(self.aliases), " ".join(self.files),
                         " ".join(self.branches), " ".join(self.prompts), self.summary, mems])


def from_ledger(state: LedgerState) -> list[ItemRecord]:
    """Live WorkItems of the fold (merged-away, split and false-positive ones excluded), read
    from its domain values: a field a hostile or foreign op wrote with the wrong type reads as
    empty there, so no teammate's op can stop resume or work on this clone."""
    return [ItemRecord.of(w) for w in state.work_items()]


def _strs(v: Any) -> tuple[str, ...]:
    return tuple(x for x in v if isinstance(x, str)) if isinstance(v, (list, tuple)) else ()


def local_memory(mid: str, m: Mapping[str, Any]) -> Memory:
    """A memory of the last refinery pass that is not in the ledger (store.db's
    refine_memories row) as a domain Memory, `promoted=False`."""
    from looma_git.domain import Evidence, Memory

    conf = m.get("confidence") or {}
    value = float(conf.get("value", 0.0)) if isinstance(conf, dict) else 0.0
    return Memory(id=mid, kind=str(m.get("kind", "decision")), text=str(m.get("text") or ""),
                  workitem=str(m["workitem"]) if m.get("workitem") else None,
                  confidence=value, band=_band(value),
                  lifecycle=str(m.get("lifecycle") or "active"),
                  superseded_by=m.get("superseded_by"),
                  evidence=tuple(Evidence.from_mapping(e) for e in m.get("evidence") or ()
                                 if isinstance(e, Mapping)),
                  said_at=str(m.get("ts") or ""), promoted=False)


def local_work_item(wid: str, w: Mapping[str, Any], memories: tuple[Memory, ...] = (), *,
                    scored: bool = False) -> WorkItem:
    """An unpromoted WorkItem of the last refinery pass (store.db's refine_workitems row) as
    a domain WorkItem, `promoted=False`, status "candidate": ask ranks these as unconfirmed
    facts by their memories, never by a score the ledger has not accepted (confidence 0).
    `scored` (`work --candidates`): also the pass's own confidence, band, features, sessions
    and commits, so the listing shows what the refinery proposed."""
    from looma_git.domain import CommitLink, Evidence, SessionRef, WorkItem

    branch = w.get("branch")
    item = WorkItem(id=wid, title=str(w.get("title", "")), kind=str(w.get("kind", "feature")),
                    status="candidate", summary=str(w.get("summary", "")),
                    files=_strs(w.get("files")), aliases=_strs(w.get("aliases")),
                    branch=branch if isinstance(branch, str) else None, confidence=0.0,
                    band="low", memories=memories, promoted=False,
                    evidence=tuple(Evidence.from_mapping(e) for e in w.get("evidence") or ()
                                   if isinstance(e, Mapping)))
    if not scored:
        return item
    from dataclasses import replace

    conf = w.get("confidence")
    conf = conf if isinstance(conf, Mapping) else {}
    value = float(conf.get("value", 0.0))
    sessions = w.get("sessions") or ()
    return replace(
        item, confidence=value, band=str(conf.get("band", "low")),
        features=tuple((str(k), float(v)) for k, v in conf.get("features") or ()),
        sessions=tuple(SessionRef(str(a), str(sid)) for a, sid in sessions),
        commits=tuple(CommitLink(sha=sha, workitem=wid, confidence=value, by="backfill")
                      for sha in _strs(w.get("commits"))))
