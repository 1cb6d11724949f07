"""What each MCP tool does, over the api: readiness checks, explicit-id rules, typed results."""

from __future__ import annotations

import re
from typing import Any, Literal

from looma_git.errors import (
    LoomaError,
    NotFoundError,
    NotInitializedError,
    UsageError,
)
from looma_git.gitrepo import RepoPaths
from looma_git.mcp.models import (
    AskResult,
    CorrectResult,
    ListWorkResult,
    RecallResult,
    ResumeResult,
    SplitPart,
    TimelineResult,
    ToolErrorOut,
)
from looma_git.mcp.text import clean

Action = Literal["merge", "split", "rename", "false_positive", "promote", "reject", "undo"]

# Through MCP a correction names things by id only: letters depend on a human's last
# `looma resume` and titles can be near-duplicates, so neither is safe for an agent to write with.
WORK_ID = r"^wi_[0-9a-f]{4,64}$"
NODE_ID = r"^(?:wi|mem|cand|lw)_[0-9a-f]{4,64}$"
OP_ID = r"^[0-9a-f]{7,64}$"
ANY_ID = r"^(?:(?:wi|mem|cand|lw)_[0-9a-f]{4,64}|[0-9a-f]{7,64})$"


class EmptyStoreError(NotInitializedError):
    """Initialized, but nothing ingested or promoted yet: no answer can be grounded."""

    code = "empty_store"


# ------------------------------------------------------------------ readiness

def require_ready(paths: RepoPaths) -> None:
    """NotInitializedError before `looma init`; EmptyStoreError when nothing is known yet."""
    from looma_git.api.index import ledger_head, load_items
    from looma_git.store.clone import read_clone_id

    read_clone_id(paths)
    if ledger_head(paths) is None:
        raise NotInitializedError("the looma ledger (refs/looma/ledger) does not exist",
                                  hint="run `looma init` in the repository")
    state, items = load_items(paths)
    if items or getattr(state, "memories", None) or _has_events(paths):
        return
    raise EmptyStoreError("looma knows nothing about this repository yet: no transcripts "
                          "ingested and no WorkItems in the ledger",
                          hint="run `looma ingest` in the repository (then call the tool again)")


def _has_events(paths: RepoPaths) -> bool:
    if not paths.store_db.exists():
        return False
    from looma_git.index import storedb

    try:
        conn = storedb.connect(paths, readonly=True)
    except LoomaError:
        return False
    try:
        return conn.execute("SELECT 1 FROM events LIMIT 1").fetchone() is not None
    except Exception:  # no events table yet: nothing was ingested
        return False
    finally:
        conn.close()


# ------------------------------------------------------------------ errors

_RECOVERABLE = {"not_found", "ambiguous", "usage", "bad_arguments", "not_initialized",
                "empty_store", "locked", "conflict"}
# The api's hints name CLI affordances (letters, titles); through MCP only ids work.
_MCP_FIRST = {
    "not_found": "call list_work (or resume_work) for current WorkItem ids, then retry with one "
                 "of them; ids of ops to undo are those `correct` returned (or `looma log`)",
    "ambiguous": "retry with a longer id prefix (one of the matches)",
    "usage": "fix the arguments as described and retry",
    "not_a_repository": "start the server inside the repository, or with "
                        "`looma -C <repo> mcp` (see `looma mcp config`)",
}
_SUGGEST = {
    "not_initialized": "run `looma init` and `looma ingest` in the repository",
    "locked": "another looma process is writing; retry in a moment",
    "conflict": "another clone raced this write; retry",
    "read_only": "looma needs write access to the repository's .git directory",
    "invalid_data": "run `looma verify` in the repository and report the problem",
}


def error_out(err: LoomaError) -> ToolErrorOut:
    """A domain error as a structured tool error."""
    code = "bad_arguments" if err.code == "usage" else err.code
    return ToolErrorOut(code=code, message=err.message,
                        suggestion=_MCP_FIRST.get(err.code) or err.hint
                        or _SUGGEST.get(err.code),
                        recoverable=code in _RECOVERABLE,
                        matches=list(getattr(err, "matches", []) or []))


def _validated(model: Any, data: Any) -> Any:
    return model.model_validate(clean(data))


# ------------------------------------------------------------------ read tools

def _work_id(paths: RepoPaths, ref: str) -> str:
    """The full id of the WorkItem `ref` is an id prefix of (never a title or letter)."""
    from looma_git.api.query import resolve_workitem

    if not re.match(WORK_ID, ref):
        raise UsageError(f"{ref!r} is not a WorkItem id (wi_ followed by hex)",
                         hint="use an id from list_work or resume_work")
    item = resolve_workitem(paths, ref)
    if not item.id.startswith(ref):  # resolve_workitem falls back to titles; MCP must not
        raise NotFoundError(f"no WorkItem id starts with {ref!r}")
    return item.id


def list_work(paths: RepoPaths, status: str | None = None) -> ListWorkResult:
    """Live WorkItems, optionally of one status."""
    from looma_git.api import query

    require_ready(paths)
    out = query.work(paths, status=status)
    return _validated(ListWorkResult, {"status_filter": status, "count": len(out.workitems),
                                       "workitems": out.model_dump()["workitems"]})


