"""Decisions said as requests: a user's request that settles how something is done, and a
bare confirmation of the agent's proposal (read by pipeline/heuristics.py)."""

from __future__ import annotations

import re

# Verbs a rule starts with (as pipeline/heuristics' rule patterns), for "make it <verb> ...".
_MAKE_VERBS = ("retry|stream|match|store|keep|cache|send|split|batch|queue|hash|sign|encrypt|"
               "validate|reject|serve|paginate|lock|debounce|throttle|aggregate|compute|route|"
               "dedupe|deduplicate|persist|emit|publish|poll")

# A user's request that settles how something is done: "let's redirect stdout to devnull and
# exit with code 1", "iterate over a copy of the spans in both places", "don't emit the new
# line for inline nodes", "do it: a last_instruction on Frame, ...", "the changelog should say
# 3.11+ and not 3.12+". A request for *what* to do ("add a rate limiter", "fix that, commit
# and push", "look at how it uses the pattern") is the goal or the workflow, not a decision:
# after "let's"/"we should"/"don't"/"only" the verb must not be a workflow verb, and a bare
# imperative must open with a verb that shapes the code.
_WORKFLOW = ("see|look|check|try|start|begin|continue|resume|run|commit|push|pull|test|"
             "figure|find|review|read|open|debug|investigate|get|go|do|take|wait|pause|stop|"
             "think|discuss|talk|focus|write|fix|add|forget|worry|bother|change|touch|merge|"
             "rebase|release|ship|deploy|wrap up|finish|leave|note|explain|show|tell|ask|"
             "answer|list|trace|profile|benchmark|time|reproduce|measure|keep going|move on|"
             "have|be|make sure|also")
_DESIGN_VERBS = ("accept|apply|avoid|cache|call|catch|clamp|compile|compute|convert|copy|"
                 "default|defer|derive|drop|emit|encode|escape|exclude|expose|filter|hash|"
                 "ignore|iterate|keep|map|match|memoize|normalize|parse|pass|prefer|raise|"
                 "redirect|reject|replace|retry|return|reuse|rewrite|route|sanitize|serve|"
                 "skip|sort|split|store|stream|strip|swap|switch|treat|trim|truncate|use|"
                 "validate|walk|wrap|yield|batch|dedupe|aggregate|send|poll|publish|encrypt|"
                 "limit|lock|throttle|debounce|paginate|persist|queue|sign|fall back|"
                 "make (?:it|them|this|that) (?:" + _MAKE_VERBS + "|accept|skip|strip|"
                 "ignore|return|raise|use|iterate|treat|reject)")
_FILLER = (r"(?:(?:ok(?:ay)?|yes|yeah|yep|right|good|great|fine|sure|perfect|nice|so|then|"
           r"and|now|please|instead)\b[,:;]?\s+)*")
_REQUEST = re.compile(
    r"(?:\A|[;:]\s)\s*" + _FILLER + r"(?:"
    r"(?:let's|let us|we should|we'll|we will|we need to|you should|i'd rather|i'd prefer to|"
    r"i want you to)\s+(?:just\s+|only\s+|also\s+|not\s+|instead\s+)?(?!(?:" + _WORKFLOW
    + r")\b)[a-z]{2,}"
    r"|(?:don't|do not|never|always|only)\s+(?!(?:" + _WORKFLOW + r")\b)[a-z]{2,}"
    r"|(?:do|go (?:with|for)|go ahead with|implement) (?:it|that|this|the (?:plan|fix|change|"
    r"first|second|last) ?\w*|option \w+)\s*[:\u2014-]\s*\S"
    r"|(?:" + _DESIGN_VERBS + r")\b(?:\s+\S+){3}"
    r")"
    # ...or a correction: "X should say A and not B", "A reads better than B".
    r"|\bshould\s+(?:say|read|be|use|return|raise|stay|take|accept|call)\b[^;]*?"
    r"\b(?:and|but)\s+not\b"
    r"|\b(?:reads|works|is)\s+(?:much\s+)?better than\b", re.I)
# A request's next sentences that go on with the same list ("... apply it before the
# highlighting. then the changelog, for python 3.12+") are part of its quote.
_GOES_ON = re.compile(r"\A\s*(?:then|and|also|plus)\b", re.I)


def is_request(sentence: str) -> bool:
    """Whether a user's sentence is a request that settles how it is done (see _REQUEST)."""
    return bool(_REQUEST.search(sentence))


def goes_on(sentence: str) -> bool:
    """Whether a sentence goes on with the request before it ("then ...", "and ...")."""
    return bool(_GOES_ON.match(sentence))


# A bare confirmation of what the agent proposed: "yes, do it", "go ahead", "sounds good".
_CONFIRM = re.compile(
    r"\A\W*(?:(?:yes|yep|yeah|ok(?:ay)?|sure|perfect|great|good|agreed|sounds good|"
    r"looks good|lgtm|makes sense|right)\b[\s,.!]*)*(?:(?:go ahead|do it|do that|go for it|"
    r"let's do (?:it|that)|please do|yes please)\b[\s,.!]*)?(?:thanks?|please)?[\s.!]*\Z",
    re.I)
# ...and the sentences of the agent's message that proposed it: "I'd keep the lock in the
# store and ...", "The fix would be: ...", "Plan: ...", "We could ...".
_PROPOSAL = re.compile(
    r"\A\s*(?:[-*]\s+|\d+[.)]\s+)?(?:I'd|I would|I (?:propose|suggest)|my suggestion|"
    r"the plan|plan:|proposal:|the fix (?:would be|is)|the fix:|we could|we can|"
    r"option [a-z0-9]+:)", re.I)


def confirms(reply: str) -> bool:
    """Whether a user's reply is a bare confirmation ("yes, do it") and says nothing more."""
    return 0 < len(reply.split()) <= 8 and any(ch.isalpha() for ch in reply) and bool(
        _CONFIRM.match(reply))


def proposes(sentence: str) -> bool:
    """Whether an agent's sentence proposes what to do ("I'd ...", "The fix would be ...")."""
    return bool(_PROPOSAL.match(sentence))
