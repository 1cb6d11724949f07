"""Goal matching and the resume outcome: words and meaning fused, thresholds in one place."""

from __future__ import annotations

import bisect
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass

from looma_git.retrieval.entities import entity, file_named
from looma_git.retrieval.fuzzy import token_set_ratio
from looma_git.retrieval.records import ItemRecord
from looma_git.retrieval.terms import GENERIC, LEAD_IN, goal_terms, item_terms, stem

# Resume thresholds (DESIGN §5), in one place; docs/quality.md says how they were chosen.
# Words: idf-weighted term coverage + fuzzy title/alias match, in [0, 1].
CONFIDENT_AT = 0.55  # the top match must reach this...
MARGIN = 0.15  # ...and lead the runner-up by this much
COLD_BELOW = 0.25  # below this no word matches: say so, invent nothing
# Meaning: cosine between the goal and the item's summary or closest session window.
SEM_CONFIDENT_AT = 0.42
SEM_MARGIN = 0.15
SEM_COLD_BELOW = 0.30
# A words match this weak (one common word of several) needs meaning not to contradict it:
# with a cosine under SEM_COLD_BELOW it is no match ("batch pick lists by zone" vs a WorkItem
# that once said "picks up").
LEX_WEAK = 0.35
# Both channels put the same WorkItem first, each at its cold line or more and clear of its own
# runner-up by these (smaller) margins: two independent weak signals that agree are a match
# ("join a list in words": one shared word, and by far the closest meaning).
# The cosine must then reach AGREE_SEM_AT: a cosine just over the cold line is often the same
# shared word seen again by the embedder ("unity physics jitter" vs the webhook retries' "full
# jitter": words 0.33, cosine 0.32), not a second, independent signal.
AGREE_MARGIN = 0.10
AGREE_SEM_MARGIN = 0.08
AGREE_SEM_AT = 0.34
MAX_SIDE_BY_SIDE = 4
# Words that say a goal is about work but not which ("fix the config", "the test bug"): they
# rank (at GENERIC_WEIGHT of their idf; in a project of ten WorkItems a word one of them said
# by chance has the highest idf) but never make a match: a words match needs a shared
# non-generic word, else the goal is cold by words ("the thing with the config").
GENERIC_WEIGHT = 0.3
# A goal most of whose topic weight is words no WorkItem has is a paraphrase or about something
# else ("add a japanese translation", "retry failed card payments"): the few words it shares
# are then no near-tie, and make a match only with meaning's confirmation (see `outcome`).
UNKNOWN_AT = 0.5
# ...meaning's confirmation there: the lead's cosine at least this (under it the texts are
# unrelated: "continue the startup time work" met the tox work by "time" at 0.12).
SEM_UNRELATED = 0.2
# Meaning is no near-tie when it is near every WorkItem: a goal close to the project as a whole
# ("pipx inject extra packages" in pipx) is close to none of its work. Ties of more than this
# share of the WorkItems with cosines are dropped.
SEM_TIES_SHARE = 0.5
RRF_K = 60  # reciprocal rank fusion constant (the usual 60)
# A runner-up that has nearly all the goal's words the leader has is a near-duplicate (two
# fixes of one function, a week apart): the fuzzy title alone never makes the leader confident
# over it ("the dataclass pretty printing fix": words coverage 1.0 and 0.94, titles 0.93 and
# 0.49). Meaning may still tell them apart; otherwise both are shown.
NEAR_DUP_COVER = 0.8  # the runner-up covers this much of the goal's words...
NEAR_DUP_GAP = 0.1  # ...within this of the leader's coverage

W_COVERAGE = 0.70
W_TITLE = 0.30
PARTIAL = 0.6  # a goal word that only shares a prefix with an item word ("auth" ~ "authentication")
ENTITY_OTHERS = 0.5  # ...then the words score of the items that do not have it is scaled

# A goal word with a digit names one thing (a version, a PR, a status code, "int32").
_SPECIFIC = re.compile(r"[0-9]")
_CAPS = re.compile(r"\b[A-Z]{3,}\b")


