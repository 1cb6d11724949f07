"""A read-only session that asks for an inquiry founds its own investigation instead of joining
the nearest effort on a weak score, and the fix that carries it on joins it."""

from __future__ import annotations

from looma_git.pipeline.inputs import Session
from looma_git.pipeline.kinds import asks_inquiry
from looma_git.pipeline.resolve import (
    ASSIGN_AT,
    READONLY_ASSIGN_AT,
    Resolver,
    assign_at,
    window_order,
)
from looma_git.pipeline.signals import windows_of
from tests.pipeline.test_refine import ev, sess
from tests.pipeline.test_resolve import KNOWN, _day, _on

EFFORT = _on("fix-export-timeout", sess("claude-code", "exp", [
    ev(0, _day(1, 9), "user", "the invoice csv export times out for big customers, stream the rows"),
    ev(1, _day(1, 9), "assistant", "Streaming the invoice rows with a generator now.",
       edits=("app/billing/export.py", "tests/test_export.py"),
       reads=("app/billing/invoice.py",)),
]))


def _inquiry(ask: str) -> Session:
    return sess("gemini-cli", "inv", [
        ev(0, _day(3, 9), "user", f"invoice totals are off by a cent for some customers. {ask}"),
        ev(1, _day(3, 9), "assistant", "The invoice total is rounded per line in invoice.py, "
                                       "then summed.", reads=("app/billing/invoice.py", "app/db.py")),
        ev(2, _day(3, 10), "user", "write down what the fix would be, I'll do it tomorrow"),
        ev(3, _day(3, 10), "assistant", "Sum the exact amounts, round the invoice total once.",
           reads=("app/billing/invoice.py",)),
    ])


FIX = _on("fix-invoice-rounding", sess("codex", "fix", [
    ev(0, _day(4, 9), "user", "round the invoice total once instead of per line, with a test"),
    ev(1, _day(4, 9), "assistant", "Summing exact amounts now; the total is rounded once.",
       edits=("app/billing/invoice.py",)),
]))


def _clusters(sessions: list[Session]) -> dict[str, str]:
    windows = [w for s in sessions for w in windows_of(s, KNOWN, {})]
    r = Resolver([])
    return {w.session_key: r.add(w)[0] for w in sorted(windows, key=window_order)}


def test_an_inquiry_founds_its_own_investigation_and_its_fix_joins_it() -> None:
    got = _clusters([EFFORT, _inquiry("only investigate for now, change nothing: find out "
                                      "where the rounding happens"), FIX])
    assert got["gemini-cli:inv"] != got["claude-code:exp"]
    assert got["codex:fix"] == got["gemini-cli:inv"]


def test_a_read_only_question_without_an_inquiry_still_joins_on_a_low_score() -> None:
    got = _clusters([EFFORT, _inquiry("where does the rounding happen for the csv rows")])
    assert got["gemini-cli:inv"] == got["claude-code:exp"]


def test_the_bar_a_window_must_reach() -> None:
    ask, plain = (windows_of(_inquiry(a), KNOWN, {})[0] for a in (
        "find out why, don't change anything", "the rounding of the invoice total"))
    assert (assign_at(ask), assign_at(plain)) == (ASSIGN_AT, READONLY_ASSIGN_AT)
    assert assign_at(windows_of(FIX, KNOWN, {})[0]) == ASSIGN_AT
    assert asks_inquiry("cell_len got slow. only look, change nothing: what does it match")
    assert not asks_inquiry("make the rate limit burst configurable per plan")
    assert not asks_inquiry("look at `find_out_why()` in utils")  # quoted code never counts


def test_a_window_that_edited_only_manifests_joins_its_branch_on_the_lesser_bar() -> None:
    """On the effort's branch, a later session only raises a dependency floor (pyproject and
    pip-tools requirement files, the changelog): its edits say as little as reads, so the
    branch carries it into the effort, as it carries a read-only window."""
    floor = _on("fix-export-timeout", sess("claude-code", "floor", [
        ev(0, _day(2, 9), "user", "this needs openpyxl 3.1 at least; raise the floor in "
                                  "pyproject and the min requirements"),
        ev(1, _day(2, 9), "assistant", "Raised the floor.",
           edits=("pyproject.toml", "requirements/tests-min.in", "requirements/tests-min.txt",
                  "CHANGES.rst")),
    ]))
    known = KNOWN | {"pyproject.toml", "requirements/tests-min.in",
                     "requirements/tests-min.txt", "CHANGES.rst"}
    [w] = windows_of(floor, known, {})
    assert w.edited and assign_at(w) == READONLY_ASSIGN_AT
    r = Resolver([])
    got = {x.session_key: r.add(x)[0] for x in sorted(
        [x for s in (EFFORT, floor) for x in windows_of(s, known, {})], key=window_order)}
    assert got["claude-code:floor"] == got["claude-code:exp"]
    # Said to be another topic, or a README's badge (no manifest), it keeps the usual bar.
    for opening, files in (("different thing now: raise the openpyxl floor", ("pyproject.toml",)),
                           ("this needs a pypi badge in the readme", ("README.rst",))):
        other = _on("fix-export-timeout", sess("claude-code", "x", [
            ev(0, _day(2, 9), "user", opening),
            ev(1, _day(2, 9), "assistant", "Done.", edits=files)]))
        assert assign_at(windows_of(other, known | {"README.rst"}, {})[0]) == ASSIGN_AT
