"""Pydantic wire schemas for every --json output (and MCP): the stable contract, one home.

`WIRE` names the shape of each command's `--json` document; tests/cli/test_wire.py runs the
commands and validates their real output against these models (and fails on a command with
`--json` that is missing here). A failure under `--json` is always `ErrorOut`. The models live in
wire/read.py, wire/ledger.py and wire/results.py; they are re-exported here under their old names.
"""

from __future__ import annotations

from pydantic import BaseModel

from looma_git.wire.ledger import (
    ActorOut,
    BlameOpOut,
    BlameOut,
    CorrectionOut,
    ErrorBody,
    ErrorOut,
    LinkOut,
    LogOut,
    OpOut,
    VerifyOut,
)
from looma_git.wire.read import (
    AskOut,
    FactOut,
    RecallHit,
    RecallOut,
    ResumeMatchOut,
    ResumeOut,
    SessionRef,
    TimelineEntry,
    TimelineOut,
    WorkItemHead,
    WorkItemOut,
    WorkOut,
)
from looma_git.wire.results import (
    AgentIngestOut,
    AgentSummary,
    ConflictOpOut,
    ConflictOut,
    ConflictsOut,
    DrainResult,
    HookChangeOut,
    HookOut,
    HooksStatus,
    IngestOut,
    IngestReport,
    InitOut,
    InstallResult,
    PrepushOut,
    RefineOut,
    ReindexOut,
    RejectedOut,
    RelinkMatchOut,
    RelinkMissOut,
    RelinkReport,
    ShareChangeOut,
    ShareStatusOut,
    StateOut,
    StatusOut,
    SyncOut,
)

__all__ = [
    "WIRE",
    "ActorOut",
    "AgentIngestOut",
    "AgentSummary",
    "AskOut",
    "BlameOpOut",
    "BlameOut",
    "ConflictOpOut",
    "ConflictOut",
    "ConflictsOut",
    "CorrectionOut",
    "DrainResult",
    "ErrorBody",
    "ErrorOut",
    "FactOut",
    "HookChangeOut",
    "HookOut",
    "HooksStatus",
    "IngestOut",
    "IngestReport",
    "InitOut",
    "InstallResult",
    "LinkOut",
    "LogOut",
    "OpOut",
    "PrepushOut",
    "RecallHit",
    "RecallOut",
    "RefineOut",
    "ReindexOut",
    "RejectedOut",
    "RelinkMatchOut",
    "RelinkMissOut",
    "RelinkReport",
    "ResumeMatchOut",
    "ResumeOut",
    "SessionRef",
    "ShareChangeOut",
    "ShareStatusOut",
    "StateOut",
    "StatusOut",
    "SyncOut",
    "TimelineEntry",
    "TimelineOut",
    "VerifyOut",
    "WorkItemHead",
    "WorkItemOut",
    "WorkOut",
    "wire_model",
]


# command path -> the model of its --json document.
WIRE: dict[str, type[BaseModel]] = {
    "work": WorkOut,
    "resume": ResumeOut,
    "ask": AskOut,
    "timeline": TimelineOut,
    "recall": RecallOut,
    "status": StatusOut,
    "log": LogOut,
    "blame": BlameOut,
    "verify": VerifyOut,
    "ingest": IngestOut,
    "reprocess": RefineOut,
    "backfill": RefineOut,
    "reindex": ReindexOut,
    "init": InitOut,
    "link": LinkOut,
    "unlink": LinkOut,
    "correct merge": CorrectionOut,
    "correct split": CorrectionOut,
    "correct rename": CorrectionOut,
    "correct false-positive": CorrectionOut,
    "correct promote": CorrectionOut,
    "correct reject": CorrectionOut,
    "correct undo": CorrectionOut,
    "hooks install": InstallResult,
    "hooks uninstall": InstallResult,
    "hooks status": HooksStatus,
    "share enable": ShareChangeOut,
    "share disable": ShareChangeOut,
    "share status": ShareStatusOut,
    "sync": SyncOut,
    "conflicts": ConflictsOut,
    "relink": RelinkReport,
}


def wire_model(command: str) -> type[BaseModel]:
    """The model of `command`'s --json output (`KeyError` when it has none)."""
    return WIRE[command]
