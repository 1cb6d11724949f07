"""How goal and WorkItem texts become matching terms: stemming, stop words, the lead-in, a cache."""

from __future__ import annotations

import re
from functools import lru_cache

from looma_git.retrieval.records import ItemRecord

_WORD = re.compile(r"[a-z0-9][a-z0-9+#]*(?:\.[0-9]+)*")
# Paths split on / . _ - but a dot between digits is a version's ("3.14" is not "3" and "14").
_SPLIT = re.compile(r"[/_\-]|\.(?![0-9])|(?<![0-9])\.")
# Function words (pronouns, auxiliaries, quantifiers) name no topic but are in most texts, so
# in a goal they match WorkItems at random: "users who forgot their password" met the SSO work
# through "their" and the audit log through "who".
_STOP = frozenset("the a an of to in on for and or with is are was were be been being what whats "
                  "where how do does did my our we i me about work working resume status it its "
                  "that this these those by from into onto at as via than then there here who "
                  "whom which when why their them they you your he she his her us one some any "
                  "all also just so if but not no can could should would will shall may might "
                  "must has have had get got make thing things stuff up left off again still "
                  "bit part way something".split())
# Words that say a goal is about work but not which (retrieval/match.GENERIC_WEIGHT says how
# they rank), stemmed as `terms` stems them.
_GENERIC_WORDS = ("config configuration setting settings fix fixes fixed fixing bug bugs issue "
                  "issues problem problems error errors change changes update updates add adding "
                  "new test tests testing feature features support code file files work "
                  "improve pr prs branch commit look check done finish start help continue "
                  "broken wrong stuff function named module".split())
# "continue building the authentication" asks for the authentication: the lead-in is no topic.
LEAD_IN = re.compile(
    r"^\s*(?:(?:let's|lets|please|ok|okay|so)\s+)*(?:continue|resume|finish|keep|carry on|"
    r"get back to|go back to|back to|pick up|work on|working on|start on|"
    r"where (?:was|were) (?:i|we)|what (?:was|were) (?:i|we) doing)"
    r"(?:\s+(?:building|working on|working|with|on|implementing|adding|fixing|doing|the|"
    r"our|my|where (?:i|we) (?:left off|stopped|was|were)))*\s+", re.I)


@lru_cache(maxsize=65536)  # transcripts repeat a small vocabulary; stemming dominated rank()
def stem(word: str) -> str:
    """A light English stemmer: enough to make 'indexing' meet 'index' and 'tokens' 'token'."""
    for suf in ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "s"):
        if len(word) - len(suf) >= 3 and word.endswith(suf):
            # "speed", "need" and "class", "process" end like a suffix but are stems.
            if (suf == "ed" and word.endswith("eed")) or (suf == "s" and word.endswith("ss")):
                return word
            return word[: -len(suf)] + ("y" if suf == "ies" else "")
    return word


GENERIC = frozenset(stem(w) for w in _GENERIC_WORDS)


def terms(text: str) -> list[str]:
    """Stemmed content terms; paths split on / . _ -."""
    low = text.lower().replace("'", "")
    return [stem(w) for w in _WORD.findall(_SPLIT.sub(" ", low)) if w not in _STOP]


def goal_terms(goal: str) -> list[str]:
    """The goal's topic terms: its lead-in ("continue building the ...") dropped."""
    topic = LEAD_IN.sub("", goal, count=1)
    return list(dict.fromkeys(terms(topic) or terms(goal)))


# Term sets of items' texts, kept per process (a warm resume re-ranks without re-tokenising)
# and primed from the records snapshot (a fresh one does not tokenise either).
_TERMS: dict[str, frozenset[str]] = {}
MAX_CACHED_TEXTS = 8192


def _doc_terms(text: str) -> frozenset[str]:
    got = _TERMS.get(text)
    if got is None:
        if len(_TERMS) >= MAX_CACHED_TEXTS:
            _TERMS.clear()
        got = _TERMS[text] = frozenset(terms(text))
    return got


# ...and per record (frozen: its text is fixed), held with it so its id is not reused: a record
# met again is not joined into its text (memories included, KBs) and that text hashed, which
# was most of ranking's index at 5,000 sessions (833 WorkItems, every fresh resume).
_BY_ITEM: dict[int, tuple[ItemRecord, frozenset[str]]] = {}


def item_terms(it: ItemRecord) -> frozenset[str]:
    """Everything searchable about `it` (`text_fields`) as stemmed terms."""
    got = _BY_ITEM.get(id(it))
    if got is not None and got[0] is it:
        return got[1]
    ts = _doc_terms(it.text_fields())
    _keep(it, ts)
    return ts


def _keep(it: ItemRecord, ts: frozenset[str]) -> None:
    if len(_BY_ITEM) >= MAX_CACHED_TEXTS:
        _BY_ITEM.clear()
    _BY_ITEM[id(it)] = (it, ts)


def prime_terms(items: list[ItemRecord], saved: list[list[str]]) -> None:
    """Accept term sets computed before (the snapshot's) for these records."""
    for it, ts in zip(items, saved, strict=False):
        _keep(it, frozenset(ts))
