"""The segmentation's cheaper matchers and memos find exactly what the plain ones do."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.literals import Occurring, any_of
from looma_git.pipeline import heuristics
from looma_git.pipeline.heuristics import _ANCHORS, _BEHIND, _open_patterns, _opened, extract
from looma_git.pipeline.text import TextMemo

TRICKY = [
    "", "n", "no", "not", "nothing", "cannot", "not use", "a", "[ ]", "[  ]", "- [ ] x", "n+1",
    "n + 1", "n +1", "don't forget to", "dont forget to", "we'll", "we\u2019ll", "let's",
    "let us", "i will", "i'll", "\u0130 will", "DECIDED", "Decision:", "time out", "timed",
    "follow-up", "followup", "caused by", "cause", "the culprit", "single source of truth",
    "fails\nwhen", "rather than", "rather\nthan", "ends with not", "x" * 50 + "through",
    "stillness", "still", "need", "fixme", "todo", "architecture", "\u00e9t\u00e9 not",
]


def _present(words: tuple[str, ...], text: str) -> bool:
    return any(w in text for w in words)


@pytest.mark.parametrize("text", [*TRICKY, " ".join(TRICKY), "".join(TRICKY)])
def test_the_anchors_found_are_the_in_tests(text: str) -> None:
    low = text.lower()
    assert heuristics._ANCHORS_IN(low) == {a for a in _ANCHORS if a in low}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab .+[]'", min_size=1, max_size=4), min_size=1, max_size=6),
       st.text(alphabet="ab .+[]'\n", max_size=30))
def test_occurring_is_every_in_test(words: list[str], text: str) -> None:
    """Overlapping words ("ab" inside "bab", "a" extended by "ab") are found too."""
    assert Occurring(words)(text) == {w for w in words if w in text}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), max_size=12).map("".join))
def test_occurring_anchors_in_glued_texts(text: str) -> None:
    low = text.lower()
    assert heuristics._ANCHORS_IN(low) == {a for a in _ANCHORS if a in low}


@pytest.mark.parametrize("words", [
    ("not", "not use", "no"), ("a", "ab", "abc", "b"), ("[ ]", "n+1", "n + 1", "a.b", "(x)"),
    ("don't", "do", "done"), ("\u00e9t\u00e9", "\u00e9"),
])
@pytest.mark.parametrize("text", [*TRICKY, "abd", "a.b", "axb", "(x)", "x)", "\u00e9t"])
def test_any_of_is_any_in(words: tuple[str, ...], text: str) -> None:
    assert (any_of(words).search(text) is not None) is _present(words, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab .+[]'", min_size=1, max_size=4), min_size=1, max_size=6),
       st.text(alphabet="ab .+[]'\n", max_size=30))
def test_any_of_is_any_in_generated(words: list[str], text: str) -> None:
    assert (any_of(words).search(text) is not None) is _present(tuple(words), text)


def test_any_of_needs_words() -> None:
    with pytest.raises(ValueError):
        any_of([])
    with pytest.raises(ValueError):
        any_of(["a", ""])


def _open_plain(text: str) -> object:
    """`_open_patterns` as it was: every anchor tested, no prefilter."""
    low = text.lower()
    present = [lit for lit in _ANCHORS if lit in low]
    if not present:
        return ()
    return _opened(frozenset(present).union(
        {lit for a in present for lit in _BEHIND[a] if lit in low}))


@pytest.mark.parametrize("text", [
    *TRICKY, "We will use Redis.", "Let us go with the cache.",
    "Usage records are aggregated per item, not pushed to Stripe.", "- [ ] wire it", "After the third failure it stops.",
    "Nothing to see here", "ok thanks"])
def test_open_patterns_prefilter_changes_nothing(text: str) -> None:
    assert _open_patterns(text) == _open_plain(text)


def test_text_memo_is_bounded_and_skips_long_texts() -> None:
    calls: list[str] = []

    def fn(text: str, role: str) -> tuple[str, str]:
        calls.append(text)
        return (text.upper(), role)

    memo = TextMemo(fn, size=2, longest=5)
    assert memo("ab", "u") == ("AB", "u") and memo("ab", "u") == ("AB", "u")
    assert calls == ["ab"]
    assert memo("ab", "a") == ("AB", "a")  # the other arguments are part of the key
    assert memo("abcdef", "u") == ("ABCDEF", "u") and memo("abcdef", "u") == ("ABCDEF", "u")
    assert calls == ["ab", "ab", "abcdef", "abcdef"]  # a long text is never kept
    memo("cd", "u")  # a third short text: the memo is full, so emptied first
    assert len(memo.memo) == 1


def test_extract_of_a_repeated_text_carries_each_event() -> None:
    text = "We decided to store refresh tokens in Redis."
    a = extract(text, event_id="e1", agent="claude-code", session_id="s1", ts="t1",
                role="assistant")
    b = extract(text, event_id="e2", agent="codex", session_id="s2", ts="t2", role="assistant")
    c = extract(text, event_id="e3", agent="codex", session_id="s2", ts="t3", role="user")
    assert [(x.event_id, x.agent, x.session_id, x.ts) for x in a + b] == [
        ("e1", "claude-code", "s1", "t1"), ("e2", "codex", "s2", "t2")]
    assert [(x.kind, x.text, x.start, x.end, x.content_hash) for x in a] == [
        (x.kind, x.text, x.start, x.end, x.content_hash) for x in b]
    assert c and c[0].role == "user" and c[0].event_id == "e3"


def test_what_a_remembered_text_names_depends_on_the_repository_too() -> None:
    from looma_git.pipeline.signals import _said

    text = "see app/x.py and docs/y.md (PR #12, https://h.example/o/r/pull/34)"
    one = _said(text, frozenset({"app/x.py"}))
    two = _said(text, frozenset({"docs/y.md"}))
    assert one[1] == {"app/x.py"} and two[1] == {"docs/y.md"}
    assert set(one[0]) == {"12", "34"} and one[0] == two[0] and one[2] == two[2]


def test_a_long_user_turn_counts_the_terms_of_its_opening_only() -> None:
    from looma_git.pipeline.inputs import Event, Session, ToolUse
    from looma_git.pipeline.signals import windows_of

    long = "refactor the billing ledger " + "word " * 600 + "kubernetes " * 200
    edit = (ToolUse("edit", "Edit", None, None, False, None, ("app/a.py",)),)
    evs = (Event("e1", 1, "2026-01-01T00:00:00Z", "user", "fix the login form please", None, ()),
           Event("e2", 2, "2026-01-01T00:01:00Z", "assistant", "ok", None, edit),
           Event("e3", 3, "2026-01-01T00:02:00Z", "user", long, None, ()),
           Event("e4", 4, "2026-01-01T00:03:00Z", "assistant", "done", None,
                 (ToolUse("edit", "Edit", None, None, False, None, ("infra/b.tf",)),)))
    ws = windows_of(Session("claude-code", "s1", None, evs), frozenset({"app/a.py", "infra/b.tf"}),
                    {})
    # Past 2,000 characters the turn's own terms stop ("kubernetes" is beyond them): the
    # turn shares no topic with the window, so it starts one; its window counts the terms of
    # the first 4,000 characters, "kubernetes" among them.
    assert [w.event_ids for w in ws] == [("e1", "e2"), ("e3", "e4")]
    assert "kubernete" in dict(ws[1].terms)  # (plurals folded)
