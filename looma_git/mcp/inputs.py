"""Pydantic input schemas of the MCP tools: what a client may send, and nothing else."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from looma_git.mcp.tools import ANY_ID, WORK_ID
from looma_git.wire.mcp import SplitPart

WorkId = Annotated[str, Field(pattern=WORK_ID, description="a WorkItem id (wi_...) from "
                                                           "list_work or resume_work")]
AnyId = Annotated[str, Field(pattern=ANY_ID, description="an explicit id: wi_/mem_/cand_/lw_ + "
                                                         "hex, or a ledger op id (hex) for undo")]
Cursor = Annotated[str | None, Field(default=None, pattern=r"^[0-9]{1,9}$",
                                     description="next_cursor of the previous page; omit for "
                                                 "the first page")]


class _Args(BaseModel):
    # Unknown arguments are refused, not silently ignored: a misspelt `budget` would otherwise
    # quietly fall back to the default.
    model_config = ConfigDict(extra="forbid")


class ResumeArgs(_Args):
    goal: str | None = Field(default=None, max_length=500, description=(
        "what you want to work on, in a few words (a topic, a file path or a branch name); "
        "omit for the most recently active work"))
    work: WorkId | None = Field(default=None, description="resume this WorkItem id exactly")
    budget: int = Field(default=2000, ge=500, le=20000, description=(
        "token budget of the whole result (bundle, candidates and text alike)"))


class AskArgs(_Args):
    query: str = Field(min_length=1, max_length=500, description="a question or keywords")
    limit: int = Field(default=10, ge=1, le=50, description="at most this many facts")


class ListWorkArgs(_Args):
    status: Literal["active", "done", "abandoned"] | None = Field(
        default=None, description="only WorkItems with this status")
    limit: int = Field(default=20, ge=1, le=200, description="WorkItems per page")
    cursor: Cursor = None


class TimelineArgs(_Args):
    work: WorkId
    limit: int = Field(default=50, ge=1, le=500, description="entries per page")
    cursor: Cursor = None


class RecallArgs(_Args):
    entity: str = Field(min_length=2, max_length=300, description=(
        "a file path, commit sha prefix, branch, session id or term"))
    limit: int = Field(default=10, ge=1, le=50, description="WorkItems per page")
    cursor: Cursor = None


class CorrectArgs(_Args):
    action: Literal["merge", "split", "rename", "false_positive", "promote", "reject",
                    "undo"] = Field(description="the correction")
    refs: list[AnyId] = Field(min_length=1, max_length=2, description=(
        "explicit ids. merge: [from_id, into_id] (from is fused into into); split, rename: "
        "[work_id]; false_positive, promote, reject: [node_id]; undo: [op_id]"))
    rationale: str | None = Field(default=None, max_length=2000,
                                  description="why; kept in the ledger")
    title: str | None = Field(default=None, min_length=1, max_length=200,
                              description="rename only: the new title")
    parts: list[SplitPart] | None = Field(default=None, min_length=2, max_length=20,
                                          description="split only: the parts, each a title and "
                                                      "its members")
    by: Literal["sessions", "files"] = Field(default="sessions", description=(
        "split only: members are session ids or file paths"))
