"""MCP result shaping: api outputs as bounded rows, evidence flagged, whole results fitted to a
token budget in both their forms (structured JSON and text)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from looma_git.mcp.text import clean, suspicious

# Token estimate for budgets: JSON with ids and SHAs tokenizes at roughly 3-4 bytes a token;
# counting 4 errs on the side of the model's context only if the text is mostly words, so
# budgets are checked on UTF-8 bytes against budget * TOKEN_BYTES.
TOKEN_BYTES = 4
LIST_CAP = 5  # files / commits / sessions shown per row; the total is always given
CANDIDATE_CAP = 3  # candidates sit side by side: fewer entries each
SHA_LEN = 12  # enough for git to resolve in any real repository; full ids are in list_work
DEFAULT_BUDGET = 4000  # tokens, for tools without a budget argument
PAGE_DEFAULT = 20

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


def work_row(w: dict[str, Any]) -> dict[str, Any]:
    """A WorkItem (the `work --json` shape) as a bounded MCP row."""
    files, nf = capped(w.get("files") or [])
    commits, nc = capped(w.get("commits") or [])
    sessions, ns = capped(w.get("sessions") or [])
    summary = w.get("summary") or ""
    return {"id": w["id"], "title": w["title"], "kind": w["kind"], "status": w["status"],
            "lifecycle": w.get("lifecycle") or "active", "confidence": w["confidence"],
            "band": w["band"], "files": files, "files_total": nf, "commits": commits,
            "commits_total": nc, "sessions": sessions, "sessions_total": ns,
            "branch": w.get("branch"), "evidence_summary": summary,
            "flags": flags(w["title"], summary)}


def candidate_row(c: dict[str, Any]) -> dict[str, Any]:
    """A resume candidate as a bounded MCP row."""
    files, nf = capped(c.get("files") or [], CANDIDATE_CAP)
    commits, nc = capped([s[:SHA_LEN] for s in c.get("commits") or []], CANDIDATE_CAP)
    sessions, ns = capped(c.get("sessions") or [], CANDIDATE_CAP)
    return {"id": c["id"], "title": c["title"], "kind": c["kind"], "status": c["status"],
            "confidence": c["confidence"], "band": c["band"], "match": c["match"],
            "matched_terms": list(c.get("matched_terms") or [])[:10], "files": files,
            "files_total": nf, "commits": commits, "commits_total": nc, "sessions": sessions,
            "sessions_total": ns, "last_active": c.get("last_active") or "",
            "flags": flags(c["title"])}


def memory_fact(m: dict[str, Any]) -> dict[str, Any]:
    """A bundle memory (`text`) as an MCP evidence fact."""
    text = m.get("text") or ""
    return {"id": m["id"], "evidence": text, "confidence": m["confidence"], "band": m["band"],
            "promoted": m.get("promoted", True), "source": m.get("source") or {},
            "flags": flags(text)}


def size(obj: Any) -> int:
    """UTF-8 bytes of `obj` as compact JSON (how it travels in structuredContent)."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def fits(model: BaseModel, render: Callable[[Any], str], budget: int) -> bool:
    """Both forms of a result within `budget` tokens."""
    cap = budget * TOKEN_BYTES
    return size(model) <= cap and len(render(model).encode("utf-8")) <= cap


def validated(model: type[M], data: Any) -> M:
    """`data` (invisible characters stripped) as `model`."""
    return model.model_validate(clean(data))


def fit_list(model: type[M], data: dict[str, Any], key: str, render: Callable[[Any], str],
             budget: int, offset: int) -> M:
    """Drop items from the end of `data[key]` until both forms fit; `next_cursor` then points
    at the first item left out (so nothing is lost, only paged)."""
    items = list(data[key])
    lo, hi = 0, len(items)
    out = validated(model, {**data, key: items})
    if fits(out, render, budget):
        return out
    # Binary search for the longest prefix that fits; at least one item is always returned
    # so paging makes progress even when one item alone is over budget.
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(validated(model, {**data, key: items[:mid]}), render, budget):
            lo = mid
        else:
            hi = mid - 1
    keep = max(lo, 1)
    nxt = str(offset + keep) if keep < len(items) or data.get("next_cursor") else None
    return validated(model, {**data, key: items[:keep], "next_cursor": nxt})


def page(items: list[Any], cursor: str | None, limit: int) -> tuple[list[Any], int, str | None]:
    """`items[offset:offset+limit]`, the offset, and the cursor of the following page."""
    offset = int(cursor) if cursor else 0
    chunk = items[offset:offset + limit]
    nxt = str(offset + limit) if offset + limit < len(items) else None
    return chunk, offset, nxt
