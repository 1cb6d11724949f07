"""MCP result shaping: the api's typed values (wire/plain.py, what the CLI renders) as bounded
rows, evidence flagged, whole results fitted to a token budget in both their forms (structured
JSON and text). Rows are built from those values' attributes through the wire heads the CLI and
MCP models both extend; nothing is dumped to JSON and read back (`size` serialises only to
measure)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from looma_git.mcp.text import strip_invisible, suspicious
from looma_git.wire import plain
from looma_git.wire.mcp import (
    AskFact,
    MemoryFact,
    Provenance,
    RecallHit,
    RecallMemory,
    ResumeMatchRow,
    TimelineRow,
    WorkItemRow,
)
from looma_git.wire.read import FactHead, MemoryHead, Rated, SessionRef, TimelineEntry

# Token estimate for budgets: JSON with ids and SHAs tokenizes at roughly 3-4 bytes a token;
# counting 4 errs on the side of the model's context only if the text is mostly words, so
# budgets are checked on UTF-8 bytes against budget * TOKEN_BYTES.
TOKEN_BYTES = 4
LIST_CAP = 5  # files / commits / sessions shown per row; the total is always given
CANDIDATE_CAP = 3  # candidates sit side by side: fewer entries each
SHA_LEN = 12  # enough for git to resolve in any real repository; full ids are in list_work
DEFAULT_BUDGET = 4000  # tokens, for tools without a budget argument
PAGE_DEFAULT = 20
MEMORY_KINDS = frozenset({"decision", "todo", "bug", "architecture"})

M = TypeVar("M", bound=BaseModel)


def flags(*texts: str | None) -> list[str]:
    """Suspected-injection labels over all of an item's transcript-derived text."""
    seen: list[str] = []
    for t in texts:
        for label in suspicious(t or ""):
            if label not in seen:
                seen.append(label)
    return seen


def capped(values: list[Any], cap: int = LIST_CAP) -> tuple[list[Any], int]:
    """The first `cap` values and how many there are in all."""
    return list(values[:cap]), len(values)


def head(value: Any, base: type[BaseModel]) -> dict[str, Any]:
    """The fields of `base` (a wire head the CLI row and the MCP row both extend), read from
    the CLI's value by attribute: the shared fields pass through as they are."""
    return {k: getattr(value, k) for k in base.model_fields}


def sessions_of(refs: list[plain.SessionRef]) -> list[SessionRef]:
    return [SessionRef(agent=r.agent, id=r.id) for r in refs]


def work_row(w: plain.WorkItemOut) -> WorkItemRow:
    """A WorkItem as `looma work --json` carries it, as a bounded MCP row."""
    files, nf = capped(w.files)
    commits, nc = capped(w.commits)
    sessions, ns = capped(sessions_of(w.sessions))
    summary = w.summary or ""
    return WorkItemRow(**head(w, Rated), lifecycle=w.lifecycle or "active", files=files,
                       files_total=nf, commits=commits, commits_total=nc, sessions=sessions,
                       sessions_total=ns, branch=w.branch, evidence_summary=summary,
                       flags=flags(w.title, summary))


def candidate_row(c: plain.ResumeMatchOut) -> ResumeMatchRow:
    """A resume candidate as a bounded MCP row."""
    files, nf = capped(c.files, CANDIDATE_CAP)
    commits, nc = capped([s[:SHA_LEN] for s in c.commits], CANDIDATE_CAP)
    sessions, ns = capped(sessions_of(c.sessions), CANDIDATE_CAP)
    return ResumeMatchRow(**head(c, Rated), match=c.match,
                          matched_terms=list(c.matched_terms)[:10], files=files,
                          files_total=nf, commits=commits, commits_total=nc,
                          sessions=sessions, sessions_total=ns,
                          last_active=c.last_active or "", flags=flags(c.title))