@dataclass(frozen=True)
class _Index:
    """The items' terms inverted: term -> item positions, and the sorted vocabulary, so a
    goal term's exact and partial (abbreviation) matches are looked up, not scanned."""

    items: list[ItemRecord]
    order: tuple[ItemRecord, ...]  # the list's contents when indexed (a list can be changed)
    docs: tuple[frozenset[str], ...]
    postings: dict[str, tuple[int, ...]]
    vocab: tuple[str, ...]

    def hits(self, term: str) -> tuple[set[int], set[int]]:
        """(items with `term`, items where it only abbreviates or is abbreviated by a word:
        4+ letters shared as a whole prefix, "auth" / "authentication")."""
        exact = set(self.postings.get(term, ()))
        part: set[int] = set()
        if len(term) >= 4:
            i = bisect.bisect_left(self.vocab, term)
            while i < len(self.vocab) and self.vocab[i].startswith(term):
                part.update(self.postings[self.vocab[i]])
                i += 1
        for n in range(4, len(term)):
            part.update(self.postings.get(term[:n], ()))
        return exact, part - exact


_INDEX: list[_Index] = []  # the last few lists ranked (a process ranks one list many times)


def _index(items: list[ItemRecord]) -> _Index:
    for ix in _INDEX:
        if ix.items is items and len(ix.order) == len(items) and all(
                map(operator.is_, ix.order, items)):
            return ix
    docs = tuple(item_terms(it) for it in items)
    post: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        for t in d:
            post.setdefault(t, []).append(i)
    ix = _Index(items, tuple(items), docs, {t: tuple(v) for t, v in post.items()}, tuple(sorted(post)))
    _INDEX.insert(0, ix)
    del _INDEX[4:]
    return ix


@dataclass(frozen=True)
class Match:
    """One WorkItem's match against a goal, with the parts behind it."""

    item: ItemRecord
    score: float  # fused, on the words scale (what the thresholds read)
    coverage: float
    title: float
    semantic: float | None  # cosine, when meaning was consulted
    matched_terms: tuple[str, ...]
    lexical: float = 0.0
    via: str = "words"  # words | meaning | words+meaning | branch | file | picked | recent
    # What makes a words match a match (see `outcome`): the item shares a non-generic goal
    # word, and one of the goal's words with a digit when it has any ("python 3.14" is not
    # the work on 3.8); `unknown`: the goal's share of topic weight no WorkItem has.
    topical: bool = True
    names_specific: bool = True
    unknown: float = 0.0
    # The goal is a file of the item's and the item's name (title, branch) says the file's
    # name ("pagination.py" and "Pagination per_page gets wrong value"; see `outcome`).
    names_file: bool = False


