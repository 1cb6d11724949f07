"""The domain model every layer shares: WorkItem, Memory, CommitLink, SessionRef, Evidence and
the transcript types (frozen dataclasses, no I/O; the ledger fold emits the first three)."""

from looma_git.domain.evidence import Evidence
from looma_git.domain.session import SessionRef
from looma_git.domain.transcript import ROLES, TOOL_KINDS, NormalizedEvent, ToolCall
from looma_git.domain.workitem import CommitLink, Memory, WorkItem

__all__ = ["ROLES", "TOOL_KINDS", "CommitLink", "Evidence", "Memory",
           "NormalizedEvent", "SessionRef", "ToolCall", "WorkItem"]
