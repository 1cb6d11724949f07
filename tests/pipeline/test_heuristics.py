"""The heuristic extractor: common phrasings found with exact spans; negatives ignored."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.pipeline.heuristics import extract, is_reversal


def kinds(text: str, role: str = "assistant") -> list[tuple[str, str]]:
    return [(c.kind, c.text) for c in extract(text, event_id="e1", agent="claude-code",
                                                  session_id="s1", ts="2026-01-01T00:00:00Z",
                                                  role=role)]


@pytest.mark.parametrize("text,kind", [
    ("Let's use PKCE instead of the implicit flow because it is safer.", "decision"),
    ("We decided to store refresh tokens in Redis.", "decision"),
    ("Decision: the rate limiter uses a token bucket.", "decision"),
    ("I'll go with a sliding window for the limiter.", "decision"),
    ("TODO: add refresh-token rotation.", "todo"),
    ("We still need to handle the logout route.", "todo"),
    ("- [ ] write migration docs", "todo"),
    ("Next step: wire the middleware into the app.", "todo"),
    ("Bug: the session expires when two refreshes race.", "bug"),
    ("The login page crashes when the cookie is missing.", "bug"),
    ("There's a bug in the token parser.", "bug"),
    ("Architecture: all writes go through the ledger store.", "architecture"),
    ("The settings module is responsible for validation.", "architecture"),
])
def test_phrasings(text: str, kind: str) -> None:
    found = kinds(text)
    assert found and found[0][0] == kind, found


@pytest.mark.parametrize("text", [
    "Should we use Redis for the tokens?",
    "Maybe we'll use PKCE, not sure yet.",
    "What if we decided to drop the cache?",
    "If we use Redis, we need a connection pool.",
    "```python\n# TODO: remove this hack\nx = 1\n```",
    "Can we store tokens in Redis?",
    "Thanks, that looks good.",
])
def test_negatives(text: str) -> None:
    assert kinds(text) == []


def test_tool_and_system_roles_are_not_mined() -> None:
    assert kinds("TODO: add refresh-token rotation.", role="tool") == []
    assert kinds("We decided to store refresh tokens in Redis.", role="system") == []


def test_span_indexes_the_original_text() -> None:
    text = "Okay.\n\nWe decided to store refresh tokens in Redis.\nMore text here."
    (c,) = extract(text, event_id="e1", agent="codex", session_id="s", ts="", role="user")
    assert text[c.start:c.end] == c.text
    assert c.content_hash and c.cand_id.startswith("cand_")


def test_reversal() -> None:
    assert is_reversal("Actually, let's not use Redis; switch to Postgres.")
    assert not is_reversal("Let's use Redis for the token store.")


# --- the gates skip work only: the same candidates as trying every pattern on every sentence

def _reference(text: str, role: str = "assistant") -> list[tuple[str, int, int]]:
    """Every pattern against every sentence, no gates (how extraction worked before)."""
    from looma_git.pipeline import heuristics as h

    if role not in ("user", "assistant") or not text:
        return []
    masked = h._masked(text[:20000])
    out = []
    for i, m in enumerate(h._SENT.finditer(masked)):
        sent = m.group(0)
        stripped = sent.strip()
        if len(stripped) < 12 or stripped.endswith("?") or h._NEGATIVE.search(stripped):
            continue
        start = m.start() + len(sent) - len(sent.lstrip())
        for kind in h.KINDS:
            if any(p.search(sent) for p, _gate in h._PATTERNS[kind]):
                out.append((kind, start, start + len(stripped)))
                break
        else:  # an answer's opening verdict ("Opaque: ...") is the first sentence's only
            if i == 0 and role == "assistant" and h._verdict(sent):
                out.append(("decision", start, start + len(stripped)))
    return out


FRAGMENTS = ["Let's use", "we'll", "I will", "keep", "Redis", "decided to", "Decision:",
             "going with", "use PKCE instead of", "cookies", "are aggregated per item",
             ", not pushed", "rather than", "we opted for", "TODO:", "todo ", "FIXME",
             "still need to", "still has to", "next step:", "follow-up is", "- [ ] docs",
             "don't forget to", "bug:", "found a bug", "fails when", "is broken",
             "race condition", "a regression in", "Architecture:", "the design is",
             "module owns", "all writes go through", "single source of truth", "the",
             "tokens", ".", ". ", "\n", "? ", "!", "```", "if", "maybe", " ", ",", "x.py",
             "- ", "  ", "ALL", "Through", "NOT", "Retry with", "Stream rows", ": ",
             "instead of", ", never on", "expire after 30 minutes", "an N+1 query",
             "root cause", "Match on the verified email claim", "time out after 3 tries",
             "Sessions times out after 5 minutes", "is valid for 7 days", "stay valid for",
             "validate", "timeout", "time", "all calls must go through", "goes", "go"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map(" ".join) |
       st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join))
def test_gated_extraction_equals_trying_every_pattern(text: str) -> None:
    got = [(c.kind, c.start, c.end) for c in extract(
        text, event_id="e", agent="a", session_id="s", ts="", role="assistant")]
    assert got == _reference(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map(" ".join) |
       st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join))
def test_searching_a_long_message_whole_first_changes_nothing(text: str) -> None:
    """A pattern ruled out by one search of the whole message matches none of its sentences
    (`LONG` lowered so that every message takes that path)."""
    from looma_git.pipeline import heuristics as h

    saved, h.LONG = h.LONG, 0
    try:
        got = [(c.kind, c.start, c.end) for c in extract(
            text, event_id="e", agent="a", session_id="s", ts="", role="assistant")]
    finally:
        h.LONG = saved
    assert got == _reference(text)


# --- decisions without a cue word, and reversals

@pytest.mark.parametrize("text", [
    "Usage records are aggregated per subscription item at invoice time, not pushed to Stripe.",
    "Totals are computed once at invoice time rather than on every usage event.",
    "We opted for a nightly batch job.",
    "Match on the verified email claim, never on the display name: names collide.",
    "Stream rows with a generator instead of building the file in memory.",
    "Retry with exponential backoff and full jitter: delay = random(0, 30s * 2^n).",
    "Reset links expire after 30 minutes and are single-use.",
    "Opaque: encode_cursor base64-encodes the pair, and clients must not build it.",
    "No cap, and none needed: aggregation is one line per subscription item.",
    "After the sixth failure the event goes to a dead-letter table for replay.",
])
def test_choices_stated_without_cue_words(text: str) -> None:
    assert kinds(text) == [("decision", text)]


@pytest.mark.parametrize("text", [
    "The test is not flaky anymore.",
    "Rather than that, thanks!",
    "It works, not sure why.",
    "Run the tests: all pass.",
    "Summary: the N+1 on line items and a sequential scan.",
    "Options with Redis: Celery (heavy, lots of config), Dramatiq (small).",
    "Right: the workflow runs the build straight after checkout.",
    "Today login is email and password: the route checks the hash.",
    "Probably not: if we limited /health the load balancer would mark us down.",
    "The second confirm with the same token succeeded: the row was not deleted in the same transaction.",
    "Match the brackets.",
    "Keep the old file around for now.",
])
def test_plain_statements_are_not_choices(text: str) -> None:
    assert kinds(text) == []


def test_a_diagnosis_is_a_bug() -> None:
    text = "Most of the 2.3 s is 50 calls to items_for_order: an N+1 query, one per order."
    assert kinds(text) == [("bug", text)]


def test_reversal_of_a_tool_choice_without_shared_words() -> None:
    from looma_git.pipeline.heuristics import reversals

    decisions = [("d1", "We'll use Dramatiq for the background jobs."),
                 ("d2", "Decided to keep three retries per job."),
                 ("d3", "Actually, let's use RQ.")]
    assert reversals(decisions) == {"d1": "d3"}
    # Naming the earlier subject reverses exactly the decisions about it.
    assert reversals([("a", "Let's store refresh tokens in Redis."),
                      ("b", "We'll use PKCE for the login."),
                      ("c", "Actually, let's not use Redis; the tokens go to Postgres.")]
                     ) == {"a": "c"}
    # Not a reversal: a second choice about something else supersedes nothing.
    assert reversals([("a", "We'll use Dramatiq for the background jobs."),
                      ("b", "Let's use RQ for the mailer.")]) == {}


def test_the_refinery_marks_a_reversed_tool_choice_superseded() -> None:
    from looma_git.pipeline.refine import RefineInput, refine
    from tests.pipeline.test_refine import ev, sess

    files = frozenset({"app/jobs/queue.py"})
    sessions = (
        sess("claude-code", "j1", [
            ev(0, "2026-01-26T10:00:00Z", "user", "move the background jobs to a queue"),
            ev(1, "2026-01-26T10:01:00Z", "assistant",
               "Let's use Dramatiq with the Redis broker: retries are built in.",
               edits=("app/jobs/queue.py",))]),
        sess("codex", "j2", [
            ev(0, "2026-01-27T09:00:00Z", "user", "continue the background jobs queue work"),
            ev(1, "2026-01-27T09:01:00Z", "assistant",
               "Actually, let's use RQ: ops already runs rq-dashboard.",
               edits=("app/jobs/queue.py",))]),
    )
    out = refine(RefineInput(sessions=sessions, commits=(), known_paths=files, sha_lookup={}))
    by_text = {m.text.split(":")[0]: m for m in out.memories if m.kind == "decision"}
    dram, rq = by_text["Let's use Dramatiq with the Redis broker"], by_text["Actually, let's use RQ"]
    assert dram.lifecycle == "superseded" and dram.superseded_by == rq.id
    assert rq.lifecycle == "active"


def test_the_gates_opened_are_those_every_literal_would_open() -> None:
    """Only the literals behind an anchor that occurs are tested: the patterns tried are the
    ones testing every literal of every gate gives."""
    import random

    from looma_git.pipeline import heuristics as h

    every = sorted({lit for pats in h._PATTERNS.values() for _, gate in pats
                    for group in gate for lit in group})
    rng = random.Random(14)
    for _ in range(400):
        text = " ".join([*rng.sample(every, rng.randint(0, 6)), "plain", "words"])
        low = text.lower()
        want = h._opened(frozenset(lit for lit in every if lit in low)) if any(
            lit in low for lit in h._ANCHORS) else ()
        assert h._open_patterns(text) == want, text