def rank(goal: str, items: list[ItemRecord],
         semantic: Mapping[str, float] | None = None) -> list[Match]:
    """Rank items for a goal by words (idf-weighted coverage, fuzzy title, branch and file
    names), fused with meaning (cosines, when given) by reciprocal rank; `score` is the
    stronger channel on the words scale (see `sem_on_word_scale`)."""
    gts = goal_terms(goal)
    if not gts or not items:
        return []
    # A word the goal writes in capitals names a thing (an SQL UPDATE, a GET endpoint, a CSV
    # file), not work in general: it is no generic word there.
    generic = GENERIC - {stem(w.lower()) for w in _CAPS.findall(goal)}
    ix = _index(items)
    n = len(items)
    hits_of = {t: ix.hits(t) for t in gts}
    idf = {t: math.log(1 + (n + 1) / (1 + len(e) + len(p))) *
           (GENERIC_WEIGHT if t in generic else 1.0) for t, (e, p) in hits_of.items()}
    total = sum(idf.values())
    topic_terms = [t for t in gts if t not in generic]
    topic_w = sum(idf[t] for t in topic_terms)
    unknown = round(sum(idf[t] for t in topic_terms if not hits_of[t][0] and not hits_of[t][1])
                    / topic_w, 4) if topic_w else 0.0
    digits = [t for t in gts if len(t) >= 2 and _SPECIFIC.search(t)]
    # The title match reads the goal without its generic words: "the release fix" is about
    # the release, not about every title that says "Fix".
    topic = " ".join(w for w in LEAD_IN.sub("", goal, count=1).lower().split()
                     if stem(w.strip(".,;:!?'\"()")) not in generic)
    lex: list[tuple[ItemRecord, float, float, float, tuple[str, ...], str, bool, bool]] = []
    for i, it in enumerate(items):
        hit = [t for t in gts if i in hits_of[t][0]]
        part = [t for t in gts if i in hits_of[t][1]]
        coverage = (sum(idf[t] for t in hit) + PARTIAL * sum(idf[t] for t in part)) / total \
            if total else 0.0
        topical = any(t not in generic for t in hit + part)
        # A fuzzy title hit without any shared topic term is noise ("kubernetes" vs "Rate
        # Limiter", "the thing with the config" vs any title with "the").
        title = max(token_set_ratio(topic, x.lower()) for x in (it.title, *it.aliases)) \
            / 100.0 if topical else 0.0
        score = W_COVERAGE * coverage + W_TITLE * title if topical else 0.0
        via = "words"
        ent = entity(goal, it)
        if ent and ent[0] > score:
            score, via = ent
            topical = True
        lex.append((it, round(score, 4), round(coverage, 4), round(title, 4),
                    tuple(hit + part), via, topical,
                    via != "words" or not digits or any(t in hit for t in digits)))
    if any(r[5] in ("branch", "file") for r in lex):
        # The goal names a branch or a file that WorkItems have: those are its matches. The
        # words of a path or branch name ("src", "py", the package, "fix") are in most
        # WorkItems of a project and say little more about the others.
        lex = [r if r[5] in ("branch", "file") else (r[0], round(r[1] * ENTITY_OTHERS, 4),
                                                    *r[2:]) for r in lex]
        unknown = 0.0
    order_lex = sorted(lex, key=lambda r: (-r[1], -r[0].confidence, r[0].id))
    rrf: dict[str, float] = {r[0].id: 1.0 / (RRF_K + i + 1) for i, r in enumerate(order_lex)
                             if r[1] > 0}
    if semantic:
        order_sem = sorted((it for it in items if it.id in semantic),
                           key=lambda it: (-semantic[it.id], it.id))
        for i, it in enumerate(order_sem):
            if semantic[it.id] >= SEM_COLD_BELOW:
                rrf[it.id] = rrf.get(it.id, 0.0) + 1.0 / (RRF_K + i + 1)
    out = []
    for it, score, coverage, title, found, via, topical, specific in lex:
        cos = semantic.get(it.id) if semantic else None
        fused = score
        if cos is not None:
            s = sem_on_word_scale(cos)
            if via in ("branch", "file"):
                fused = max(s, score)  # still the entity's match (see `outcome`)
            elif s > score:
                fused, via = s, ("words+meaning" if score >= COLD_BELOW else "meaning")
            elif s >= COLD_BELOW and score >= COLD_BELOW:
                via = "words+meaning"
        out.append(Match(item=it, score=round(fused, 4), coverage=coverage, title=title,
                         semantic=None if cos is None else round(cos, 4), matched_terms=found,
                         lexical=score, via=via, topical=topical, names_specific=specific,
                         unknown=unknown, names_file=via == "file" and file_named(goal, it)))
    out.sort(key=lambda m: (-m.score, -rrf.get(m.item.id, 0.0), -m.item.confidence, m.item.id))
    return out


def sem_on_word_scale(cos: float) -> float:
    """A cosine mapped onto the words scale so one set of thresholds reads both: the cold
    and confident cosines land on COLD_BELOW and CONFIDENT_AT (linear between, clamped)."""
    slope = (CONFIDENT_AT - COLD_BELOW) / (SEM_CONFIDENT_AT - SEM_COLD_BELOW)
    return max(0.0, min(1.0, COLD_BELOW + (cos - SEM_COLD_BELOW) * slope))


def lexical_decides(lexical: list[Match]) -> bool:
    """The rule for loading no model: the words alone make the goal confident. Meaning is
    consulted only when words leave it ambiguous or cold (a paraphrase, a vague goal)."""
    entity = _entity_outcome(lexical) if lexical else None
    return (entity is not None and entity[0] == "confident") or \
        _words_confident(lexical) is not None


def _entity_outcome(matches: list[Match]) -> tuple[str, list[Match]] | None:
    """Several WorkItems have the branch or file the goal names: they are its matches, side
    by side (the meaning of a path is no tie-break), unless one alone is named after the file:
    a sweep that also touched `pagination.py` (type hints in every module) is not the
    pagination fix. None when the goal names no such entity of several WorkItems."""
    top_lex = max(matches, key=lambda m: m.lexical)
    if top_lex.via not in ("branch", "file"):
        return None
    named = [m for m in matches if m.via == top_lex.via and m.lexical == top_lex.lexical]
    if len(named) < 2:
        return None
    titled = [m for m in named if m.names_file]
    if len(titled) == 1:
        return "confident", titled
    return "ambiguous", named[:MAX_SIDE_BY_SIDE]


