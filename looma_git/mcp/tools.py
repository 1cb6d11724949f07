"""What each MCP tool does, over the api: readiness checks, explicit-id rules, typed results."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from looma_git.errors import (
    LoomaError,
    NotFoundError,
    NotInitializedError,
    UsageError,
)
from looma_git.gitrepo import RepoPaths
from looma_git.mcp import render, shape
from looma_git.wire.ledger import CorrectionOut
from looma_git.wire.mcp import (
    AskResult,
    BundleWorkItem,
    CorrectResult,
    GitState,
    ListWorkResult,
    RecallResult,
    ResumeBundle,
    ResumeResult,
    SplitPart,
    TimelineResult,
    ToolErrorOut,
)
from looma_git.wire.read import Rated, ResumeHead

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
    from looma_git.status import has_events
    from looma_git.store.clone import read_clone_id

    read_clone_id(paths)
    if ledger_head(paths) is None:
        raise NotInitializedError("the looma ledger (refs/looma/ledger) does not exist",
                                  hint="run `looma init` in the repository")
    state, items = load_items(paths)
    if items or getattr(state, "memories", None) or has_events(paths):
        return
    raise EmptyStoreError("looma knows nothing about this repository yet: no transcripts "
                          "ingested and no WorkItems in the ledger",
                          hint="run `looma ingest` in the repository (then call the tool again)")


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


def _cursor(cursor: str | None) -> None:
    if cursor is not None and not re.fullmatch(r"[0-9]{1,9}", cursor):
        raise UsageError(f"{cursor!r} is not a cursor from a previous result",
                         hint="omit `cursor` for the first page; then pass `next_cursor`")


def list_work(paths: RepoPaths, status: str | None = None, limit: int = shape.PAGE_DEFAULT,
              cursor: str | None = None) -> ListWorkResult:
    """Live WorkItems, optionally of one status, one page at a time."""
    from looma_git.api import query

    require_ready(paths)
    _cursor(cursor)
    rows = [shape.work_row(w) for w in query.work(paths, status=status).workitems]
    chunk, offset, nxt = shape.page(rows, cursor, limit)
    out = ListWorkResult(status_filter=status, count=len(rows), workitems=chunk,
                         next_cursor=nxt)
    return shape.fit_list(shape.cleaned(out), "workitems", render.list_work,
                          shape.DEFAULT_BUDGET, offset)


def _fit_resume(out: ResumeResult, budget: int) -> ResumeResult:
    """Cut the least useful parts first until both forms fit: recent work, then the bundle's
    optional sections, then candidates beyond the first; every cut is counted."""
    if shape.fits(out, render.resume, budget):
        return out
    res = out.model_copy(deep=True)  # cut from a copy: `out` stays whole
    cut: dict[str, int] = dict(res.cut)

    def cur() -> ResumeResult:
        return res.model_copy(update={"cut": dict(cut)})

    def drop(container: BaseModel, key: str, label: str, keep: int = 0) -> bool:
        items = getattr(container, key)
        while len(items) > keep:
            items.pop()
            cut[label] = cut.get(label, 0) + 1
            if shape.fits(cur(), render.resume, budget):
                return True
        return False

    if drop(res, "recent", "recent"):
        return cur()
    b = res.bundle
    if b is not None:
        if drop(b.git, "dirty", "bundle.git.dirty"):
            return cur()
        for key in ("files", "sessions", "commits", "architecture"):
            if drop(b, key, f"bundle.{key}"):
                return cur()
    if drop(res, "candidates", "candidates", keep=1):
        return cur()
    if b is not None:  # protected items last, and only because the budget cannot hold them
        for key in ("decisions", "bugs", "todos"):
            if drop(b, key, f"bundle.{key}"):
                return cur()
        w = b.workitem
        for limit in (400, 160, 0):  # the summary is prose; its head carries the gist
            if len(w.evidence_summary) > limit:
                w.evidence_summary = w.evidence_summary[:limit].rstrip() + "…"
                cut["bundle.summary_chars"] = 1
                if shape.fits(cur(), render.resume, budget):
                    return cur()
    return cur()


def _looma_config_files(paths: RepoPaths, dirty: list[str]) -> list[str]:
    """The dirty paths that are client configuration naming looma's server."""
    from looma_git.mcp.config import PROJECT_FILES

    if paths.worktree is None:
        return []
    out = []
    for d in dirty:
        # `git status` names an untracked directory (".codex/") rather than its files.
        files = [f for f in PROJECT_FILES.values() if f and (f == d or (d.endswith("/") and
                                                                      f.startswith(d)))]
        for f in files:
            try:
                text = (paths.worktree / f).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "looma_git" in text:
                out.append(d)
                break
    return out


