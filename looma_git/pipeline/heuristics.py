"""The default extractor: decisions, todos, bugs and architecture notes from message text."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from looma_git.literals import Occurring
from looma_git.pipeline.decisions import confirms, goes_on, is_request, proposes
from looma_git.pipeline.text import TextMemo

KINDS = ("decision", "todo", "bug", "architecture")


@dataclass(frozen=True)
class MemoryCandidate:
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


# Each pattern with its gate: groups of lower-case literals such that every match of the
# pattern contains at least one literal of every group. A message none of whose gates open
# (most of them) is never split into sentences or searched; otherwise only the patterns
# whose gates opened are tried, sentence by sentence. The gates only ever skip work: they
# are a superset test, so what is found is exactly what the patterns alone find.
_Gate = tuple[tuple[str, ...], ...]
_SUBJECT = ("let's", "let us", "we'll", "we will", "we should", "we are going to", "i'll",
            "i will")
_CHOICE_VERB = ("use", "go with", "switch to", "adopt", "store", "keep", "stick with",
                "move to", "rely on", "standardi", "not use", "drop")
# Verbs a rule starts with when an agent states what the code will do.
_RULE_VERB_WORDS = ("retry", "stream", "match", "store", "keep", "cache", "send", "split",
                    "batch", "queue", "hash", "sign", "encrypt", "validate", "reject",
                    "serve", "paginate", "lock", "debounce", "throttle", "aggregate",
                    "compute", "route", "dedupe", "deduplicate", "persist", "emit", "publish",
                    "poll")
_RULE_VERBS = "|".join(_RULE_VERB_WORDS)
_PATTERNS: dict[str, tuple[tuple[re.Pattern[str], _Gate], ...]] = {
    "decision": (
        (re.compile(r"\b(?:let's|let us|we(?:'ll| will| should| are going to)|i(?:'ll| will))\s+"
                    r"(?:use|go with|switch to|adopt|store|keep|stick with|move to|rely on|"
                    r"standardi[sz]e on|not use|drop)\b", re.I), (_SUBJECT, _CHOICE_VERB)),
        (re.compile(r"\bwe(?:'ve)?\s+(?:decided|chose|agreed|settled)\b", re.I),
         (("decided", "chose", "agreed", "settled"),)),
        (re.compile(r"\b(?:decided|decision)\s*(?:to|on|:)", re.I), (("decided", "decision"),)),
        (re.compile(r"\bgoing with\b", re.I), (("going with",),)),
        (re.compile(r"\b(?:use|using|prefer)\s+\S+(?:\s+\S+)?\s+instead of\b", re.I),
         (("instead of",),)),
        # Decisions stated without a cue word, as a window's conclusion states a choice: a
        # declarative sentence contrasting what is done with what is not ("Usage records are
        # aggregated per subscription item at invoice time, not pushed to Stripe"), or naming
        # the option set aside ("... totals at invoice time rather than on every event").
        (re.compile(r"\b(?:is|are|will be|get|gets|stay|stays|remain|remains)\s+(?:now\s+|"
                    r"only\s+|always\s+|still\s+)?[a-z]+(?:ed|en)\b[^.;!?]*?,\s*(?:and\s+)?"
                    r"not\s+(?:[a-z]+(?:ed|en)|in|on|at|via|through|by|from|to|as|per)\b", re.I),
         (("not",), (",",), ("is", "are", "will be", "get", "stay", "remain"))),
        (re.compile(r"\b[a-z]+(?:s|ed)\b[^.;!?]*?\brather than\b", re.I), (("rather than",),)),
        (re.compile(r"\b(?:we|i)\s+(?:opted|chose|went)\s+(?:for|to|with)\b", re.I),
         (("opted", "chose", "went"),)),
        # A rule stated as an imperative answer: "Match on the verified email claim, never on
        # the display name", "Stream rows with a generator instead of building the file in
        # memory", "Retry with exponential backoff and full jitter: delay = ...".
        (re.compile(r"^\s*(?:" + _RULE_VERBS + r")\s+(?:with|on|by|in|at|per|through|via|"
                    r"only|once|every|each|the|a|all|one|rows|[a-z]+s)\b[^.!?:;]{10,120}?"
                    r"(?:,\s*(?:never|not|but never)\b|\binstead of\b|\brather than\b|:\s)",
                    re.I | re.M), (_RULE_VERB_WORDS,)),
        # A policy with a number: "Reset links expire after 30 minutes".
        (re.compile(r"\b(?:expire|expires|are valid|is valid|stay valid|time out|times out|"
                    r"capped|limited|kept|retained)\s+(?:for|after|at|to)\s+(?:up to\s+)?\d+"
                    r"\s*(?:s|ms|sec|secs|seconds?|min|mins|minutes?|h|hours?|days?|weeks?|"
                    r"requests?|calls?|attempts?|retries|tries|%)\b", re.I),
         (("expire", "is valid", "are valid", "stay valid", "time out", "times out", "capped",
           "limited", "kept", "retained"),)),
        # ...or by what happens at a count: "After the sixth failure the event goes to a
        # dead-letter table", "after 3 attempts we give up".
        (re.compile(r"\bafter\s+(?:the\s+)?(?:\d+|first|second|third|fourth|fifth|sixth|"
                    r"seventh|eighth|ninth|tenth|last|final)(?:st|nd|rd|th)?\s+(?:failed\s+)?"
                    r"(?:failures?|attempts?|retries|retry|tries|try|errors?)\b", re.I),
         (("after",), ("failure", "attempt", "retr", "tries", "try", "error"))),
    ),
    "todo": (
        (re.compile(r"^\s*(?:[-*]\s*)?(?:TODO|FIXME|todo)\b[:\s]", re.M), (("todo", "fixme"),)),
        (re.compile(r"\b(?:we|i|you)\s+still\s+need\s+to\b", re.I), (("still",), ("need",))),
        (re.compile(r"\bstill\s+(?:needs?|have)\s+to\b", re.I), (("still",), ("need", "have"))),
        (re.compile(r"\b(?:next step|follow[- ]up|left to do|remaining work)s?\b\s*(?:is|are|:)",
                    re.I), (("next step", "follow", "left to do", "remaining work"),)),
        (re.compile(r"^\s*[-*]\s*\[ \]\s+\S", re.M), (("[ ]",),)),
        (re.compile(r"\bdon't forget to\b", re.I), (("don't forget to",),)),
    ),
    "bug": (
        (re.compile(r"^\s*bug\s*:", re.I | re.M), (("bug",),)),
        (re.compile(r"\b(?:there's|there is|found|hit|spotted)\s+(?:a|another|the)\s+bug\b",
                    re.I), (("bug",),)),
        (re.compile(r"\b(?:fails|crashes|breaks|hangs|throws|raises|expires|returns 500)\s+"
                    r"(?:when|if|on|after|because)\b", re.I),
         (("fails", "crashes", "breaks", "hangs", "throws", "raises", "expires", "returns 500"),)),
        (re.compile(r"\b(?:is|are)\s+(?:broken|failing|flaky)\b", re.I),
         (("broken", "failing", "flaky"),)),
        (re.compile(r"\brace condition\b", re.I), (("race condition",),)),
        (re.compile(r"\b(?:a|the|this)\s+regression\s+(?:in|since|from|after|when)\b", re.I),
         (("regression",),)),
        # A diagnosis: "an N+1 query", "the root cause is", "is caused by".
        (re.compile(r"\b(?:an?\s+)?n\s*\+\s*1\s+(?:quer(?:y|ies)|select|problem)\b|"
                    r"\broot cause\b|\b(?:is|are|was|were)\s+caused by\b|\bthe culprit\b",
                    re.I), (("n+1", "n + 1", "root cause", "caused by", "culprit"),)),
    ),
    "architecture": (
        (re.compile(r"^\s*architecture\s*:", re.I | re.M), (("architecture",),)),
        (re.compile(r"\b(?:the|our)\s+(?:design|architecture)\s+(?:is|will be|uses|keeps)\b",
                    re.I), (("design", "architecture"),)),
        (re.compile(r"\b(?:layer|module|service|component)\s+(?:owns|is responsible for)\b",
                    re.I), (("owns", "is responsible for"),)),
        (re.compile(r"\ball\s+(?:\w+\s+){0,3}(?:go|goes|must go)\s+through\b", re.I),
         (("through",), ("all",), ("go",))),
        (re.compile(r"\bsingle source of truth\b", re.I), (("single source of truth",),)),
    ),
}
# Every pattern's first gate group is its most selective one: when no literal of any first
# group occurs, nothing can match and the message costs one lower() and these `in` tests.
_ANCHORS = tuple(sorted({lit for pats in _PATTERNS.values() for _, gate in pats
                         for lit in gate[0]}))
_ANCHORS_IN = Occurring(_ANCHORS)  # one pass: a quarter of the messages have none


def _behind(anchors: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Per anchor, the other literals of the patterns whose first group it is in: only those
    patterns can match once it occurs, so only their literals are worth testing."""
    out: dict[str, set[str]] = {a: set() for a in anchors}
    for pats in _PATTERNS.values():
        for _, gate in pats:
            others = {lit for group in gate[1:] for lit in group} - set(anchors)
            for a in gate[0]:
                out[a] |= others
    return {a: tuple(sorted(v)) for a, v in out.items()}