def _words_confident(matches: list[Match]) -> Match | None:
    """The WorkItem the words alone make confident: the top words score at CONFIDENT_AT, MARGIN
    over the runner-up, naming the goal's digits (a version, a number) when it has any, on a
    goal whose topic is mostly words the project has."""
    if not matches:
        return None
    by = sorted(matches, key=lambda m: (-m.lexical, -m.item.confidence, m.item.id))
    if _state(by, [m.lexical for m in by], CONFIDENT_AT, MARGIN, COLD_BELOW) != "confident":
        return None
    if _near_duplicates(by):
        return None
    return by[0] if by[0].names_specific else None


def _near_duplicates(by_words: list[Match]) -> list[Match]:
    """The words leader's near-duplicates (NEAR_DUP_COVER, NEAR_DUP_GAP): matches by words
    (not a branch or file the goal names) that have nearly all of the goal's words it has."""
    if not by_words or by_words[0].via in ("branch", "file"):
        return []
    lead = by_words[0]
    return [m for m in by_words[1:MAX_SIDE_BY_SIDE] if m.via not in ("branch", "file")
            and m.topical
            and m.coverage >= NEAR_DUP_COVER and lead.coverage - m.coverage <= NEAR_DUP_GAP]


def semantic_can_change(lexical: list[Match]) -> bool:
    """Whether consulting meaning could change a words-only outcome (the inverse of
    `lexical_decides`, kept for callers that ask it this way)."""
    return bool(lexical) and not lexical_decides(lexical)


def _state(matches: list[Match], scores: list[float], high: float, margin: float,
           low: float) -> str:
    if not matches or scores[0] < low:
        return "cold"
    c2 = scores[1] if len(scores) > 1 else 0.0
    return "confident" if scores[0] >= high and scores[0] - c2 >= margin else "ambiguous"


