"""Answers for `ask`: memories ranked by words and meaning, a superseded one beside its successor."""

from __future__ import annotations

import math
from collections.abc import Mapping

from looma_git.retrieval import match
from looma_git.retrieval.records import ItemRecord, MemoryRecord

# Question words carry no subject ("why did we pick RQ" asks about RQ).
_QUESTION = frozenset(match.stem(w) for w in (
    "why which who whom whose when should would could can there their they them was were "
    "been be has have had did we our us you your pick picked choose chose decide decided "
    "using use used our".split()))
WORDS_ENOUGH = 0.5  # a memory whose words cover this share of the question answers it
MIN_WORDS = 0.34  # below this share a memory is not shown on words alone
MIN_COSINE = 0.35  # a memory this close in meaning answers the question too
ENOUGH_ANSWERS = 3  # this many memories at WORDS_ENOUGH: meaning is not consulted
TITLE_WEIGHT = 0.5  # a question word found only in the memory's WorkItem title counts half
KIND_BONUS = {"decision": 0.05, "architecture": 0.03}
KIND_ORDER = {"decision": 0, "architecture": 1, "bug": 2, "todo": 3}
RETIRED_FACTOR = 0.5  # expired/invalidated facts rank below live ones (still shown)


def question_terms(query: str) -> list[str]:
    """The question's subject terms."""
    ts = match.goal_terms(query)
    return [t for t in ts if t not in _QUESTION] or ts


def _word_scores(query: str, mems: list[MemoryRecord], items: Mapping[str, ItemRecord]
                 ) -> dict[str, float]:
    qts = question_terms(query)
    if not qts or not mems:
        return {}
    docs = {m.id: frozenset(match.terms(m.text)) for m in mems}
    titles = {m.id: frozenset(match.terms(items[m.workitem].title))
              if m.workitem and m.workitem in items else frozenset() for m in mems}
    n = len(mems)
    idf = {t: math.log(1 + (n + 1) / (1 + sum(1 for d in docs.values() if t in d)))
           for t in qts}
    total = sum(idf.values())
    out = {}
    for m in mems:
        got = sum(idf[t] if t in docs[m.id] else TITLE_WEIGHT * idf[t] if t in titles[m.id]
                  else 0.0 for t in qts)
        out[m.id] = got / total if total else 0.0
    return out


def words_decide(query: str, mems: list[MemoryRecord]) -> bool:
    """Enough memories answer the question by their words alone: no model is loaded."""
    scores = _word_scores(query, mems, {})
    return sum(1 for v in scores.values() if v >= WORDS_ENOUGH) >= min(ENOUGH_ANSWERS,
                                                                        max(1, len(mems)))


def _cos_scale(cos: float) -> float:
    """A cosine on the words scale: MIN_COSINE lands a little under MIN_WORDS, 0.6 at 0.8."""
    return max(0.0, min(1.0, (cos - 0.2) / 0.5))


def rank_memories(query: str, mems: list[MemoryRecord], items: Mapping[str, ItemRecord],
                  cosines: Mapping[str, float] | None = None
                  ) -> list[tuple[MemoryRecord, float, str]]:
    """(memory, score, found by: words | meaning | words+meaning), best first; a superseded
    memory follows the one that superseded it, and each pulls the other in."""
    words = _word_scores(query, mems, items)
    by_id = {m.id: m for m in mems}
    scored: dict[str, tuple[float, str]] = {}
    for m in mems:
        w = words.get(m.id, 0.0)
        cos = cosines.get(m.id) if cosines else None
        s = _cos_scale(cos) if cos is not None and cos >= MIN_COSINE else 0.0
        if w < MIN_WORDS and s == 0.0:
            continue
        how = "words+meaning" if w >= MIN_WORDS and s else ("words" if w >= MIN_WORDS
                                                           else "meaning")
        score = max(w, s) + 0.1 * min(w, s) + KIND_BONUS.get(m.kind, 0.0)
        if m.lifecycle in ("expired", "invalidated"):
            score *= RETIRED_FACTOR
        scored[m.id] = (score, how)
    # A reversal and what it reversed answer the same question: show both.
    for mid in list(scored):
        m = by_id[mid]
        for other in (by_id.get(m.superseded_by or ""),
                      *(x for x in mems if x.superseded_by == mid)):
            if other is not None and other.id not in scored:
                scored[other.id] = (scored[mid][0], scored[mid][1])
    order = sorted(scored, key=lambda i: (-scored[i][0], KIND_ORDER.get(by_id[i].kind, 9),
                                          by_id[i].lifecycle != "active",
                                          -by_id[i].confidence, i))
    placed: list[str] = []
    seen: set[str] = set()
    visiting: set[str] = set()  # a (corrupt) supersession cycle must not recurse forever

    def place(mid: str) -> None:
        if mid in seen:
            return
        m = by_id[mid]
        succ = m.superseded_by
        if succ in scored and succ not in seen and succ not in visiting:
            visiting.add(mid)
            place(succ)  # the decision that holds comes first...
            if mid in seen:
                return
        seen.add(mid)
        placed.append(mid)
        for x in order:  # ...then what it superseded, labelled by its lifecycle
            if by_id[x].superseded_by == mid:
                place(x)

    for mid in order:
        place(mid)
    return [(by_id[i], scored[i][0], scored[i][1]) for i in placed]


def rank_items(query: str, items: list[ItemRecord]) -> list[match.Match]:
    """WorkItems whose words answer the question (their summaries come after memories)."""
    return [m for m in match.rank(query, items) if m.lexical >= match.COLD_BELOW]
