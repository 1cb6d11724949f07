"""Pydantic wire schemas for --json and MCP: the stable contract, kept apart from internals."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class SessionRef(BaseModel):
    agent: str
    id: str


class WorkItemOut(BaseModel):
    """One WorkItem in `looma work --json` (DESIGN §6)."""

    id: str
    title: str
    kind: str
    status: str
    lifecycle: str
    confidence: float
    band: str
    files: list[str]
    commits: list[str]
    sessions: list[SessionRef]
    promoted: bool = True
    branch: str | None = None
    summary: str = ""
    features: dict[str, float] = Field(default_factory=dict)


class WorkOut(BaseModel):
    workitems: list[WorkItemOut]


class CandidateOut(BaseModel):
    """A WorkItem considered by `resume`, with why it matched."""

    id: str
    letter: str
    title: str
    kind: str
    status: str
    confidence: float
    band: str
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
    candidates: list[CandidateOut]
    bundle: dict[str, Any] | None
    recent: list[CandidateOut] = Field(default_factory=list)
    message: str = ""


class FactOut(BaseModel):
    """One `ask` result with provenance, confidence and band."""

    type: str
    id: str
    workitem: str | None
    workitem_title: str | None = None
    text: str
    confidence: float | None
    band: str | None
    status: Literal["confirmed", "unconfirmed"]
    source: dict[str, Any] = Field(default_factory=dict)
    score: float = 0.0
    lifecycle: str | None = None  # memories: active | superseded | expired | invalidated


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


class ErrorBody(BaseModel):
    """The one failure shape of every `--json` command (exit code as documented)."""

    code: str  # not_found | ambiguous | usage | stale_letter | not_initialized | ... | internal
    message: str
    hint: str | None = None
    exit_code: int
    matches: list[str] = Field(default_factory=list)


class ErrorOut(BaseModel):
    error: ErrorBody


class CorrectionOut(BaseModel):
    """`looma correct ... --json`: the op a correction wrote, and how to undo it."""

    op_id: str
    op: str
    target: str
    summary: str
    undo: str


class LinkOut(BaseModel):
    """`looma link/unlink --json`: the resolved commit and WorkItem, and the undo."""

    op_id: str
    op: Literal["commit.link", "commit.unlink"]
    sha: str
    workitem: str
    title: str
    undo: str


class InitOut(BaseModel):
    """`looma init --json`."""

    state_dir: str
    clone_id: str
    created: bool  # False: it was already initialized
    config_changed: list[str]
    ledger_created: bool
