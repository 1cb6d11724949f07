"""Answers for `ask`: memories ranked by words and meaning, a superseded one beside its successor."""

from __future__ import annotations

import math
from collections.abc import Mapping

from looma_git.retrieval import match
from looma_git.retrieval.records import MemoryRecord
from looma_git.retrieval.terms import goal_terms, stem, terms

# Question words carry no subject ("why did we pick RQ" asks about RQ).
_QUESTION = frozenset(stem(w) for w in (
    "why which who whom whose when should would could can there their they them was were "
    "been be has have had did we our us you your pick picked choose chose decide decided "
    "using use used our".split()))
MIN_SCORE = 0.25  # nothing under this is an answer (a memory of a WorkItem matched at 0.5)
ITEM_SHARE = 0.5  # how much the WorkItem's match counts for each of its memories
MIN_COSINE = 0.35  # a memory this close in meaning answers the question too
KIND_BONUS = {"decision": 0.05, "architecture": 0.03}
KIND_ORDER = {"decision": 0, "architecture": 1, "bug": 2, "todo": 3}
RETIRED_FACTOR = 0.5  # expired/invalidated facts rank below live ones (still shown)


def topic(query: str) -> str:
    """The question without its question words, as text to rank WorkItems by."""
    words = query.replace("?", " ").split()
    kept = [w for w in words if stem(w.lower().strip(".,;:!'\"")) not in _QUESTION]
    return " ".join(kept) or query


def question_terms(query: str) -> list[str]:
    """The question's subject terms."""
    ts = goal_terms(query)
    return [t for t in ts if t not in _QUESTION] or ts


def _word_scores(query: str, mems: list[MemoryRecord]) -> dict[str, float]:
    """Memory id -> idf-weighted share of the question's terms in the memory's own text."""
    qts = question_terms(query)
    if not qts or not mems:
        return {}
    docs = {m.id: frozenset(terms(m.text)) for m in mems}
    n = len(mems)
    idf = {t: math.log(1 + (n + 1) / (1 + sum(1 for d in docs.values() if t in d)))
           for t in qts}
    total = sum(idf.values())
    return {m.id: sum(idf[t] for t in qts if t in docs[m.id]) / total if total else 0.0
            for m in mems}


def _cos_scale(cos: float) -> float:
    """A cosine on the words scale: MIN_COSINE lands near MIN_SCORE, 0.6 at 0.8."""
    return max(0.0, min(1.0, (cos - 0.2) / 0.5))


def rank_memories(query: str, mems: list[MemoryRecord], item_scores: Mapping[str, float],
                  cosines: Mapping[str, float] | None = None
                  ) -> list[tuple[MemoryRecord, float, str]]:
    """(memory, score, found by: words | meaning | work), best first; a superseded memory
    follows the one that superseded it, and each pulls the other in.

    A memory answers by its own words or meaning, or as a fact of the WorkItem the question
    is about (`item_scores`: the goal match of each WorkItem): then its own words order it
    among that WorkItem's facts, decisions first."""
    words = _word_scores(query, mems)
    by_id = {m.id: m for m in mems}
    scored: dict[str, tuple[float, str]] = {}
    for m in mems:
        w = words.get(m.id, 0.0)
        cos = cosines.get(m.id) if cosines else None
        s = _cos_scale(cos) if cos is not None and cos >= MIN_COSINE else 0.0
        own = max(w, s) + 0.1 * min(w, s)
        how = "meaning" if s > w else "words"
        item = item_scores.get(m.workitem or "", 0.0)
        via_item = ITEM_SHARE * item + (1 - ITEM_SHARE) * own if item >= match.COLD_BELOW \
            else 0.0
        if via_item > own:
            own, how = via_item, "work"
        if own < MIN_SCORE:
            continue
        score = own + KIND_BONUS.get(m.kind, 0.0)
        if m.lifecycle in ("expired", "invalidated"):
            score *= RETIRED_FACTOR
        scored[m.id] = (score, how)
    # A reversal and what it reversed answer the same question: show both.
    replaced: dict[str, list[MemoryRecord]] = {}  # successor id -> what it superseded
    for mem in mems:
        if mem.superseded_by:
            replaced.setdefault(mem.superseded_by, []).append(mem)
    for mid in list(scored):
        m = by_id[mid]
        for other in (by_id.get(m.superseded_by or ""), *replaced.get(mid, ())):
            if other is not None and other.id not in scored:
                scored[other.id] = (scored[mid][0], scored[mid][1])
    order = sorted(scored, key=lambda i: (-scored[i][0], KIND_ORDER.get(by_id[i].kind, 9),
                                          by_id[i].lifecycle != "active",
                                          -by_id[i].confidence, i))
    replaced_in_order: dict[str, list[str]] = {}
    for x in order:
        if by_id[x].superseded_by:
            replaced_in_order.setdefault(by_id[x].superseded_by or "", []).append(x)
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
        for x in replaced_in_order.get(mid, ()):  # ...then what it superseded, labelled
            place(x)

    for mid in order:
        place(mid)
    return [(by_id[i], scored[i][0], scored[i][1]) for i in placed]


def rank_items(ranked: list[match.Match]) -> list[match.Match]:
    """WorkItems that answer the question (their summaries come after memories)."""
    return [m for m in ranked if m.score >= match.COLD_BELOW]
