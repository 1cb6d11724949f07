"""Which commits a window wrote and where they landed, and what resolution and linking make of
it: a commit two windows wrote is one effort; trunk work is not a merged branch's."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from looma_git.pipeline.authorship import trunk_line, with_authorship, written_commits
from looma_git.pipeline.evidence import W_NEW_BRANCH, W_TRUNK, score
from looma_git.pipeline.linking import link_commits
from looma_git.pipeline.resolve import ASSIGN_AT, Resolver
from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.store.gitfacts import CommitInfo
from tests.pipeline.test_content_links import AUTH, QUEUE, T0, _content, _target


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _c(sha: str, parents: tuple[str, ...], hours: float = 1.0, files: tuple[str, ...] = (
        "app/auth.py",), subject: str = "Add the work") -> CommitInfo:
    return CommitInfo(sha=sha, ts=_iso(T0 + hours * 3600), author="Ada", subject=subject,
                      body="", files=files, ref="refs/heads/main", parents=parents)


def _w(session: str, start_h: float, end_h: float, edited: tuple[str, ...] = (),
       terms: tuple[tuple[str, int], ...] = (), branch: str | None = None,
       agent: str = "claude-code") -> WorkSignal:
    return WorkSignal(key=f"{agent}:{session}#0", agent=agent, session_id=session, index=0,
                      start_ts=_iso(T0 + start_h * 3600), end_ts=_iso(T0 + end_h * 3600),
                      edited=frozenset(edited), read=frozenset(), commands=(),
                      commits=frozenset(), branch=branch, prs=frozenset(), terms=terms,
                      first_prompt="", event_ids=("e",))


def test_the_trunk_line_is_the_first_parent_history_of_the_trunk() -> None:
    # a -- m -- d on main; b on a feature branch, merged by m (its ref long deleted).
    commits = [_c("a", ()), _c("b", ("a",)), _c("m", ("a", "b")), _c("d", ("m",))]
    assert trunk_line(commits) == {"a", "m", "d"}


def test_a_line_two_windows_wrote_is_no_ones_and_two_windows_can_write_one_commit() -> None:
    early = _w("s1", -10, -9)
    late = _w("s2", -2, -1, agent="gemini-cli")
    c = _c("c1", ("p",))
    # s1 wrote AUTH; s2 restated it (an edit's context) and added QUEUE: only QUEUE is evidence,
    # and it is s2's.
    content = _content({"c1": ("app/auth.py", AUTH + QUEUE)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 9.5 * 3600),
                        ("gemini-cli:s2", "app/auth.py", AUTH + QUEUE, T0 - 1.5 * 3600)],
                       {"claude-code:s1", "gemini-cli:s2"})
    assert written_commits([early, late], [c], content) == {late.key: frozenset({"c1"})}
    # Each wrote its half: both wrote the commit (an effort handed from one agent to another).
    content = _content({"c1": ("app/auth.py", AUTH + QUEUE)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 9.5 * 3600),
                        ("gemini-cli:s2", "app/auth.py", QUEUE, T0 - 1.5 * 3600)],
                       {"claude-code:s1", "gemini-cli:s2"})
    got = written_commits([early, late], [c], content)
    assert got == {early.key: frozenset({"c1"}), late.key: frozenset({"c1"})}


def test_a_commit_both_windows_wrote_joins_them_though_their_words_differ() -> None:
    commits = [_c("c1", ("p",), files=("app/auth.py", "app/queue.py"))]
    early = _w("s1", -10, -9, edited=("app/auth.py",), terms=(("oauth", 5), ("token", 3)))
    # The second agent carried on in one of its files and a new one, in its own words.
    late = _w("s2", -2, -1, edited=("app/auth.py", "app/queue.py"),
              terms=(("retry", 5), ("backoff", 3)), agent="gemini-cli")
    content = _content({"c1": ("app/auth.py", AUTH + QUEUE)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 9.5 * 3600),
                        ("gemini-cli:s2", "app/auth.py", QUEUE, T0 - 1.5 * 3600)],
                       {"claude-code:s1", "gemini-cli:s2"})
    for wrote, same in ((True, True), (False, False)):
        ws = with_authorship([early, late], commits, content if wrote else None)
        r = Resolver([])
        assert (r.add(ws[0])[0] == r.add(ws[1])[0]) is same


def test_trunk_work_after_a_merged_branch_needs_more_to_join_its_effort() -> None:
    # The locale effort's commit b came in through merge m; the later window on main wrote d,
    # a commit straight onto the trunk, in one of its files with a few of its words.
    commits = [_c("a", (), -100), _c("b", ("a",), -50), _c("m", ("a", "b"), -49),
               _c("d", ("m",), 2)]
    feature = _w("s1", -52, -50, edited=("app/auth.py",), branch="en-locales",
                 terms=(("locale", 6), ("catalogue", 3), ("en_gb", 4)))
    content = _content({"b": ("app/auth.py", AUTH), "d": ("app/auth.py", QUEUE)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 51 * 3600),
                        ("claude-code:s2", "app/auth.py", QUEUE, T0 + 3600)],
                       {"claude-code:s1", "claude-code:s2"})
    other = _w("s2", 0, 1.5, edited=("app/auth.py", "app/po.py"), branch="main",
               terms=(("french", 5), ("locale", 2), ("decimal", 3)))
    followup = _w("s2", 0, 1.5, edited=("app/auth.py",), branch="main",
                  terms=(("locale", 4), ("en_gb", 2), ("catalogue", 2)))
    for trunk, joins in ((other, False), (followup, True)):
        ws = with_authorship([feature, trunk], commits, content)
        assert [(w.wrote, w.landed) for w in ws] == [({"b"}, "branch"), ({"d"}, "trunk")]
        r = Resolver([])
        cid = r.add(ws[0])[0]
        total, parts = score(ws[1], r.by_id[cid], r.rarity())
        assert parts["trunk_vs_branch"] == 1.0
        assert (total + W_TRUNK >= ASSIGN_AT) and (total >= ASSIGN_AT) is joins, (total, parts)
        assert (r.add(ws[1])[0] == cid) is joins


def test_a_new_branch_beside_another_efforts_branch_starts_its_own_work() -> None:
    # Two fixes of one function, days apart (within GAP_GRACE_DAYS: time apart takes nothing
    # off), each on its own branch: alike in files and words (more than enough to join on
    # their own), yet the second is new work.
    first = _w("s1", -200, -198, edited=("app/auth.py",), branch="fix-float",
               terms=(("naturalsize", 6), ("byte", 4), ("float", 3), ("regression", 2)))
    second = _w("s2", 0, 2, edited=("app/auth.py",), branch="fix-1-byte",
                terms=(("naturalsize", 6), ("byte", 4), ("float", 1), ("singular", 3)))
    r = Resolver([])
    cid = r.add(first)[0]
    total, parts = score(second, r.by_id[cid], r.rarity(), fresh_branch=True)
    assert parts["other_branch"] == parts["new_branch"] == 1.0
    assert total + W_NEW_BRANCH >= ASSIGN_AT > total  # the other branch alone would not hold it
    assert r.add(second)[0] != cid


def test_of_two_workitems_that_wrote_as_much_the_later_writer_takes_the_commit() -> None:
    # Both wrote the commit's two lines (`import math` moved into two functions): a tie the
    # WorkItems' ids must not break.
    for old_id, new_id in (("a", "b"), ("b", "a")):
        old = _target(old_id, "claude-code:s1", {"app/auth.py"})
        new = _target(new_id, "claude-code:s2", {"app/auth.py"})
        new = new.__class__(**{**new.__dict__, "windows": (("claude-code:s2", T0 - 1800, T0),)})
        c = _c("c1", ("p",))
        content = _content({"c1": ("app/auth.py", AUTH[:2])},
                           [("claude-code:s1", "app/auth.py", AUTH[:2], T0 - 5 * 86400),
                            ("claude-code:s2", "app/auth.py", AUTH[:2], T0 - 900)],
                           {"claude-code:s1", "claude-code:s2"})
        [link] = link_commits([c], [old, new], content=content)
        assert link.workitem == new_id and "content" in dict(link.why)


def test_files_alone_never_link_a_commit_made_before_the_work_began() -> None:
    t = _target("ci", "claude-code:s1", {".github/workflows/test.yml"})  # at work T0-1h..T0
    content = _content({"c1": (".github/workflows/test.yml", QUEUE[:1])}, [],
                       {"claude-code:s1"})
    for hours, linked in ((-15, False), (-1.5, True), (2, True)):
        c = _c("c1", ("p",), hours, files=(".github/workflows/test.yml",),
               subject="Pin the coverage action")
        got = link_commits([c], [t], own_authors=frozenset({"Ada"}), content=content)
        assert bool(got) is linked, (hours, got)


def test_a_write_belongs_to_the_first_commit_that_adds_it_not_to_a_restore() -> None:
    # s1 wrote AUTH, committed as c1; c3 brings AUTH back (a restore) with s2's QUEUE.
    first = _w("s1", -10, -9)
    later = _w("s2", 20, 21)
    commits = [_c("c1", ("p",), -8), _c("c3", ("c2",), 22)]
    content = _content({"c1": ("app/auth.py", AUTH), "c3": ("app/auth.py", AUTH + QUEUE)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 9.5 * 3600),
                        ("claude-code:s2", "app/auth.py", QUEUE, T0 + 20.5 * 3600)],
                       {"claude-code:s1", "claude-code:s2"})
    assert written_commits([first, later], commits, content) == {
        first.key: frozenset({"c1"}), later.key: frozenset({"c3"})}


def test_windows_stamped_alike_give_a_write_to_the_one_that_edited_its_file() -> None:
    # An agent that stamps every event of a session alike: two topic windows, one instant.
    talk = _w("s1", -1, -1, agent="cursor")
    talk = talk.__class__(**{**talk.__dict__, "key": "cursor:s1#0"})
    work = _w("s1", -1, -1, edited=("app/auth.py",), agent="cursor")
    work = work.__class__(**{**work.__dict__, "key": "cursor:s1#1", "index": 1})
    c = _c("c1", ("p",))
    content = _content({"c1": ("app/auth.py", AUTH)},
                       [("cursor:s1", "app/auth.py", AUTH, T0 - 3600)], {"cursor:s1"})
    assert written_commits([talk, work], [c], content) == {work.key: frozenset({"c1"})}
    talk_t = _target("talk", "cursor:s1", {"app/pages.py"})
    work_t = _target("work", "cursor:s1", {"app/auth.py"})
    [link] = link_commits([c], [talk_t, work_t], content=content)
    assert link.workitem == "work"


def test_a_commit_arriving_later_replays_resolution_from_the_window_that_wrote_it() -> None:
    """B joins A only through a commit they both wrote; C follows B. When that commit arrives
    after all three were resolved, the next pass must rescore B and everything after it."""
    from looma_git.pipeline.content import line_key
    from looma_git.pipeline.link_content import Content, Write
    from looma_git.pipeline.refine import RefineInput, refine
    from tests.pipeline.test_refine import commit, ev, sess

    known = frozenset({"ledger/books.py", "ledger/accounts.py", "ledger/journal.py",
                       "queue/retry.py", "queue/backoff.py", "queue/worker.py"})
    queue = ("queue/retry.py", "queue/backoff.py", "queue/worker.py")
    a = sess("claude-code", "A", [
        ev(0, "2026-04-01T09:00:00Z", "user", "double-entry accounts journal postings balance "
                                              "reconciliation"),
        ev(1, "2026-04-01T09:05:00Z", "assistant", "Done.",
           edits=("ledger/books.py", "ledger/accounts.py", "ledger/journal.py"))])
    b = sess("gemini-cli", "B", [
        ev(0, "2026-04-01T12:00:00Z", "user", "exponential backoff jitter for failed deliveries"),
        ev(1, "2026-04-01T12:05:00Z", "assistant", "Done.", edits=("ledger/books.py", *queue))])
    c = sess("codex", "C", [
        ev(0, "2026-04-02T09:00:00Z", "user", "exponential backoff jitter: cap the deliveries"),
        ev(1, "2026-04-02T09:05:00Z", "assistant", "Done.", edits=queue)])
    k = commit("9" * 40, "2026-04-01T13:00:00Z", "Ledger and queue", ("ledger/books.py",))
    keys = [line_key(f"line {i} of the shared commit") for i in range(4)]
    content = Content(
        added={k.sha: tuple(("ledger/books.py", key) for key in keys if key is not None)},
        writes={key: (Write("ledger/books.py", "claude-code:A" if i < 2 else "gemini-cli:B",
                            parse_ts("2026-04-01T09:05:00Z" if i < 2 else "2026-04-01T12:05:00Z")),)
                for i, key in enumerate(keys) if key is not None},
        capable=frozenset({"claude-code:A", "gemini-cli:B", "codex:C"}))

    def run(sessions: list, commits: list, prior: tuple = ()) -> Any:
        return refine(RefineInput(sessions=iter(sessions), commits=tuple(commits),
                                  known_paths=known, sha_lookup={}, prior=prior, replay=True,
                                  content=content if commits else None))

    prior = run([a, b, c], []).stored
    before = {sw.signal.key: sw.cluster for sw in prior}
    assert before["gemini-cli:B#0"] != before["claude-code:A#0"]  # nothing joins them yet
    inc = run([], [k], prior)
    full = run([a, b, c], [k])
    placed = {sw.signal.key: sw.cluster for sw in full.stored}
    assert placed["gemini-cli:B#0"] == placed["claude-code:A#0"]
    assert {sw.signal.key: sw.cluster for sw in inc.stored} == placed


def test_a_window_wrote_the_commit_it_rebased_months_later() -> None:
    """The commit date is 90 days after the writes, the author date right after them: the
    window wrote it; with the author date as late as the commit date it did not."""
    from dataclasses import replace

    w = _w("s1", -2, -1, edited=("app/auth.py",))
    content = _content({"c1": ("app/auth.py", AUTH)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 1.5 * 3600)],
                       {"claude-code:s1"})
    rebased = _c("c1", ("p",), hours=90 * 24)
    assert written_commits([w], [rebased], content) == {}
    authored = replace(rebased, authored=_iso(T0))
    assert written_commits([w], [authored], content) == {w.key: frozenset({"c1"})}
