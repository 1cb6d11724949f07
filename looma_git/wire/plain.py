"""Plain twins of the read commands' wire models; pydantic is imported only to dump them.

`resume`, `ask`, `work`, `timeline`, `recall` build these dataclasses, so a text answer never imports
pydantic (~0.15 s of a fresh process). Each top-level result has `model_dump`, which
validates it through its `looma_git.wire.cli` model and dumps that: `--json` and MCP output
stay exactly the stable contract the schemas define.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar


class _Wire:
    """Dump through the wire schema named by `_schema`."""

    _schema: ClassVar[str]

    def model_dump(self, *, mode: str = "python", **kw: Any) -> dict[str, Any]:
        from looma_git.wire import cli as schemas

        model = getattr(schemas, self._schema)
        data = dataclasses.asdict(self)  # type: ignore[call-overload]
        return dict(model.model_validate(data).model_dump(mode=mode, **kw))


@dataclass
class SessionRef(_Wire):
    """An agent session as looma names it."""

    _schema: ClassVar[str] = "SessionRef"
    agent: str
    id: str


@dataclass
class WorkItemOut(_Wire):
    """One line of `looma work`."""

    _schema: ClassVar[str] = "WorkItemOut"
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
    features: dict[str, float] = field(default_factory=dict)


@dataclass
class WorkOut(_Wire):
    """`looma work`."""

    _schema: ClassVar[str] = "WorkOut"
    workitems: list[WorkItemOut]


@dataclass
class ResumeMatchOut(_Wire):
    """A WorkItem offered by `resume`, with how well it matched."""

    _schema: ClassVar[str] = "ResumeMatchOut"
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


@dataclass
class ResumeOut(_Wire):
    """`looma resume`."""

    _schema: ClassVar[str] = "ResumeOut"
    state: str
    goal: str | None
    candidates: list[ResumeMatchOut]
    bundle: dict[str, Any] | None  # retrieval.bundle.Bundle.as_dict(): a wire.read.BundleOut
    recent: list[ResumeMatchOut] = field(default_factory=list)
    message: str = ""


@dataclass
class FactOut(_Wire):
    """One answer of `ask`."""

    _schema: ClassVar[str] = "FactOut"
    type: str
    id: str
    workitem: str | None
    text: str
    confidence: float | None
    band: str | None
    status: str
    workitem_title: str | None = None
    source: dict[str, Any] = field(default_factory=dict)  # a wire.read.FactSource
    score: float = 0.0
    lifecycle: str | None = None


@dataclass
class AskOut(_Wire):
    """`looma ask`."""

    _schema: ClassVar[str] = "AskOut"
    query: str
    facts: list[FactOut]


@dataclass
class TimelineEntry(_Wire):
    """One dated line of a timeline."""

    _schema: ClassVar[str] = "TimelineEntry"
    ts: str
    kind: str
    text: str
    ref: str = ""
    actor: str = ""
    confidence: float | None = None
    band: str | None = None


@dataclass
class TimelineOut(_Wire):
    """`looma timeline`."""

    _schema: ClassVar[str] = "TimelineOut"
    workitem: str
    title: str
    entries: list[TimelineEntry]
    confidence: float | None = None
    band: str | None = None


@dataclass
class RecallMemoryOut(_Wire):
    """A memory of a recalled WorkItem that mentions the entity."""

    _schema: ClassVar[str] = "RecallMemoryOut"
    id: str
    kind: str
    text: str
    confidence: float
    band: str
    lifecycle: str


@dataclass
class RecallHit(_Wire):
    """One WorkItem that mentions the entity, and why."""

    _schema: ClassVar[str] = "RecallHit"
    workitem: WorkItemOut
    why: list[str]
    memories: list[RecallMemoryOut]


@dataclass
class RecallOut(_Wire):
    """`looma recall`."""

    _schema: ClassVar[str] = "RecallOut"
    entity: str
    results: list[RecallHit]
    resolved: list[str] = field(default_factory=list)
