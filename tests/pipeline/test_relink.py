"""Relink matching rules on hand-made orphans and candidates."""

from __future__ import annotations

from looma_git.pipeline.relink import Orphan, RewriteCandidate, match_orphans


def _cand(sha: str, ts: float, message: str = "x", files: tuple[str, ...] = ("a.py",),
          pid: str | None = None, added: tuple[str, ...] = ()) -> RewriteCandidate:
    return RewriteCandidate(sha, ts, message, frozenset(files), pid, frozenset(added))


def _orphan(sha: str = "o1", pid: str | None = "p1", files: tuple[str, ...] = ("a.py",),
            subject: str | None = "Add the token bucket", ts: float | None = 100.0,
            added: tuple[str, ...] = ()) -> Orphan:
    return Orphan(sha, pid, frozenset(files), subject, ts, frozenset(added))


def test_same_patch_id_wins_and_the_earliest_copy_is_chosen() -> None:
    cands = [_cand("late", 300, pid="p1"), _cand("early", 200, pid="p1"),
             _cand("squash", 150, "Add the token bucket", files=("a.py", "b.py"))]
    matches, misses = match_orphans([_orphan()], cands)
    assert [(m.old, m.new, m.how) for m in matches] == [("o1", "early", "patch-id")]
    assert misses == []


def test_squash_needs_all_files_a_later_date_and_a_real_subject() -> None:
    o = _orphan(pid=None, files=("a.py", "b.py"), added=("bucket = TokenBucket(10)",))
    older = _cand("older", 50, "* Add the token bucket", files=("a.py", "b.py"))
    partial = _cand("partial", 200, "* Add the token bucket", files=("a.py",))
    assert match_orphans([o], [older, partial]) == ([], match_orphans([o], [])[1])
    good = _cand("sq", 200, "Rate limiter (#7)\n\n* Add the token bucket (#5)\n",
                 files=("a.py", "b.py", "c.py"))
    (m,), _ = match_orphans([o], [older, partial, good])
    assert (m.new, m.how, m.score) == ("sq", "squash-subject", 1.0)

    short = _orphan(pid=None, subject="wip", files=("a.py",))
    assert match_orphans([short], [_cand("c", 200, "wip")])[0] == []


def test_added_lines_place_a_squash_without_the_subject() -> None:
    lines = ("bucket = TokenBucket(10)", "def refill(self):", "return self.tokens")
    o = _orphan(pid=None, subject="Something else entirely", added=lines)
    some = _cand("some", 200, "Squashed", added=lines[:1])
    most = _cand("most", 300, "Squashed", added=(*lines[:2], "other = 1"))
    (m,), misses = match_orphans([o], [some, most])
    assert (m.new, m.how) == ("most", "squash-lines") and misses == []


def test_missing_commit_without_patch_id_is_a_reported_miss() -> None:
    o = Orphan("gone", None, frozenset({"a.py"}))
    matches, (miss,) = match_orphans([o], [_cand("c", 1, "anything")])
    assert matches == [] and miss.sha == "gone" and "missing" in miss.reason


def test_a_subject_inside_a_longer_line_is_not_a_hit() -> None:
    # Two squash merges: the second one's "... v2" line must not claim the first's commits.
    lines = ("ttl = settings.session_ttl", "def expire(self, key):", "return self.ttl")
    o = _orphan(pid=None, subject="Session store: TTL from settings", added=lines)
    first = _cand("sq1", 200, "Session store (#11)", added=lines)
    second = _cand("sq2", 300, "Session store v2 (#12)\n\n* Session store: TTL from settings v2",
                   added=("ttl = settings.session_ttl_v2",))
    (m,), misses = match_orphans([o], [first, second])
    assert (m.new, m.how) == ("sq1", "squash-lines") and misses == []
    merged = _cand("sq3", 400, "Merged: Session store: TTL from settings")
    (m,), _ = match_orphans([_orphan(pid=None, subject="Session store: TTL from settings")],
                            [second, merged])
    assert (m.new, m.how) == ("sq3", "squash-subject")