_BEHIND = _behind(_ANCHORS)


def _open_patterns(text: str) -> tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]:
    """Per kind (in KINDS order), the patterns whose gates `text` opens; () for most text."""
    low = text.lower()
    present = _ANCHORS_IN(low)
    if not present:
        return ()
    # The literals of patterns whose first group is closed decide nothing: not tested (every
    # literal of every gate was, 116 searches a message; the gates that open are the same).
    return _opened(frozenset(present).union(
        {lit for a in present for lit in _BEHIND[a] if lit in low}))


@functools.lru_cache(maxsize=4096)
def _opened(present: frozenset[str]) -> tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]:
    """The gates depend only on which literals occur: messages share few distinct sets."""
    out = []
    for kind in KINDS:
        pats = tuple(p for p, gate in _PATTERNS[kind]
                     if all(not present.isdisjoint(group) for group in gate))
        if pats:
            out.append((kind, pats))
    return tuple(out)


# A pattern that matches a sentence matches the message it is in, unless it is anchored to
# the sentence's start: one search of a long message (a tool output, a plan) rules out a
# pattern for all its sentences, where trying it sentence by sentence cost a call each.
_ANCHORED = frozenset(p for pats in _PATTERNS.values() for p, _ in pats
                      if "^" in p.pattern.replace("[^", "") or "\\A" in p.pattern)
