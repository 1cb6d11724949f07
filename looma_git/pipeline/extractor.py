"""The Extractor interface: the heuristic default, and heuristic + LLM combined without duplicates."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Protocol

from looma_git.pipeline import heuristics
from looma_git.pipeline.heuristics import MemoryCandidate

if TYPE_CHECKING:
    from looma_git.settings import LLMSettings

# Two candidates of one message that share this much of the shorter span say the same thing.
OVERLAP = 0.5


class Extractor(Protocol):
    """Turns one message into evidence-bound candidates, each with its exact source span."""

    name: str

    def extract(self, text: str, *, event_id: str, agent: str, session_id: str, ts: str,
                role: str) -> list[MemoryCandidate]: ...


class HeuristicExtractor:
    """The default: phrasing patterns, no model, no I/O."""

    name = "heuristic"

    def extract(self, text: str, *, event_id: str, agent: str, session_id: str, ts: str,
                role: str) -> list[MemoryCandidate]:
        """`heuristics.extract` as an Extractor."""
        return heuristics.extract(text, event_id=event_id, agent=agent, session_id=session_id,
                                  ts=ts, role=role)


def same_evidence(a: MemoryCandidate, b: MemoryCandidate) -> bool:
    """Same message and the same quote, or spans that mostly overlap (kind aside)."""
    if a.event_id != b.event_id:
        return False
    if a.content_hash == b.content_hash:
        return True
    shared = min(a.end, b.end) - max(a.start, b.start)
    shorter = min(a.end - a.start, b.end - b.start)
    return shared > 0 and shorter > 0 and shared / shorter >= OVERLAP


class CombinedExtractor:
    """`primary` first; `extra` adds only what `primary` did not already find."""

    def __init__(self, primary: Extractor, extra: Extractor) -> None:
        self.primary = primary
        self.extra = extra
        self.name = f"{primary.name}+{extra.name}"

    def extract(self, text: str, *, event_id: str, agent: str, session_id: str, ts: str,
                role: str) -> list[MemoryCandidate]:
        """Both extractors' candidates, the primary's winning any duplicate, in span order."""
        kept = self.primary.extract(text, event_id=event_id, agent=agent, session_id=session_id,
                                    ts=ts, role=role)
        for cand in self.extra.extract(text, event_id=event_id, agent=agent,
                                       session_id=session_id, ts=ts, role=role):
            if not any(same_evidence(cand, k) for k in kept):
                kept.append(cand)
        return sorted(kept, key=lambda c: (c.start, c.end, c.kind))


def extractor_stats(extractor: Extractor) -> dict[str, int]:
    """The LLM backend's counters inside `extractor` ({} for the heuristic one)."""
    parts = [extractor]
    if isinstance(extractor, CombinedExtractor):
        parts = [extractor.primary, extractor.extra]
    out: dict[str, int] = {}
    for part in parts:
        summary = getattr(part, "summary", None)
        if callable(summary):
            out.update(summary())
    return out


def build_extractor(llm: LLMSettings | None, conn: sqlite3.Connection | None = None, *,
                    offline: bool = False) -> Extractor:
    """Heuristic alone when `llm` is None; else heuristic + LLM, replies cached in `conn`.

    `offline`: use cached LLM replies only, never a request (the hook path can stay fast
    and still agree with `reprocess` on every message already sent).
    """
    if llm is None:
        return HeuristicExtractor()
    from looma_git.pipeline.llm import LLMExtractor, SqliteLLMCache

    cache = SqliteLLMCache(conn) if conn is not None else None
    return CombinedExtractor(HeuristicExtractor(), LLMExtractor(llm, cache, offline=offline))
