"""Near-duplicates: a runner-up with nearly all the goal's words is no runner-up the fuzzy
title alone can beat; both are shown, unless meaning tells them apart."""

from __future__ import annotations

from dataclasses import replace

from looma_git.retrieval import match
from tests.retrieval.test_match import item

FIRST = item("wi_1", "Fix CSV export escaping", ("export/csv.py", "tests/test_csv.py"))
AGAIN = replace(item("wi_2", "Handle quotes in the report writer", ("export/csv.py",)),
                summary="CSV export escaping of embedded quotes")
OTHER = item("wi_3", "Rate limiter for the public API", ("api/ratelimit.py",))
FIX = item("wi_4", "Fix the login redirect loop", ("auth/login.py",))
ITEMS = [FIRST, AGAIN, OTHER, FIX]


def _ids(chosen: list[match.Match]) -> list[str]:
    return [m.item.id for m in chosen]


def test_a_near_duplicate_pair_is_shown_side_by_side() -> None:
    ranked = match.rank("the csv export escaping fix", ITEMS)
    by_words = sorted(ranked, key=lambda m: -m.lexical)
    lead, second = by_words[:2]
    assert lead.lexical - second.lexical >= match.MARGIN  # the title alone would decide...
    assert second.coverage >= match.NEAR_DUP_COVER
    assert not match.lexical_decides(ranked)  # ...so meaning is consulted
    state, chosen = match.outcome(ranked)
    assert state == "ambiguous" and set(_ids(chosen)) == {"wi_1", "wi_2"}


def test_meaning_can_still_tell_them_apart() -> None:
    cos = {"wi_1": 0.62, "wi_2": 0.31, "wi_3": 0.05, "wi_4": 0.1}
    state, chosen = match.outcome(match.rank("the csv export escaping fix",
                                             ITEMS, cos))
    assert (state, _ids(chosen)) == ("confident", ["wi_1"])


def test_a_runner_up_missing_a_topic_word_is_no_near_duplicate() -> None:
    partial = replace(AGAIN, summary="CSV export of embedded quotes")
    state, chosen = match.outcome(match.rank("the csv export escaping fix",
                                             [FIRST, partial, OTHER, FIX]))
    assert (state, _ids(chosen)) == ("confident", ["wi_1"])


def test_a_named_branch_or_file_still_decides() -> None:
    state, chosen = match.outcome(match.rank("tests/test_csv.py", ITEMS))
    assert (state, _ids(chosen)) == ("confident", ["wi_1"])
