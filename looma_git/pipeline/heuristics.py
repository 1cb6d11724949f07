"""The default extractor: decisions, todos, bugs and architecture notes from message text."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

KINDS = ("decision", "todo", "bug", "architecture")


@dataclass(frozen=True)
class Candidate:
    """An evidence-bound memory candidate with its exact source span."""

    kind: str
    text: str
    event_id: str
    start: int  # character range in the event's text
    end: int
    content_hash: str
    agent: str
    session_id: str
    ts: str
    role: str

    @property
    def cand_id(self) -> str:
        return "cand_" + hashlib.sha256(
            f"{self.kind}\x00{self.event_id}\x00{self.start}\x00{self.content_hash}".encode()
        ).hexdigest()[:12]


_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "decision": (
        re.compile(r"\b(?:let's|let us|we(?:'ll| will| should| are going to)|i(?:'ll| will))\s+"
                   r"(?:use|go with|switch to|adopt|store|keep|stick with|move to|rely on|"
                   r"standardi[sz]e on|not use|drop)\b", re.I),
        re.compile(r"\bwe(?:'ve)?\s+(?:decided|chose|agreed|settled)\b", re.I),
        re.compile(r"\b(?:decided|decision)\s*(?:to|on|:)", re.I),
        re.compile(r"\bgoing with\b", re.I),
        re.compile(r"\b(?:use|using|prefer)\s+\S+(?:\s+\S+)?\s+instead of\b", re.I),
    ),
    "todo": (
        re.compile(r"^\s*(?:[-*]\s*)?(?:TODO|FIXME|todo)\b[:\s]", re.M),
        re.compile(r"\b(?:we|i|you)\s+still\s+need\s+to\b", re.I),
        re.compile(r"\bstill\s+(?:needs?|have)\s+to\b", re.I),
        re.compile(r"\b(?:next step|follow[- ]up|left to do|remaining work)s?\b\s*(?:is|are|:)",
                   re.I),
        re.compile(r"^\s*[-*]\s*\[ \]\s+\S", re.M),
        re.compile(r"\bdon't forget to\b", re.I),
    ),
    "bug": (
        re.compile(r"^\s*bug\s*:", re.I | re.M),
        re.compile(r"\b(?:there's|there is|found|hit|spotted)\s+(?:a|another|the)\s+bug\b",
                   re.I),
        re.compile(r"\b(?:fails|crashes|breaks|hangs|throws|raises|expires|returns 500)\s+"
                   r"(?:when|if|on|after|because)\b", re.I),
        re.compile(r"\b(?:is|are)\s+(?:broken|failing|flaky)\b", re.I),
        re.compile(r"\brace condition\b", re.I),
        re.compile(r"\b(?:a|the|this)\s+regression\s+(?:in|since|from|after|when)\b", re.I),
    ),
    "architecture": (
        re.compile(r"^\s*architecture\s*:", re.I | re.M),
        re.compile(r"\b(?:the|our)\s+(?:design|architecture)\s+(?:is|will be|uses|keeps)\b",
                   re.I),
        re.compile(r"\b(?:layer|module|service|component)\s+(?:owns|is responsible for)\b",
                   re.I),
        re.compile(r"\ball\s+(?:\w+\s+){0,3}(?:go|goes|must go)\s+through\b", re.I),
        re.compile(r"\bsingle source of truth\b", re.I),
    ),
}

# Phrasings that look like a kind but are not a statement of it.
_NEGATIVE = re.compile(
    r"^\s*(?:if|should we|shall we|what if|do you think|would it|could we|maybe|perhaps|"
    r"not sure|i wonder|does|is it|are we|can we|why)\b", re.I)
_REVERSAL = re.compile(r"\b(?:actually|instead|no longer|switch(?:ing)? to|scrap|revert|"
                       r"not use|change of plan|on second thought)\b", re.I)
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
# A sentence ends at . ! ? followed by whitespace (or the end), or at a newline: dots inside
# tokens (auth/session.py, Python 3.11, e.g.) do not cut the quote.
_SENT = re.compile(r"(?:[^\n.!?]|[.!?](?=[^\s.!?]))+(?:[.!?]+(?=\s|$)|\n|$)")


def _masked(text: str) -> str:
    """Code fences blanked out (same length) so spans still index the original text."""
    return _FENCE.sub(lambda m: " " * len(m.group(0)), text)


def extract(text: str, *, event_id: str, agent: str, session_id: str, ts: str,
            role: str) -> list[Candidate]:
    """Candidates from one message; questions, hypotheticals and code are never candidates."""
    if role not in ("user", "assistant") or not text:
        return []
    masked = _masked(text[:20000])
    out: list[Candidate] = []
    for m in _SENT.finditer(masked):
        sent = m.group(0)
        stripped = sent.strip()
        if len(stripped) < 12 or stripped.endswith("?") or _NEGATIVE.search(stripped):
            continue
        for kind in KINDS:
            if any(p.search(sent) for p in _PATTERNS[kind]):
                lead = len(sent) - len(sent.lstrip())
                start = m.start() + lead
                end = start + len(stripped)
                quote = text[start:end][:300]
                out.append(Candidate(
                    kind=kind, text=quote, event_id=event_id, start=start, end=end,
                    content_hash=hashlib.sha256(quote.encode("utf-8", "replace")).hexdigest()[:16],
                    agent=agent, session_id=session_id, ts=ts, role=role))
                break
    return out


def is_reversal(text: str) -> bool:
    """A decision that reverses an earlier one ("actually, let's not use Redis")."""
    return bool(_REVERSAL.search(text))