LONG = 1500  # characters from which a message is searched whole first


def _in_text(kinds: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...], text: str
             ) -> tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]:
    """`kinds` without the patterns that match nowhere in `text` (anchored ones kept)."""
    out = []
    for kind, pats in kinds:
        kept = tuple(p for p in pats if p in _ANCHORED or p.search(text))
        if kept:
            out.append((kind, kept))
    return tuple(out)


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
    if "```" not in text:
        return text
    return _FENCE.sub(lambda m: " " * len(m.group(0)), text)


# An answer that opens with its verdict, then the reason: "Opaque: `encode_cursor`
# base64-encodes ...", "No cap, and none needed: aggregation is one line per ...", "Signed,
# time-limited tokens with itsdangerous so we don't need a table: ...". The agent's first
# sentence states the choice without a cue word. Labels ("Summary:", "Plan:", "Options with
# Redis:") and acknowledgements ("Right:", "Done:") head other things.
_VERDICT = re.compile(r"\A\s*([A-Za-z][^:\n`/(=?_]{1,90}?):\s+(\S.{24,})", re.S)
_NOT_VERDICT = frozenset("""summary plan note notes nb done result results status update
updates step steps todo fixme next output error warning traceback changes changed fixed here
example examples answer tl;dr usage files file tests test commit committed options option
context background problem issue cause question questions edit edits diff reason ps bug
architecture decision right ok okay sure good great nice correct exactly indeed agreed thanks
hmm well yes also so first then finally caveat aside run ran added removed updated moved
renamed created deleted tested checked found looked read wrote probably maybe perhaps
possibly likely unlikely depends hard unclear""".split())


