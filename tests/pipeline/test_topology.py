"""A merged feature branch's commits keep the branch their merge names (pipeline/topology.py),
so a long-lived branch's early commits, made weeks before the session that finished the work,
link to the WorkItem on that branch, and to no other."""

from __future__ import annotations

from looma_git.pipeline.linking import Target, link_commits
from looma_git.pipeline.topology import merged_branch_name, merged_branches
from tests.pipeline.test_authorship import _c
from tests.pipeline.test_content_links import T0, _content

DAY = 24.0


def test_a_merge_subject_names_the_branch_it_brought_in() -> None:
    assert merged_branch_name("Merge pull request #206 from jane/rollover-yb") == "rollover-yb"
    assert merged_branch_name("Merge branch 'fix-tz' into main") == "fix-tz"
    assert merged_branch_name("Merge remote-tracking branch 'origin/fix-tz'") == "fix-tz"
    assert merged_branch_name("Merge branch 'main' into fix-tz") is None  # the trunk
    assert merged_branch_name("Squashed commit of the following:") is None


def _history(merge_subject: str) -> list:
    # main: a --------- m -- d ; the branch: b1 (five weeks before the merge), b2, m merges b2.
    return [_c("a", (), hours=-40 * DAY), _c("b1", ("a",), hours=-35 * DAY,
                                                  files=("app/tz.py", "tests/test_tz.py")),
            _c("b2", ("b1",), hours=1, files=("app/tz.py",)),
            _c("m", ("a", "b2"), hours=2, subject=merge_subject), _c("d", ("m",), hours=3)]


def test_the_merged_parents_first_parent_line_is_the_branch() -> None:
    got = merged_branches(_history("Merge pull request #9 from jane/fix-tz"))
    assert got == {"b1": "fix-tz", "b2": "fix-tz"}
    assert merged_branches(_history("Merge the tz work")) == {}


def _target(tid: str, branch: str) -> Target:
    key = f"claude-code:{tid}"
    return Target(id=tid, title="", files=frozenset({"app/tz.py", "tests/test_tz.py"}),
                  branches=frozenset({branch}), spans=((T0 - 3600, T0),), terms=(),
                  windows=((key, T0 - 3600, T0),))


def test_a_branch_commit_far_older_than_the_session_links_to_the_work_on_that_branch() -> None:
    """The session (an hour before the merge) wrote b2; b1 was made five weeks earlier
    (no session here wrote it): without its branch it is files alone, long before any of the
    work's sessions began, so not linked; with the branch its merge names it is the work's."""
    content = _content({"b2": ("app/tz.py", ["return value.astimezone(tz).date()"]),
                        "b1": ("app/tz.py", ["def naturalday_tz(value, tz):"])},
                       [("claude-code:tz", "app/tz.py", ["return value.astimezone(tz).date()"],
                         T0 - 1800)], {"claude-code:tz"})
    other = _target("dates", "fix-dates")
    for subject, want in (("Merge pull request #9 from jane/fix-tz", {"b1", "b2"}),
                          ("Merge the tz work", {"b2"})):
        links = link_commits(_history(subject), [_target("tz", "fix-tz"), other],
                             content=content, own_authors=frozenset({"Ada"}))
        assert {ln.sha for ln in links if ln.workitem == "tz"} == want, subject
        assert not [ln for ln in links if ln.workitem == "dates"]