def resume_work(paths: RepoPaths, goal: str | None = None, work: str | None = None,
                budget: int = 2000) -> ResumeResult:
    """The resume outcome (confident / ambiguous / cold) for a goal or one WorkItem."""
    from looma_git.api import query

    require_ready(paths)
    work_ref = _work_id(paths, work) if work else None
    out = query.resume(paths, goal or None, work_ref=work_ref, budget=budget)
    data = out.model_dump()
    if data.get("bundle") is not None:
        data["bundle"].pop("evidence_notice", None)
    if out.state == "ambiguous":
        ids = [c.id for c in out.candidates]
        data["message"] = ("Several WorkItems match; they are shown side by side, not blended. "
                           f"Call resume_work with work={ids[0]!r} (or another candidate id), "
                           "or merge duplicates with correct(action='merge', refs=[from, into]).")
    return _validated(ResumeResult, data)


def ask(paths: RepoPaths, query_text: str, limit: int = 10) -> AskResult:
    """Facts matching a question, with provenance, confidence and band."""
    from looma_git.api import facts

    require_ready(paths)

    out = facts.ask(paths, query_text, limit=limit)
    data = out.model_dump()
    for f in data["facts"]:
        src = f.get("source") or {}
        f["source"] = {k: (str(src[k]) if src.get(k) is not None else None)
                       for k in ("agent", "session", "event", "hash")}
    return _validated(AskResult, data)


def timeline(paths: RepoPaths, work: str) -> TimelineResult:
    """Ops, sessions, commits and memories of one WorkItem."""
    from looma_git.api import facts, query

    require_ready(paths)
    wid = _work_id(paths, work)
    item = query.resolve_workitem(paths, wid)
    out = facts.timeline(paths, wid)
    return _validated(TimelineResult, {**out.model_dump(), "confidence": round(item.confidence, 2),
                                       "band": item.band})


def recall(paths: RepoPaths, entity: str) -> RecallResult:
    """WorkItems and memories mentioning a file, commit, branch, session or term."""
    from looma_git.api import facts

    require_ready(paths)

    out = facts.recall(paths, entity)
    for hit in out["results"]:
        for m in hit["memories"]:
            m["confidence"] = round(float(m["confidence"]), 2)
    return _validated(RecallResult, out)


# ------------------------------------------------------------------ the one writing tool

def _need(cond: bool, message: str) -> None:
    if not cond:
        raise UsageError(message)


def correct(paths: RepoPaths, action: Action, refs: list[str], *, actor_name: str,
            rationale: str | None = None, title: str | None = None,
            parts: list[SplitPart] | None = None,
            by: Literal["sessions", "files"] = "sessions") -> CorrectResult:
    """Append one user correction op, recorded with the MCP client as the actor."""
    from looma_git.api import correct as api
    from looma_git.api.ledger import resolve_op

    require_ready(paths)
    for r in refs:
        _need(bool(re.match(ANY_ID, r)), f"not an explicit id: {r!r} (letters and titles are "
                                         "not accepted through MCP)")
    _need(title is None or action == "rename", "`title` is only for action=rename")
    _need(parts is None or action == "split", "`parts` is only for action=split")
    why = rationale.strip() if rationale and rationale.strip() else None
    kw: dict[str, Any] = {"rationale": why, "actor_name": actor_name}
    if action == "merge":
        _need(len(refs) == 2, "merge takes refs=[from_id, into_id]: the first is fused into "
                              "the second")
        c = api.merge(paths, _work_id(paths, refs[0]), _work_id(paths, refs[1]), **kw)
    elif action == "split":
        _need(len(refs) == 1 and bool(parts), "split takes refs=[work_id] and parts=[{title, "
                                               "members}, ...] (at least two)")
        assert parts is not None
        c = api.split(paths, _work_id(paths, refs[0]), [p.title for p in parts],
                      [list(p.members) for p in parts], by=by, **kw)
    elif action == "rename":
        _need(len(refs) == 1 and bool(title and title.strip()),
              "rename takes refs=[work_id] and a non-empty title")
        assert title is not None
        c = api.rename(paths, _work_id(paths, refs[0]), title, **kw)
    elif action == "undo":
        _need(len(refs) == 1 and bool(re.match(OP_ID, refs[0])),
              "undo takes refs=[op_id]: a ledger op id (hex) from a previous correct result")
        c = api.undo(paths, resolve_op(paths, refs[0]).id, **kw)
    else:
        _need(len(refs) == 1 and bool(re.match(NODE_ID, refs[0])),
              f"{action} takes refs=[id] of one WorkItem (wi_), memory (mem_) or "
              "candidate (cand_, lw_)")
        ref = _work_id(paths, refs[0]) if refs[0].startswith("wi_") else refs[0]
        fn = {"false_positive": api.false_positive, "promote": api.promote,
              "reject": api.reject}[action]
        c = fn(paths, ref, **kw)
    return CorrectResult(op_id=c.op_id, op=c.op, target=c.target, summary=c.summary,
                         actor=actor_name,
                         undo=f"correct(action='undo', refs=['{c.op_id[:12]}'])")

