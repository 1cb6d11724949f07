"""A user's request that settles how something is done is a decision; a request for what to do,
or for the workflow, is not; a correction naming what it replaces supersedes it."""

from __future__ import annotations

import pytest

from looma_git.pipeline.heuristics import confirmed_plan, extract, reversals


def found(text: str, role: str = "user") -> list[tuple[str, str]]:
    return [(c.kind, c.text) for c in extract(text, event_id="e1", agent="codex",
                                                  session_id="s1", ts="2026-01-01T00:00:00Z",
                                                  role=role)]


@pytest.mark.parametrize("text,quote", [
    ("let's cache the parsed config in a module-level dict keyed by path",
     "let's cache the parsed config in a module-level dict keyed by path"),
    ("ok. walk the tree with an explicit stack instead, no recursion. tests too",
     "walk the tree with an explicit stack instead, no recursion."),
    ("don't retry a 4xx, only a 5xx or a timeout, then commit",
     "don't retry a 4xx, only a 5xx or a timeout, then commit"),
    ("go with it: a lock file next to the database and a ten second timeout",
     "go with it: a lock file next to the database and a ten second timeout"),
    ("the importer chokes on BOMs; strip the byte order mark before parsing the header",
     "the importer chokes on BOMs; strip the byte order mark before parsing the header"),
    ("the docs should say Python 3.10+ and not 3.9+, since match needs it",
     "the docs should say Python 3.10+ and not 3.9+, since match needs it"),
    ("a dataclass reads better than the tuple here",
     "a dataclass reads better than the tuple here"),
])
def test_a_request_that_settles_how_is_a_decision(text: str, quote: str) -> None:
    assert found(text) == [("decision", quote)]


def test_the_asks_that_go_on_in_the_next_sentence_are_quoted_with_it() -> None:
    text = "the header row is optional; skip it when the first cell is numeric. then the docs"
    assert found(text) == [("decision", text)]


@pytest.mark.parametrize("text", [
    "look at how the parser handles the header row and whether it can be skipped",
    "fix that, changelog, commit and push",
    "let's see what the test suite says first",
    "only look, change nothing: why does the import take two seconds",
    "add a rate limiter for the public API",
    "Keep it small.",
    "format them and push",
    "can we skip the header row when it is numeric?",
])
def test_a_request_for_what_or_for_the_workflow_is_not(text: str) -> None:
    assert found(text) == []


def test_only_the_users_requests_are_read_this_way() -> None:
    assert found("walk the tree with an explicit stack instead of recursing", "assistant") == []
    assert found("walk the tree with an explicit stack instead of recursing", "tool") == []


def test_a_correction_that_names_what_it_replaces_supersedes_it() -> None:
    said = [("a", "then the docs, for Python 3.9+"),
            ("b", "call the option `strict_mode`, not strict; and get mypy happy"),
            ("c", "match needs 3.10, so the docs should say 3.10+ and not 3.9+.")]
    assert reversals(said) == {"a": "c"}  # "not strict" names no one thing: no reversal


def test_a_negation_of_an_everyday_word_reverses_nothing() -> None:
    said = [("a", "apply the style before the highlighting"),
            ("b", "name the hook after_render, not before")]
    assert reversals(said) == {}


# --- the agent's plan, confirmed by a bare "yes, do it"

PLAN = ("The header check reads the first row twice. I'd keep a flag on the writer and set it "
        "when the header is written. Does that sound right?")


def test_a_plan_the_user_confirms_is_a_decision_of_the_agents_message() -> None:
    (c,) = confirmed_plan(PLAN, "yes, do it", event_id="a1", agent="codex", session_id="s1",
                          ts="2026-01-01T00:00:00Z")
    assert (c.kind, c.event_id, c.role) == ("decision", "a1", "assistant")
    assert c.text == "I'd keep a flag on the writer and set it when the header is written."
    assert PLAN[c.start:c.end] == c.text


@pytest.mark.parametrize("reply", [
    "no, keep it stateless", "yes but first look at the reader too, it has the same bug",
    "...", "what about the reader?",
])
def test_anything_more_than_a_confirmation_confirms_nothing(reply: str) -> None:
    assert confirmed_plan(PLAN, reply, event_id="a1", agent="codex", session_id="s1",
                          ts="") == []


def test_the_refinery_reads_a_confirmed_plan() -> None:
    from looma_git.pipeline.refine import RefineInput, refine
    from tests.pipeline.test_refine import ev, sess

    s = sess("codex", "plan", [
        ev(0, "2026-03-01T10:00:00Z", "user", "the csv header is written twice, look at why"),
        ev(1, "2026-03-01T10:01:00Z", "assistant", PLAN, reads=("auth/oauth.py",)),
        ev(2, "2026-03-01T10:02:00Z", "user", "sounds good, go ahead"),
        ev(3, "2026-03-01T10:03:00Z", "assistant", "Done.", edits=("auth/oauth.py",)),
    ])
    res = refine(RefineInput(sessions=[s], commits=(), known_paths=frozenset({"auth/oauth.py"}),
                             sha_lookup={}))
    texts = [m.text for m in res.memories if m.kind == "decision"]
    assert "I'd keep a flag on the writer and set it when the header is written." in texts