def _verdict(sentence: str) -> bool:
    """Whether a message's first sentence opens with a verdict head (see _VERDICT)."""
    m = _VERDICT.match(sentence)
    if m is None:
        return False
    head = m.group(1).lower().split()
    # A head with "is"/"was" describes what is ("Today login is email + password: ..."), one
    # with "succeeded"/"failed" reports what happened ("The second confirm succeeded: ...").
    return len(head) <= 14 and head[0].strip(",.") not in _NOT_VERDICT and \
        _STATE_VERBS.isdisjoint(head)


_STATE_VERBS = frozenset("""is was were has had says said succeeded failed passed worked broke
fails passes works returned returns printed prints showed shows""".split())


def extract(text: str, *, event_id: str, agent: str, session_id: str, ts: str,
            role: str) -> list[MemoryCandidate]:
    """Candidates from one message; questions, hypotheticals and code are never candidates."""
    if role not in ("user", "assistant") or not text:
        return []
    return [MemoryCandidate(kind=kind, text=quote, event_id=event_id, start=start, end=end,
                            content_hash=digest, agent=agent, session_id=session_id, ts=ts,
                            role=role)
            for kind, quote, start, end, digest in _SPANS(text, role)]


def _spans(text: str, role: str) -> tuple[tuple[str, str, int, int, str], ...]:
    """`extract`'s candidates of a text as (kind, quote, start, end, content hash): what
    they are depends on the text and the role alone (`_SPANS` remembers them)."""
    masked = _masked(text[:20000])
    kinds = _open_patterns(masked)
    if kinds and len(masked) >= LONG:
        kinds = _in_text(kinds, masked)
    verdict = role == "assistant" and masked.find(":", 0, 100) >= 0  # a verdict may open it
    request = role == "user"  # a user's request may settle how (see _REQUEST)
    if not kinds and not verdict and not request:
        return ()
    out: list[tuple[str, str, int, int, str]] = []
    sentences: Iterator[re.Match[str]] = _SENT.finditer(masked)
    if not kinds and not request:  # only the opening verdict can be: one sentence to read
        opening = next(sentences, None)
        sentences = iter(() if opening is None else (opening,))
    matches = list(sentences)
    for i, m in enumerate(matches):
        sent = m.group(0)
        stripped = sent.strip()
        first, verdict = verdict, False  # only the message's first sentence
        if len(stripped) < 12 or stripped.endswith("?") or _NEGATIVE.search(stripped):
            continue
        found = next((kind for kind, pats in kinds if any(p.search(sent) for p in pats)),
                     "decision" if first and _verdict(sent) else None)
        asked = found is None and request and is_request(stripped)
        if asked:
            found = "decision"
        if found is None:
            continue
        start = m.start() + len(sent) - len(sent.lstrip())
        end = start + len(stripped)
        if asked:  # the same list of asks goes on in the next sentences
            for nxt in matches[i + 1:]:
                if not goes_on(nxt.group(0)) or is_request(nxt.group(0).strip()):
                    break
                end = nxt.start() + len(nxt.group(0).rstrip())
        quote = text[start:end][:300]
        out.append((found, quote, start, end,
                    hashlib.sha256(quote.encode("utf-8", "replace")).hexdigest()[:16]))
    return tuple(out)


_SPANS = TextMemo(_spans)
MAX_PLAN = 3  # proposing sentences taken from one confirmed message


def confirmed_plan(proposal: str, reply: str, *, event_id: str, agent: str, session_id: str,
                   ts: str) -> list[MemoryCandidate]:
    """The agent's proposal (`proposal`, the assistant message `event_id`) that the user's
    next message accepted with a bare confirmation (`reply`): its proposing sentences, as
    decisions. Nothing when the reply says more than a confirmation (then the reply itself
    is read by `extract`)."""
    if not confirms(reply):
        return []
    masked = _masked(proposal[:20000])
    out: list[MemoryCandidate] = []
    for m in _SENT.finditer(masked):
        sent = m.group(0)
        stripped = sent.strip()
        if len(stripped) < 12 or stripped.endswith("?") or not proposes(sent):
            continue
        start = m.start() + len(sent) - len(sent.lstrip())
        end = start + len(stripped)
        quote = proposal[start:end][:300]
        out.append(MemoryCandidate(
            kind="decision", text=quote, event_id=event_id, start=start, end=end,
            content_hash=hashlib.sha256(quote.encode("utf-8", "replace")).hexdigest()[:16],
            agent=agent, session_id=session_id, ts=ts, role="assistant"))
        if len(out) >= MAX_PLAN:
            break
    return out


