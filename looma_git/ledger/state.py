"""The folded ledger state: WorkItems, memories, commit links, constraints and conflicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from looma_git.domain import WorkItem
from looma_git.ledger import emit


@dataclass
class WorkItemState:
    """One WorkItem as the fold leaves it, field for field what `workitems/<id>.yaml` holds;
    `ops` lists every op that shaped it (for blame). Readers take `domain.WorkItem`
    (`LedgerState.work_items`), which this record is emitted as."""

    id: str
    title: str = ""
    kind: str = "feature"
    status: str = "active"
    summary: str = ""
    files: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    branch: str | None = None
    confidence: float = 0.0
    band: str = "low"
    features: dict[str, float] = field(default_factory=dict)
    evidence: tuple[dict[str, Any], ...] = ()
    sessions: tuple[dict[str, str], ...] = ()
    pinned_title: bool = False
    # The title the ops gave it (create, update, rename payloads), whatever derive has set
    # since: what a rename turns into an alias, so a fold in batches (each append derives)
    # and a full fold (one derive at the end) alias the same title.
    op_title: str = ""
    # The `last_active` the ops gave it: derive takes the latest of it and the evidence's
    # stamps now, not of every stamp an earlier derive saw (a relinked commit's old time).
    op_last_active: str = ""
    forced: str | None = None  # None | "promote" | "reject"
    merged_into: str | None = None
    split_from: str | None = None
    split_into: tuple[str, ...] = ()
    false_positive: bool = False
    created_lamport: int = 0
    updated_lamport: int = 0
    updated_ts: str = ""
    last_active: str = ""  # when the work itself last moved (session or commit), not the op
    created_by_op: str = ""
    ops: tuple[str, ...] = ()

    @property
    def live(self) -> bool:
        """Shown anywhere: not a false positive and not merged away."""
        return not self.false_positive and self.merged_into is None


@dataclass
class MemoryState:
    """A promoted memory as the fold leaves it (`memories/<id>.yaml`); emitted as
    `domain.Memory`."""

    id: str
    kind: str = "decision"
    text: str = ""
    said_at: str = ""  # when the transcript said it (the op's ts is when looma wrote it)
    workitem: str | None = None
    confidence: float = 0.0
    band: str = "low"
    features: dict[str, float] = field(default_factory=dict)
    lifecycle: str = "active"
    superseded_by: str | None = None
    evidence: tuple[dict[str, Any], ...] = ()
    forced: str | None = None
    false_positive: bool = False
    created_lamport: int = 0
    updated_lamport: int = 0
    ops: tuple[str, ...] = ()


@dataclass
class LinkState:
    """A live commit -> WorkItem link (the notes ref is a projection of these); emitted as
    `domain.CommitLink`."""

    sha: str
    workitem: str
    confidence: float = 0.0
    by: str = "hook"
    patch_id: str | None = None
    files: tuple[str, ...] = ()
    branch: str | None = None
    why: dict[str, float] | None = None  # what the link rests on (docs/format.md commit.link)
    title: str = ""
    user: bool = False  # set by a user op: system ops cannot replace or remove it
    op: str = ""
    subject: str = ""  # the commit's subject, recorded by the linking clone (for derivation)
    ts: str = ""  # the commit's time


@dataclass
class Constraints:
    """User decisions the refinery must honour before any score (DESIGN §2.1)."""

    must_link: set[tuple[str, str]] = field(default_factory=set)
    cannot_link: set[tuple[str, str]] = field(default_factory=set)
    partitions: dict[str, dict[str, Any]] = field(default_factory=dict)  # part id -> routing
    pinned_titles: dict[str, str] = field(default_factory=dict)
    false_positives: set[str] = field(default_factory=set)
    forced: dict[str, str] = field(default_factory=dict)  # id -> "promote" | "reject"
    unlinked: set[tuple[str, str]] = field(default_factory=set)  # (sha, workitem)

    def is_false_positive(self, node_id: str) -> bool:
        return node_id in self.false_positives

    def cannot(self, a: str, b: str) -> bool:
        return (min(a, b), max(a, b)) in self.cannot_link

    def must(self, a: str, b: str) -> bool:
        return (min(a, b), max(a, b)) in self.must_link


@dataclass(frozen=True)
class Conflict:
    """Concurrent user intents on one target from clones that had not seen each other."""

    target: str
    ops: tuple[str, ...]
    kind: str  # "rename" | "merge_split" | "split"
    winner: str


@dataclass
class LedgerState:
    """The fold of all effective ops in (lamport, id) order."""

    workitems: dict[str, WorkItemState] = field(default_factory=dict)
    memories: dict[str, MemoryState] = field(default_factory=dict)
    links: dict[tuple[str, str], LinkState] = field(default_factory=dict)
    rewrites: dict[str, str] = field(default_factory=dict)
    constraints: Constraints = field(default_factory=Constraints)
    conflicts: list[Conflict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    head_lamport: int = 0
    # wi id -> "agent:session" -> merged observation (ledger/derive.py); not a projection
    observations: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # wi id -> the clone whose system op created it (pipeline/converge.py); not a projection
    origins: dict[str, str] = field(default_factory=dict)

    def survivor(self, wi_id: str) -> str:
        """Follow `merged_into` to the WorkItem that absorbed `wi_id` (cycle-safe)."""
        wi = self.workitems.get(wi_id)
        if wi is None or not wi.merged_into:
            return wi_id  # the usual case, asked once per memory and observation per finish
        seen = set()
        cur = wi_id
        while cur in self.workitems and self.workitems[cur].merged_into and cur not in seen:
            seen.add(cur)
            cur = self.workitems[cur].merged_into or cur
        return cur

    def resolve_sha(self, sha: str) -> str:
        """Follow recorded rewrites (amend/rebase) to the current sha."""
        seen = set()
        while sha in self.rewrites and sha not in seen:
            seen.add(sha)
            sha = self.rewrites[sha]
        return sha

    def live_links(self) -> list[LinkState]:
        """Links to live WorkItems, sorted by (sha, workitem)."""
        out = []
        for key in sorted(self.links):
            link = self.links[key]
            wi = self.workitems.get(link.workitem)
            if wi is not None and wi.live:
                out.append(link)
        return out

    def work_items(self, *, listed: bool = True) -> tuple[WorkItem, ...]:
        """The WorkItems as domain values, sorted by id, with their links and memories:
        those a listing shows (live, not split up), or with `listed=False` every one."""
        return emit.listed(self) if listed else emit.workitems(self)

    def work_item(self, wi_id: str) -> WorkItem | None:
        """One WorkItem (followed through merges) as a domain value."""
        found = emit.workitems(self, [self.survivor(wi_id)])
        return found[0] if found else None
