"""Wire models of the read path's --json output: work, resume, ask, timeline, recall."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SessionRef(BaseModel):
    agent: str
    id: str


class WorkItemHead(BaseModel):
    """The fields every WorkItem-shaped row opens with (CLI and MCP rows extend it)."""

    id: str
    title: str
    kind: str
    status: str


class Rated(WorkItemHead):
    """A WorkItem head with its confidence and band (every WorkItem-shaped row has them)."""

    confidence: float
    band: str


class WorkItemOut(Rated):
    """One WorkItem in `looma work --json` (DESIGN §6)."""

    lifecycle: str
    files: list[str]
    commits: list[str]
    sessions: list[SessionRef]
    promoted: bool = True
    branch: str | None = None
    summary: str = ""
    features: dict[str, float] = Field(default_factory=dict)


class WorkOut(BaseModel):
    workitems: list[WorkItemOut]


class ResumeMatchOut(Rated):
    """A WorkItem considered by `resume`, with why it matched."""

    letter: str
    match: float
    matched_terms: list[str]
    files: list[str]
    commits: list[str]
    sessions: list[SessionRef]
    last_active: str = ""


class ResumeHead(BaseModel):
    """What every resume outcome opens with (CLI and MCP)."""

    state: Literal["confident", "ambiguous", "cold"]
    goal: str | None
    message: str = ""


class GitStateOut(BaseModel):
    """The worktree a bundle was made in: branch, short HEAD, modified/untracked paths."""

    branch: str | None = None
    head: str | None = None
    dirty: list[str] = Field(default_factory=list)


class CommitOut(BaseModel):
    """A commit of the bundle's WorkItem (short sha), most recent first."""

    sha: str
    subject: str
    date: str = ""


class SessionOut(SessionRef):
    """A session of the bundle's WorkItem, with what store.db knows of it (nothing when this
    clone never read it)."""

    first: str | None = None
    last: str | None = None
    events: int | None = None


class EvidenceSource(BaseModel):
    """Where a bundle memory was said: the agent session and event."""

    agent: str | None = None
    session: str | None = None
    event: str | None = None


class BundleMemoryOut(BaseModel):
    """A decision, todo, bug or architecture note in a resume bundle."""

    id: str
    text: str
    confidence: float
    band: str
    promoted: bool = True
    source: EvidenceSource = Field(default_factory=EvidenceSource)


class BundleWorkItemOut(Rated):
    """The resumed WorkItem, as its bundle opens with it."""

    summary: str = ""
    branch: str | None = None


class BundleOut(BaseModel):
    """What a confident `resume` hands over, under a token budget (retrieval/bundle.py):
    protected sections (open todos, bugs, active decisions) are never cut; every cut is
    counted in `overflow` (section -> items left out)."""

    workitem: BundleWorkItemOut
    git: GitStateOut
    decisions: list[BundleMemoryOut] = Field(default_factory=list)
    todos: list[BundleMemoryOut] = Field(default_factory=list)
    bugs: list[BundleMemoryOut] = Field(default_factory=list)
    architecture: list[BundleMemoryOut] = Field(default_factory=list)
    commits: list[CommitOut] = Field(default_factory=list)
    sessions: list[SessionOut] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    budget: int
    used: int
    overflow: dict[str, int] = Field(default_factory=dict)
    protected_over_budget: bool = False
    evidence_notice: str = ""


class ResumeOut(ResumeHead):
    """`looma resume --json` (DESIGN §6): for confident, candidates[0] is the one."""

    candidates: list[ResumeMatchOut]
    bundle: BundleOut | None
    recent: list[ResumeMatchOut] = Field(default_factory=list)


class FactHead(BaseModel):
    """What every answer of `ask` carries (the CLI's `text` is MCP's `evidence`)."""

    type: str  # workitem | decision | todo | bug | architecture | message
    id: str
    workitem: str | None
    workitem_title: str | None = None
    confidence: float | None
    band: str | None
    status: Literal["confirmed", "unconfirmed"]
    score: float = 0.0
    lifecycle: str | None = None  # memories: active | superseded | expired | invalidated


class FactSource(BaseModel):
    """Where an `ask` fact was said (a memory's first evidence quote, or a transcript message)
    and how it was found."""

    agent: str | None = None
    session: str | None = None
    event: str | None = None
    hash: str | None = None
    quote: str | None = None
    found_by: str | None = None  # how a memory was found when not by its words
    superseded_by: str | None = None  # the memory that replaced this one


class FactOut(FactHead):
    """One `ask` result with provenance, confidence and band."""

    text: str
    source: FactSource = Field(default_factory=FactSource)


class AskOut(BaseModel):
    query: str
    facts: list[FactOut]


class TimelineEntry(BaseModel):
    ts: str
    kind: str  # op | session | commit | decision | todo | bug | architecture
    text: str
    ref: str = ""
    actor: str = ""
    confidence: float | None = None  # memories and commit links carry theirs
    band: str | None = None


class TimelineOut(BaseModel):
    workitem: str
    title: str
    entries: list[TimelineEntry]
    confidence: float | None = None
    band: str | None = None


class MemoryHead(BaseModel):
    """A memory as a recalled WorkItem lists it (the CLI's `text` is MCP's `evidence`)."""

    id: str
    kind: str
    confidence: float
    band: str
    lifecycle: str


class RecallMemoryOut(MemoryHead):
    """A memory of a recalled WorkItem whose text mentions the entity."""

    text: str


class RecallHit(BaseModel):
    workitem: WorkItemOut
    why: list[str]  # file | commit | branch | session | title | memory
    memories: list[RecallMemoryOut]


class RecallHead(BaseModel):
    """What names the entity a recall answered (CLI and MCP)."""

    entity: str
    resolved: list[str] = Field(default_factory=list)  # the commit a rev (HEAD~2, a tag) named


class RecallOut(RecallHead):
    """`looma recall ENTITY --json`."""

    results: list[RecallHit]
