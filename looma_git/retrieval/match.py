"""Goal matching and the resume outcome: confident, ambiguous or cold (thresholds in one place)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from looma_git.retrieval.records import ItemRecord

# Resume thresholds (DESIGN §5), in one place.
CONFIDENT_AT = 0.55  # top match must reach this...
MARGIN = 0.15  # ...and lead the runner-up by this much
COLD_BELOW = 0.25  # below this nothing matches: say so, invent nothing
MAX_SIDE_BY_SIDE = 4

W_COVERAGE = 0.60
W_TITLE = 0.25
W_SEMANTIC = 0.15

_WORD = re.compile(r"[a-z0-9][a-z0-9+#]*")
_STOP = frozenset("the a an of to in on for and or with is are was what whats where how do does "
                  "did my our we i me about work working resume status on it that this".split())


@lru_cache(maxsize=65536)  # transcripts repeat a small vocabulary; stemming dominated rank()
def stem(word: str) -> str:
    """A light English stemmer: enough to make 'indexing' meet 'index' and 'tokens' 'token'."""
    for suf in ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "s"):
        if len(word) - len(suf) >= 3 and word.endswith(suf):
            return word[: -len(suf)] + ("y" if suf == "ies" else "")
    return word


def terms(text: str) -> list[str]:
    """Stemmed content terms; paths split on / . _ -."""
    low = text.lower().replace("'", "")
    return [stem(w) for w in _WORD.findall(re.sub(r"[/._\-]", " ", low)) if w not in _STOP]


@lru_cache(maxsize=8192)
def _doc_terms(text: str) -> frozenset[str]:
    """An item's term set, kept per process: a warm resume re-ranks without re-tokenising."""
    return frozenset(terms(text))


@dataclass(frozen=True)
class Match:
    """One WorkItem's match against a goal, with the parts behind it."""

    item: ItemRecord
    score: float
    coverage: float
    title: float
    semantic: float | None
    matched_terms: tuple[str, ...]


def rank(goal: str, items: list[ItemRecord],
         semantic: Mapping[str, float] | None = None) -> list[Match]:
    """Rank items for a goal: idf-weighted term coverage, fuzzy title match, optional cosine."""
    goal_terms = list(dict.fromkeys(terms(goal)))
    if not goal_terms or not items:
        return []
    docs = {it.id: _doc_terms(it.text_fields()) for it in items}
    n = len(items)
    idf = {t: math.log(1 + (n + 1) / (1 + sum(1 for d in docs.values() if t in d)))
           for t in goal_terms}
    total = sum(idf.values())
    out = []
    for it in items:
        hit = [t for t in goal_terms if t in docs[it.id]]
        coverage = sum(idf[t] for t in hit) / total if total else 0.0
        names = [it.title, *it.aliases]
        title = max(fuzz.token_set_ratio(goal.lower(), x.lower()) for x in names) / 100.0
        # A fuzzy title hit without any shared term is noise ("kubernetes" vs "Rate Limiter").
        title = title if hit else 0.0
        sem = semantic.get(it.id) if semantic else None
        if sem is None:
            score = (W_COVERAGE * coverage + W_TITLE * title) / (W_COVERAGE + W_TITLE)
        else:
            sem01 = min(1.0, max(0.0, (sem - 0.2) / 0.6))
            score = W_COVERAGE * coverage + W_TITLE * title + W_SEMANTIC * sem01
        out.append(Match(item=it, score=round(score, 4), coverage=round(coverage, 4),
                         title=round(title, 4), semantic=sem, matched_terms=tuple(hit)))
    out.sort(key=lambda m: (-m.score, -m.item.confidence, m.item.id))
    return out


def semantic_can_change(lexical: list[Match]) -> bool:
    """Whether a semantic boost could change the outcome of a lexical-only ranking.

    With cosines, an item's score becomes (W_COVERAGE + W_TITLE) * lexical + W_SEMANTIC * s,
    s in [0, 1], while an item without a vector keeps its lexical score. When even the worst
    case (the leader gets s = 0, the best runner-up the most it can) leaves the leader
    confident, or the best possible score is still cold, the model need not be loaded.
    """
    if not lexical:
        return False
    eps = 1e-3  # scores are rounded to 4 places
    lex_w = W_COVERAGE + W_TITLE
    l1 = lexical[0].score
    if lex_w * l1 + W_SEMANTIC < COLD_BELOW - eps:
        return False
    l2 = max((m.score for m in lexical[1:]), default=0.0)
    c1_low = lex_w * l1
    c2_high = max(l2, lex_w * l2 + W_SEMANTIC)
    return not (c1_low >= CONFIDENT_AT + eps and c1_low - c2_high >= MARGIN + eps)


def outcome(matches: list[Match]) -> tuple[str, list[Match]]:
    """confident (one), ambiguous (near-ties side by side) or cold (nothing)."""
    if not matches or matches[0].score < COLD_BELOW:
        return "cold", []
    c1 = matches[0].score
    c2 = matches[1].score if len(matches) > 1 else 0.0
    if c1 >= CONFIDENT_AT and c1 - c2 >= MARGIN:
        return "confident", [matches[0]]
    ties = [m for m in matches if m.score >= COLD_BELOW and c1 - m.score < MARGIN]
    if len(ties) < 2:
        ties = [m for m in matches[:2] if m.score >= COLD_BELOW]
    return "ambiguous", ties[:MAX_SIDE_BY_SIDE]