def _bundle(paths: RepoPaths, b: dict[str, Any], budget: int) -> ResumeBundle:
    """The CLI's resume bundle (retrieval/bundle.py's mapping) as MCP's: memories as evidence
    facts, the summary as evidence, dirty paths bounded and looma's own config set apart."""
    w = b["workitem"]
    summary = w.get("summary", "") or ""
    git = b["git"]
    ours = _looma_config_files(paths, git.get("dirty") or [])
    dirty = [d for d in git.get("dirty") or [] if d not in ours]
    return ResumeBundle.model_validate({
        **b, "budget": budget,
        "workitem": BundleWorkItem(**{k: w[k] for k in Rated.model_fields},
                                   evidence_summary=summary, branch=w.get("branch"),
                                   flags=shape.flags(w.get("title"), summary)),
        "git": GitState.model_validate({**git, "dirty": dirty[:10], "dirty_total": len(dirty),
                                        "looma_files": ours}),
        **{key: [shape.memory_fact(m) for m in b.get(key) or []]
           for key in ("decisions", "todos", "bugs", "architecture")}})


def resume_work(paths: RepoPaths, goal: str | None = None, work: str | None = None,
                budget: int = 2000) -> ResumeResult:
    """The resume outcome (confident / ambiguous / cold) for a goal or one WorkItem."""
    from looma_git.api import query

    require_ready(paths)
    work_ref = _work_id(paths, work) if work else None
    # The bundle's own budget leaves room for the envelope (candidates, notice, message).
    out = query.resume(paths, goal or None, work_ref=work_ref, budget=max(100, budget * 3 // 4))
    message = out.message
    if out.state == "ambiguous":
        ids = [c.id for c in out.candidates]
        message = ("Several WorkItems match; they are shown side by side, not blended. "
                   f"Call resume_work with work={ids[0]!r} (or another candidate id), "
                   "or merge duplicates with correct(action='merge', refs=[from, into]).")
    result = ResumeResult(
        **{**shape.head(out, ResumeHead), "message": message}, budget=budget,
        candidates=[shape.candidate_row(c) for c in out.candidates],
        recent=[shape.candidate_row(c) for c in out.recent or []],
        bundle=None if out.bundle is None else _bundle(paths, out.bundle, budget))
    return _fit_resume(shape.cleaned(result), budget)


def ask(paths: RepoPaths, query_text: str, limit: int = 10) -> AskResult:
    """Facts matching a question, with provenance, confidence and band."""
    from looma_git.api import facts

    require_ready(paths)
    out = facts.ask(paths, query_text, limit=limit)
    result = AskResult(query=query_text, facts=[shape.ask_fact(f) for f in out.facts])
    return shape.fit_list(shape.cleaned(result), "facts", render.ask, shape.DEFAULT_BUDGET, 0)


def timeline(paths: RepoPaths, work: str, limit: int = 50,
             cursor: str | None = None) -> TimelineResult:
    """Ops, sessions, commits and memories of one WorkItem, one page at a time."""
    from looma_git.api import facts, query

    require_ready(paths)
    _cursor(cursor)
    wid = _work_id(paths, work)
    item = query.resolve_workitem(paths, wid)
    out = facts.timeline(paths, wid)
    rows = [shape.timeline_row(e) for e in out.entries]
    chunk, offset, nxt = shape.page(rows, cursor, limit)
    result = TimelineResult(workitem=out.workitem, title=out.title,
                            confidence=round(item.confidence, 2), band=item.band,
                            total=len(rows), entries=chunk, next_cursor=nxt)
    return shape.fit_list(shape.cleaned(result), "entries", render.timeline,
                          shape.DEFAULT_BUDGET, offset)


def recall(paths: RepoPaths, entity: str, limit: int = 10,
           cursor: str | None = None) -> RecallResult:
    """WorkItems and memories mentioning a file, commit, branch, session or term."""
    from looma_git.api import facts

    require_ready(paths)
    _cursor(cursor)
    out = facts.recall(paths, entity)  # what `recall --json` dumps
    hits = [shape.recall_hit(hit) for hit in out.results]
    chunk, offset, nxt = shape.page(hits, cursor, limit)
    result = RecallResult(entity=out.entity, total=len(hits), results=chunk,
                          resolved=list(out.resolved), next_cursor=nxt)
    return shape.fit_list(shape.cleaned(result), "results", render.recall,
                          shape.DEFAULT_BUDGET, offset)


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
    # The CLI's `correct --json` document, with the actor and this tool's own undo call.
    return CorrectResult(**{**shape.head(c, CorrectionOut), "actor": actor_name,
                            "undo": f"correct(action='undo', refs=['{c.op_id[:12]}'])"})

