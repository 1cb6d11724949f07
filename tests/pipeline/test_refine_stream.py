"""A full pass over sessions that arrive earliest first (pipeline/refine_stream.py) places each
window while later sessions are still to come, and gives the pass that waits for them all:
a window whose commit another session co-wrote waits for that session."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from looma_git.pipeline import refine as refine_mod
from looma_git.pipeline.refine import RefineInput, refine
from looma_git.pipeline.segment import SessionWindows
from looma_git.pipeline.segment_pool import Stream
from looma_git.pipeline.signals import WorkSignal, parse_ts
from tests.pipeline.test_authorship import _c, _w
from tests.pipeline.test_content_links import AUTH, QUEUE, T0, _content

# s1 and s2 each wrote half of c1 (s2 hours later, another agent); s3 and s4 are other work
# between and after them; s5 wrote c1's lines again hours after it was committed (no evidence
# of who wrote it: it is not waited for).
S1 = _w("s1", -10, -9, edited=("app/auth.py",), terms=(("oauth", 5), ("token", 3)))
S3 = _w("s3", -6, -5, edited=("app/billing.py",), terms=(("invoice", 5),))
S2 = _w("s2", -2, -1, edited=("app/auth.py", "app/queue.py"),
        terms=(("retry", 5), ("backoff", 3)), agent="gemini-cli")
S4 = _w("s4", 2, 3, edited=("app/billing.py",), terms=(("invoice", 4), ("pdf", 2)))
S5 = _w("s5", 5, 6, edited=("app/auth.py",), terms=(("oauth", 2), ("refactor", 3)))
COMMITS = (_c("c1", ("p",), files=("app/auth.py", "app/queue.py")),)
CONTENT = _content({"c1": ("app/auth.py", AUTH + QUEUE)},
                   [("claude-code:s1", "app/auth.py", AUTH, T0 - 9.5 * 3600),
                    ("gemini-cli:s2", "app/auth.py", QUEUE, T0 - 1.5 * 3600),
                    ("claude-code:s5", "app/auth.py", AUTH, T0 + 5.5 * 3600)],
                   {"claude-code:s1", "gemini-cli:s2", "claude-code:s5"})
KNOWN = frozenset({"app/auth.py", "app/queue.py", "app/billing.py"})


def _part(w: WorkSignal) -> SessionWindows:
    return SessionWindows(w.session_key, (w,), ((w.key, ()),), float("inf"), 1)


WINDOWS = (S1, S2, S3, S4, S5)
KEYS = sorted(w.session_key for w in WINDOWS)  # the pass's order: not the time order


def _stream(log: list[str], late: float = 0.0) -> Stream:
    """The parts earliest first, as segment_all gives them; `late` moves every bound later
    than the windows really start (timestamps the text order misjudged)."""
    bounds = {w.session_key: parse_ts(w.start_ts) + late for w in WINDOWS}
    order = sorted(KEYS, key=lambda k: (bounds[k], k))
    by_key = {w.session_key: _part(w) for w in WINDOWS}

    def parts() -> Iterator[SessionWindows]:
        for k in order:
            log.append(f"arrive {k}")
            yield by_key[k]

    return Stream(KEYS, order, bounds, parts())


def _inp(segmented: Any) -> RefineInput:
    return RefineInput(sessions=(), segmented=segmented, commits=COMMITS, known_paths=KNOWN,
                       sha_lookup={}, content=CONTENT)


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real_add = refine_mod.Resolver.add

    def add(self: Any, w: WorkSignal) -> Any:
        seen.append(f"place {w.session_key}")
        return real_add(self, w)

    monkeypatch.setattr(refine_mod.Resolver, "add", add)
    return seen


def test_windows_are_placed_while_later_sessions_arrive_as_the_batch_pass_places_them(
        log: list[str]) -> None:
    by_key = {w.session_key: _part(w) for w in WINDOWS}
    batch = refine(_inp([by_key[k] for k in KEYS]))
    log.clear()
    streamed = refine(_inp(_stream(log)))
    assert streamed == batch
    assert streamed.windows == batch.windows  # in the pass's order, authored alike
    assert {w.key: w.wrote for w in streamed.windows}[S1.key] == frozenset({"c1"})
    # s1's window waits for s2 (they wrote c1 together: its authorship needs both); s3's,
    # after it in time, waits for s1's; all three are placed before s4 arrives, and s4
    # before s5 does.
    assert log == ["arrive claude-code:s1", "arrive claude-code:s3", "arrive gemini-cli:s2",
                   "place claude-code:s1", "place claude-code:s3", "place gemini-cli:s2",
                   "arrive claude-code:s4", "place claude-code:s4", "arrive claude-code:s5",
                   "place claude-code:s5"]


def test_a_session_that_starts_before_its_bound_makes_the_pass_wait_for_all(
        log: list[str]) -> None:
    by_key = {w.session_key: _part(w) for w in WINDOWS}
    batch = refine(_inp([by_key[k] for k in KEYS]))
    log.clear()
    assert refine(_inp(_stream(log, late=60.0))) == batch
    assert log[:5] == [f"arrive {k}" for k in sorted(KEYS, key=lambda k: next(
        parse_ts(w.start_ts) for w in WINDOWS if w.session_key == k))]


def test_a_commit_that_a_session_outside_the_pass_wrote_does_not_hold_the_stream(
        log: list[str]) -> None:
    # gemini-cli:s9 also wrote c1's queue lines but is not in this pass: it never arrives.
    # The stream places as it did without it (not everything once the last session is in),
    # and gives the batch pass's result (s9 has no window to author c1 in either).
    content = _content({"c1": ("app/auth.py", AUTH + QUEUE)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 9.5 * 3600),
                        ("gemini-cli:s2", "app/auth.py", QUEUE, T0 - 1.5 * 3600),
                        ("gemini-cli:s9", "app/auth.py", QUEUE, T0 - 1.4 * 3600),
                        ("claude-code:s5", "app/auth.py", AUTH, T0 + 5.5 * 3600)],
                       {"claude-code:s1", "gemini-cli:s2", "gemini-cli:s9", "claude-code:s5"})
    by_key = {w.session_key: _part(w) for w in WINDOWS}
    batch = refine(replace(_inp([by_key[k] for k in KEYS]), content=content))
    log.clear()
    streamed = refine(replace(_inp(_stream(log)), content=content))
    assert streamed == batch
    assert log == ["arrive claude-code:s1", "arrive claude-code:s3", "arrive gemini-cli:s2",
                   "place claude-code:s1", "place claude-code:s3", "place gemini-cli:s2",
                   "arrive claude-code:s4", "place claude-code:s4", "arrive claude-code:s5",
                   "place claude-code:s5"]