def outcome(matches: list[Match]) -> tuple[str, list[Match]]:
    """confident (one), ambiguous (near-ties side by side) or cold (nothing).

    Words decide first: a confident words match stands (no meaning needed). Otherwise:
    - meaning carries the goal on its own thresholds (cosine SEM_CONFIDENT_AT with
      SEM_MARGIN over the runner-up), unless the words strongly (CONFIDENT_AT) point
      elsewhere;
    - words and meaning agree: both rank the same WorkItem first, words at COLD_BELOW and
      meaning at AGREE_SEM_AT or more, each clear of its runner-up by AGREE_MARGIN /
      AGREE_SEM_MARGIN;
    - meaning confirms a moderate words match: words rank one WorkItem first by MARGIN at
      LEX_WEAK or more (one clear topic word of a paraphrase, "activate(None)", ".mo ...
      releasing") and no other WorkItem is closer in meaning by SEM_MARGIN, or closer at
      SEM_CONFIDENT_AT (meaning would pick it: "stop one customer from flooding the API" has
      the words of the usage billing, the meaning of the rate limiter; both are shown);
    - otherwise the near-ties of both channels are shown side by side, never blended, and
      only WorkItems that really match (words at COLD_BELOW, meaning at SEM_COLD_BELOW) are
      near-ties: one weak match alone is no choice to offer, so the goal is cold."""
    if not matches:
        return "cold", []
    entity = _entity_outcome(matches)
    if entity is not None:
        return entity
    sure = _words_confident(matches)
    if sure is not None:
        return "confident", [sure]
    # Most of the goal is words no WorkItem has: its few shared words are no near-tie, and
    # make a match only where meaning confirms them.
    unknown = matches[0].unknown >= UNKNOWN_AT

    def lex(m: Match) -> float:
        if m.lexical < LEX_WEAK and m.semantic is not None and m.semantic < SEM_COLD_BELOW:
            return 0.0
        return m.lexical

    by_lex = sorted(matches, key=lambda m: (-lex(m), -m.item.confidence, m.item.id))
    lex_scores = [lex(m) for m in by_lex]
    s_lex = _state(by_lex, lex_scores, CONFIDENT_AT, MARGIN, COLD_BELOW)
    if s_lex == "confident":  # but not `sure`: it misses the goal's digits; meaning may pick
        s_lex = "ambiguous"
    with_cos = [m for m in matches if m.semantic is not None]
    by_sem = sorted(with_cos, key=lambda m: (-(m.semantic or 0.0), m.item.id))
    sem_scores = [m.semantic or 0.0 for m in by_sem]
    s_sem = _state(by_sem, sem_scores, SEM_CONFIDENT_AT, SEM_MARGIN, SEM_COLD_BELOW)
    if s_sem == "confident":
        top = by_sem[0]
        # Meaning carries the goal unless the words make a strong case for another item:
        # that disagreement is shown side by side, not hidden.
        rival = by_lex[0]
        if rival.item.id == top.item.id or lex(rival) < CONFIDENT_AT:
            return "confident", [top]
    lead = by_lex[0]
    # Agreement reads the raw words scores: a word several WorkItems share ("job") puts none of
    # them ahead, even where meaning has discounted the others.
    raw = sorted(matches, key=lambda m: (-m.lexical, -m.item.confidence, m.item.id))
    if with_cos and by_sem and by_sem[0].item.id == raw[0].item.id and \
            raw[0].names_specific and \
            _state(raw, [m.lexical for m in raw], COLD_BELOW, AGREE_MARGIN,
                   COLD_BELOW) == "confident" and \
            _state(by_sem, sem_scores, AGREE_SEM_AT,
                   SEM_MARGIN if unknown else AGREE_SEM_MARGIN, SEM_COLD_BELOW) == "confident":
        return "confident", [raw[0]]
    dups = _near_duplicates(raw)
    # Meaning discounts the weak words matches it does not support (`lex`); when it does not
    # support the lead either (its cosine under SEM_COLD_BELOW), that discount tells nothing
    # apart, and the lead must also clear the words as they are, by the margin of two weak
    # signals (AGREE_MARGIN): "deprecate the __version__ attribute" has "version" in one
    # WorkItem (0.35) and "attribute" in three (0.30), and meaning is near none of them.
    raw_lead = (lead.semantic or 0.0) >= SEM_COLD_BELOW or _state(
        raw, [m.lexical for m in raw], COLD_BELOW, AGREE_MARGIN, COLD_BELOW) == "confident"
    if with_cos and _state(by_lex, lex_scores, LEX_WEAK, MARGIN, COLD_BELOW) == "confident" \
            and raw_lead and not dups and lead.names_specific and (
                not unknown or (lead.semantic or 0.0) >= SEM_UNRELATED):
        mine = lead.semantic or 0.0
        closer = [m for m in by_sem if (m.semantic or 0.0) >= SEM_COLD_BELOW and (
            (m.semantic or 0.0) - mine >= SEM_MARGIN
            or ((m.semantic or 0.0) >= SEM_CONFIDENT_AT and (m.semantic or 0.0) > mine))]
        if not closer:
            return "confident", [lead]
    # Of a goal mostly unknown to the project, words shared by several WorkItems alike are
    # noise ("retry failed card payments": "retry" and "fail" in the jobs and the webhooks);
    # a clear words lead still stands beside what meaning prefers.
    noise = unknown and _state(by_lex, lex_scores, COLD_BELOW, MARGIN, COLD_BELOW) != "confident"
    lex_ties = [m for m in by_lex if lex(m) >= COLD_BELOW
                and lex_scores[0] - lex(m) < MARGIN] if s_lex == "ambiguous" and not noise \
        else []
    sem_ties = [m for m in by_sem if (m.semantic or 0.0) >= SEM_COLD_BELOW
                and sem_scores[0] - (m.semantic or 0.0) < SEM_MARGIN] \
        if s_sem != "cold" and (not noise or sem_scores[0] >= SEM_CONFIDENT_AT) else []
    if len(sem_ties) > max(2, SEM_TIES_SHARE * len(with_cos)):
        sem_ties = []  # near every WorkItem: near none of them
    ids = {m.item.id for m in lex_ties + sem_ties + (dups and [raw[0], *dups])}
    ties = [m for m in matches if m.item.id in ids]  # `matches` is in fused (RRF) order
    if len(ties) < 2:
        return "cold", []
    return "ambiguous", ties[:MAX_SIDE_BY_SIDE]
