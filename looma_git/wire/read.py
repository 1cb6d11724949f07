"""Wire models of the read path's --json output: work, resume, ask, timeline, recall."""

from __future__ import annotations

from typing import Any, Literal

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


class ResumeOut(BaseModel):
    """`looma resume --json` (DESIGN §6): for confident, candidates[0] is the one."""

    state: Literal["confident", "ambiguous", "cold"]
    goal: str | None
    candidates: list[ResumeMatchOut]
    bundle: dict[str, Any] | None
    recent: list[ResumeMatchOut] = Field(default_factory=list)
    message: str = ""


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


class FactOut(FactHead):
    """One `ask` result with provenance, confidence and band."""

    text: str
    source: dict[str, Any] = Field(default_factory=dict)


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


class RecallOut(BaseModel):
    """`looma recall ENTITY --json`."""

    entity: str
    results: list[RecallHit]
    resolved: list[str] = Field(default_factory=list)  # the commit a rev named