def is_reversal(text: str) -> bool:
    """A decision that reverses an earlier one ("actually, let's not use Redis")."""
    return bool(_REVERSAL.search(text))


# A decision that picks a tool or approach for a slot: "use X", "go with X", "switch to X".
_PICKS = re.compile(r"\b(?:use|using|go(?:ing)? with|switch(?:ing)? to|adopt|stick with|move to|"
                    r"rely on|pick|chose|choose|prefer)\s+(?:the\s+|a\s+)?([\w.+#-]{2,})", re.I)
_WORDS = re.compile(r"[a-z][a-z0-9+#.-]*[a-z0-9+#]|[a-z]")
# Words that carry no subject: the reversal cues, choice verbs and glue.
_GLUE = frozenset("""a an the and or but of to in on for at by with from as is are be was were it
this that these those we we'll i i'll let let's us our you actually instead use using go going
switch switching to scrap revert not no longer change plan second thought decided decide
decision choose chose pick prefer adopt stick move rely keep store drop will should shall would
can just then now so also all any it's there here them they which what when ok okay yes right
let's""".split())


def _subject(text: str) -> set[str]:
    return {w.rstrip(".-") for w in _WORDS.findall(text.lower())
            if len(w) > 2 and w not in _GLUE}


# "... and not 3.12+", "..., not `before_render`": what a correction says is not so.
_NOT = re.compile(r"\bnot\s+`?([^\s`,;:!?]+)")
_TOKEN = re.compile(r"[^\s`,;:!?()]+")


def _is_specific(tok: str) -> bool:
    """A token that names one thing: a version, a path or an identifier, or a proper name
    ("3.12+", "sa.orm", "style_before", "Redis"), not an everyday word ("before")."""
    return len(tok) >= 2 and (tok[0].isupper() or any(not ch.isalpha() for ch in tok))


def _strip(tok: str) -> str:
    return tok.rstrip(".").lower()


def _negated(text: str) -> set[str]:
    return {_strip(t) for t in _NOT.findall(text) if _is_specific(t.rstrip("."))}


def _specific(text: str) -> set[str]:
    return {_strip(t) for t in _TOKEN.findall(text) if _is_specific(t.rstrip("."))}


def reversals(decisions: Sequence[tuple[str, str]]) -> dict[str, str]:
    """For decisions `(id, text)` of one WorkItem in the order they were said: earlier id ->
    the id of the later decision that reverses it.

    A later decision reverses an earlier one when it reads as a reversal ("actually",
    "instead", "switch to", ...) and either names the earlier one's subject (a shared
    content word: "instead of Dramatiq", "... for the background jobs") or, naming nothing
    shared, picks another tool for the slot the latest earlier pick filled ("We'll use
    Dramatiq" -> "Actually, let's use RQ").
    """
    out: dict[str, str] = {}
    for i, (later_id, later) in enumerate(decisions):
        if not is_reversal(later):
            # A correction that names what it replaces: "the changelog should say 3.11+ and
            # not 3.12+" supersedes the earlier decision that said 3.12+.
            for tok in _negated(later):
                for eid, text in decisions[:i]:
                    if eid not in out and eid != later_id and tok in _specific(text) \
                            and tok not in _negated(text):
                        out[eid] = later_id
            continue
        terms = _subject(later)
        earlier = [(eid, text) for eid, text in decisions[:i] if eid not in out and eid != later_id]
        named = [eid for eid, text in earlier if terms & _subject(text)]
        if not named and _PICKS.search(later):
            named = [eid for eid, text in reversed(earlier) if _PICKS.search(text)][:1]
        for eid in named:
            out[eid] = later_id
    return out
