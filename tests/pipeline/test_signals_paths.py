"""The path mentions a window carries are every match of the plain path pattern: the guard
that keeps the pattern from starting inside a word (pipeline/signals.py) drops none."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.pipeline.signals import _PATHISH, mentioned_paths

PLAIN = re.compile(r"[\w.\-]+(?:/[\w.\-]+)+|[\w\-]+\.[a-z]{1,5}\b")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab_-./x py9é", max_size=24))
def test_the_guarded_pattern_finds_what_the_plain_one_does(text: str) -> None:
    assert _PATHISH.findall(text) == PLAIN.findall(text)


def test_mentions_are_the_repository_paths_named() -> None:
    known = frozenset({"app/x.py", "-y.md", "README.md"})
    text = "see app/x.py, then x.py-y.md and ./README.md."
    assert mentioned_paths(text, known) == {"app/x.py", "-y.md", "README.md"}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab_-./x pyZ9é", max_size=24))
def test_a_text_skipped_unsearched_names_no_path(text: str) -> None:
    every = frozenset(m.strip("./") for m in PLAIN.findall(text))
    assert mentioned_paths(text, every) == set(every)
