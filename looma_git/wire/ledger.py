"""Wire models of errors, corrections/links and the ledger views (log, blame, verify)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ErrorHead(BaseModel):
    """What every failure says, on the CLI and through MCP."""

    code: str  # not_found | ambiguous | usage | stale_letter | not_initialized | ... | internal
    message: str
    matches: list[str] = Field(default_factory=list)  # an ambiguous ref: the candidates


class ErrorBody(ErrorHead):
    """The one failure shape of every `--json` command (exit code as documented)."""

    hint: str | None = None
    exit_code: int


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


class ActorOut(BaseModel):
    kind: Literal["user", "system"]
    name: str
    email: str


class TargetOut(BaseModel):
    """What an op acts on (`ledger.ops.OpTarget`): a type, and the id unless the op creates
    its object."""

    type: str  # workitem | memory | commit | op | ...
    id: str | None = None


class OpOut(BaseModel):
    """One ledger op exactly as stored (DESIGN §2.1)."""

    v: int
    id: str
    lamport: int
    ts: str
    actor: ActorOut
    clone: str
    op: str
    target: TargetOut
    payload: dict[str, Any]  # the op kind's own fields (docs/format.md, one section per kind)
    rationale: str | None
    inverse_of: str | None


class LogOut(BaseModel):
    """`looma log --json`."""

    ops: list[OpOut]


class BlameOpOut(BaseModel):
    id: str
    op: str
    ts: str
    lamport: int
    actor: ActorOut
    rationale: str | None
    target: str | None


class BlameOut(BaseModel):
    """`looma blame WORK --json`: the ops that shaped WORK, oldest first."""

    ops: list[BlameOpOut]


class ProblemOut(BaseModel):
    """One thing `verify` found wrong; `op_id` / `path` name the op or file involved."""

    kind: str
    message: str
    op_id: str | None = None
    path: str | None = None


class VerifyOut(BaseModel):
    """`looma verify --json` (the exit status is 6 unless `ok`)."""

    ok: bool
    ops: int
    commits_checked: int
    problems: list[ProblemOut]
    warnings: list[str]
