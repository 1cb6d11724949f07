"""The heuristic extractor: common phrasings found with exact spans; negatives ignored."""

from __future__ import annotations

import pytest

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