def memory_fact(m: dict[str, Any]) -> MemoryFact:
    """A bundle memory (`text`; the bundle is the CLI's plain mapping) as an evidence fact."""
    text = m.get("text") or ""
    return MemoryFact(id=m["id"], evidence=text, confidence=m["confidence"], band=m["band"],
                      promoted=m.get("promoted", True),
                      source=Provenance.model_validate(m.get("source") or {}),
                      flags=flags(text))


def ask_fact(f: plain.FactOut) -> AskFact:
    """One `ask --json` fact; its `text` is MCP's `evidence`, its source four strings."""
    text = f.text or ""
    src = f.source or {}
    return AskFact(**head(f, FactHead), evidence=text, flags=flags(text),
                   source=Provenance(**{k: (str(src[k]) if src.get(k) is not None else None)
                                        for k in ("agent", "session", "event", "hash")}))


def timeline_row(e: plain.TimelineEntry) -> TimelineRow:
    """One `timeline --json` entry: a memory's text is quoted evidence, the rest looma's own."""
    text = e.text or ""
    if e.kind in MEMORY_KINDS:
        return TimelineRow(**{**head(e, TimelineEntry), "text": ""}, evidence=text,
                           flags=flags(text))
    return TimelineRow(**{**head(e, TimelineEntry), "text": text})


def recall_memory(m: plain.RecallMemoryOut) -> RecallMemory:
    return RecallMemory(**{**head(m, MemoryHead), "confidence": round(float(m.confidence), 2)},
                        evidence=m.text, flags=flags(m.text))


def recall_hit(hit: plain.RecallHit) -> RecallHit:
    """One `recall --json` result: the WorkItem as a bounded row, its memories as evidence."""
    return RecallHit(workitem=work_row(hit.workitem), why=list(hit.why),
                     memories=[recall_memory(m) for m in hit.memories])


def _cleaned(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_copy(update={k: _cleaned(getattr(value, k))
                                        for k in type(value).model_fields})
    if isinstance(value, str):
        return strip_invisible(value)
    if isinstance(value, dict):
        return {_cleaned(k): _cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v) for v in value]
    return value


def cleaned(model: M) -> M:
    """`model` with invisible characters stripped from every string in it (a typed walk)."""
    out: M = _cleaned(model)
    return out


def size(obj: Any) -> int:
    """UTF-8 bytes of `obj` as compact JSON (how it travels in structuredContent)."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def fits(model: BaseModel, render: Callable[[Any], str], budget: int) -> bool:
    """Both forms of a result within `budget` tokens."""
    cap = budget * TOKEN_BYTES
    return size(model) <= cap and len(render(model).encode("utf-8")) <= cap


def fit_list(out: M, key: str, render: Callable[[Any], str], budget: int, offset: int) -> M:
    """Drop items from the end of `out.<key>` until both forms fit; `next_cursor` (when the
    result has one) then points at the first item left out, so nothing is lost, only paged."""
    items = list(getattr(out, key))
    if fits(out, render, budget):
        return out

    def prefix(n: int) -> M:
        return out.model_copy(update={key: items[:n]})

    # Binary search for the longest prefix that fits; at least one item is always returned
    # so paging makes progress even when one item alone is over budget.
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(prefix(mid), render, budget):
            lo = mid
        else:
            hi = mid - 1
    keep = max(lo, 1)
    if "next_cursor" not in type(out).model_fields:
        return prefix(keep)
    more = keep < len(items) or getattr(out, "next_cursor", None)
    return out.model_copy(update={key: items[:keep],
                                  "next_cursor": str(offset + keep) if more else None})


def page(items: list[Any], cursor: str | None, limit: int) -> tuple[list[Any], int, str | None]:
    """`items[offset:offset+limit]`, the offset, and the cursor of the following page."""
    offset = int(cursor) if cursor else 0
    chunk = items[offset:offset + limit]
    nxt = str(offset + limit) if offset + limit < len(items) else None
    return chunk, offset, nxt
