"""Incremental passes end where the full rebuild does, whatever order sessions and commits
arrive in (DESIGN §4.1); the per-commit linker agrees with a full pass on the same sessions."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from looma_git.pipeline.inputs import Session
from looma_git.pipeline.link_content import Content, Write
from looma_git.pipeline.linking import link_commits
from looma_git.pipeline.refine import RefineInput, RefineResult, StoredWindow, refine
from looma_git.store.gitfacts import CommitInfo
from tests.pipeline.test_refine import commit, ev, sess

KNOWN = frozenset({"billing/invoice.py", "billing/csv.py", "billing/tests/test_csv.py",
                   "api/webhooks.py", "api/retry.py", "auth/oauth.py", "auth/routes.py",
                   "requirements.txt", "README.md", "api/middleware.py"})


def _day(d: int, h: int, m: int = 0) -> str:
    return f"2026-04-{d:02d}T{h:02d}:{m:02d}:00Z"


POOL: tuple[Session, ...] = (
    sess("claude-code", "csv1", [
        ev(0, _day(1, 9), "user", "Stream the invoice CSV export instead of building it in memory"),
        ev(1, _day(1, 9, 5), "assistant", "We'll use a generator and write rows as they come.",
           edits=("billing/csv.py",)),
        ev(2, _day(1, 9, 20), "user", "add a test for a large export"),
        ev(3, _day(1, 9, 30), "assistant", "Added.", edits=("billing/tests/test_csv.py",)),
        ev(4, _day(1, 10), "user", "ok, switching gears: the webhook retries are broken"),
        ev(5, _day(1, 10, 5), "assistant", "The retry backoff never resets. Fixed.",
           edits=("api/retry.py",)),
    ]),
    sess("codex", "csv2", [
        ev(0, _day(2, 14), "user", "continue the streaming CSV export: the header row"),
        ev(1, _day(2, 14, 10), "assistant", "Header now written first.",
           edits=("billing/csv.py", "billing/invoice.py")),
    ]),
    sess("gemini-cli", "hook1", [
        ev(0, _day(3, 11), "user", "webhook deliveries retry forever, cap the attempts"),
        ev(1, _day(3, 11, 10), "assistant", "Capped at 5 attempts.",
           edits=("api/webhooks.py", "api/retry.py")),
    ]),
    sess("opencode", "auth1", [
        ev(0, _day(4, 8), "user", "Add Google OAuth sign-in"),
        ev(1, _day(4, 8, 30), "assistant", "Let's use authlib for the OAuth client.",
           edits=("auth/oauth.py",)),
        ev(2, _day(4, 9), "user", "now the callback route"),
        ev(3, _day(4, 9, 20), "assistant", "Done.", edits=("auth/routes.py", "auth/oauth.py")),
    ]),
    sess("cursor", "read1", [
        ev(0, _day(5, 16), "user", "why is the webhook handler slow?"),
        ev(1, _day(5, 16, 5), "assistant", "It retries synchronously.", reads=("api/webhooks.py",)),
    ]),
    sess("claude-code", "auth2", [
        ev(0, _day(6, 10), "user", "google login: handle a denied consent"),
        ev(1, _day(6, 10, 15), "assistant", "Handled.", edits=("auth/routes.py",)),
    ]),
)
COMMITS: tuple[CommitInfo, ...] = (
    commit("1" * 40, _day(1, 11), "Stream invoice CSV export", ("billing/csv.py",
                                                               "billing/tests/test_csv.py")),
    commit("2" * 40, _day(1, 11, 5), "Reset webhook retry backoff", ("api/retry.py",)),
    commit("3" * 40, _day(2, 15), "Write the CSV header first", ("billing/csv.py",
                                                                 "billing/invoice.py")),
    commit("4" * 40, _day(3, 12), "Bump requests from 2.31.0 to 2.32.0", ("requirements.txt",)),
    commit("5" * 40, _day(4, 10), "Add Google OAuth sign-in via authlib",
           ("auth/oauth.py", "auth/routes.py")),
    commit("6" * 40, _day(4, 10, 30), "ruff format", ("auth/oauth.py", "api/retry.py")),
    commit("7" * 40, _day(6, 11), "Handle denied consent on the OAuth callback",
           ("auth/routes.py",)),
)


def _full(sessions: list[Session], commits: list[CommitInfo]) -> RefineResult:
    return refine(RefineInput(sessions=tuple(sessions), commits=tuple(commits),
                              known_paths=KNOWN, sha_lookup={}))


def _incremental(changed: list[Session], commits: list[CommitInfo],
                 prior: tuple[StoredWindow, ...]) -> RefineResult:
    return refine(RefineInput(sessions=iter(changed), commits=tuple(commits),
                              known_paths=KNOWN, sha_lookup={}, prior=prior, replay=True))


def _shape(res: RefineResult) -> tuple:
    items = sorted((w.id, w.windows, w.commits, w.title, w.kind, w.files,
                    w.confidence.value, w.summary) for w in res.workitems)
    mems = sorted((m.id, m.workitem, m.lifecycle, m.superseded_by) for m in res.memories)
    links = sorted((ln.sha, ln.workitem, ln.confidence) for ln in res.links)
    return items, mems, links


def _part(s: Session, n: int) -> Session:
    return Session(s.agent, s.session_id, s.branch, s.events[:n])


@st.composite
def arrivals(draw: st.DrawFn) -> list[tuple[str, object]]:
    """Sessions (some first arriving half-written, then grown) and commits, shuffled: the one
    arrival strategy of the incremental property tests (test_incremental_ledger.py too)."""
    steps: list[tuple[str, object]] = []
    for s in POOL:
        if len(s.events) >= 4 and draw(st.booleans()):
            steps.append(("session", _part(s, 2)))
        steps.append(("session", s))
    steps += [("commit", c) for c in COMMITS]
    order = draw(st.permutations(range(len(steps))))
    # A grown session never arrives before its first half.
    seen: dict[str, int] = {}
    out = []
    for i in order:
        kind, x = steps[i]
        if kind == "session":
            assert isinstance(x, Session)
            if len(x.events) < seen.get(x.key, 0):
                continue
            seen[x.key] = len(x.events)
        out.append((kind, x))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrivals())
def test_incremental_equals_full_rebuild_in_any_arrival_order(steps) -> None:
    sessions: dict[str, Session] = {}
    commits: list[CommitInfo] = []
    prior: tuple[StoredWindow, ...] = ()
    last: RefineResult | None = None
    for kind, x in steps:
        if kind == "session":
            assert isinstance(x, Session)
            sessions[x.key] = x
            last = _incremental([x], commits, prior)
            prior = last.stored
        else:
            assert isinstance(x, CommitInfo)
            commits.append(x)
            if last is not None:
                # The drainer's per-commit link: only the stored targets, only this commit;
                # it is exactly what a full pass over the same sessions links it to.
                fast = {(ln.sha, ln.workitem) for ln in link_commits([x], list(last.targets))}
                full_now = _full(list(sessions.values()), commits)
                assert fast == {(ln.sha, ln.workitem) for ln in full_now.links
                                if ln.sha == x.sha}
    final = _incremental([], commits, prior)
    assert _shape(final) == _shape(_full(list(sessions.values()), commits))


# Content evidence for the same pool: which session event wrote which commit's lines (commit
# "3" is co-written: its first half by csv1's first window, the rest by csv2), with commits on
# one line of history so that where each landed is known too.
WROTE: dict[str, tuple[tuple[str, str, str], ...]] = {  # sha -> (session key, event ts, file)
    "1" * 40: (("claude-code:csv1", _day(1, 9, 5), "billing/csv.py"),
               ("claude-code:csv1", _day(1, 9, 30), "billing/tests/test_csv.py")),
    "2" * 40: (("claude-code:csv1", _day(1, 10, 5), "api/retry.py"),),
    "3" * 40: (("claude-code:csv1", _day(1, 9, 5), "billing/csv.py"),
               ("codex:csv2", _day(2, 14, 10), "billing/invoice.py")),
    "5" * 40: (("opencode:auth1", _day(4, 8, 30), "auth/oauth.py"),
               ("opencode:auth1", _day(4, 9, 20), "auth/routes.py")),
    "7" * 40: (("claude-code:auth2", _day(6, 10, 15), "auth/routes.py"),),
}


def _content(sessions: list[Session], commits: list[CommitInfo]) -> Content:
    """What index/written would hold: the lines of the commits at hand, written by the
    sessions at hand (up to the events each has so far)."""
    from looma_git.pipeline.content import line_key
    from looma_git.pipeline.signals import parse_ts

    have = {s.key: {e.ts for e in s.events} for s in sessions}
    added: dict[str, tuple[tuple[str, int], ...]] = {}
    writes: dict[int, list[Write]] = {}
    for c in commits:
        lines = []
        for n, (key, ts, f) in enumerate(WROTE.get(c.sha, ())):
            for i in range(3):
                k = line_key(f"commit {c.sha[0]} part {n} line {i} of {f}")
                assert k is not None
                lines.append((f, k))
                if ts in have.get(key, ()):
                    writes.setdefault(k, []).append(Write(f, key, parse_ts(ts)))
        added[c.sha] = tuple(lines)
    return Content(added=added, writes={k: tuple(v) for k, v in writes.items()},
                   capable=frozenset(have))


def _chain(commits: list[CommitInfo]) -> list[CommitInfo]:
    """The commits at hand on one trunk, in time order (a commit's parent is the one before)."""
    from dataclasses import replace

    ordered = sorted(commits, key=lambda c: c.ts)
    return [replace(c, parents=(ordered[i - 1].sha,) if i else ()) for i, c in
            enumerate(ordered)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrivals())
def test_with_content_evidence_incremental_still_equals_full(steps) -> None:
    """What each window wrote changes as commits arrive (an old window gains a commit): the
    pass replays resolution only up to it, and ends where the full rebuild does."""
    sessions: dict[str, Session] = {}
    commits: list[CommitInfo] = []
    prior: tuple[StoredWindow, ...] = ()

    def run(changed: list[Session], prior: tuple[StoredWindow, ...]) -> RefineResult:
        cs = _chain(commits)
        return refine(RefineInput(sessions=iter(changed), commits=tuple(cs), known_paths=KNOWN,
                                  sha_lookup={}, prior=prior, replay=True,
                                  content=_content(list(sessions.values()), cs)))

    for kind, x in steps:
        if kind == "session":
            assert isinstance(x, Session)
            sessions[x.key] = x
            prior = run([x], prior).stored
        else:
            assert isinstance(x, CommitInfo)
            commits.append(x)
    final = run([], prior)
    cs = _chain(commits)
    full = refine(RefineInput(sessions=tuple(sessions.values()), commits=tuple(cs),
                              known_paths=KNOWN, sha_lookup={},
                              content=_content(list(sessions.values()), cs)))
    assert _shape(final) == _shape(full)
    if len(sessions) == len(POOL) and len(commits) == len(COMMITS):
        wrote = {w.key: w.wrote for w in full.windows}
        assert "3" * 40 in wrote["codex:csv2#0"] and "3" * 40 in wrote["claude-code:csv1#0"]


def test_a_pass_with_nothing_new_scores_nothing_and_extracts_nothing() -> None:
    first = _full(list(POOL), list(COMMITS))
    again = _incremental([], list(COMMITS), first.stored)
    assert again.rescored == 0 and again.extracted == 0
    assert _shape(again) == _shape(first)
    grown = _incremental([POOL[0]], list(COMMITS), first.stored)
    assert grown.extracted == 0  # same windows: candidates reused, not re-extracted


def test_quality_on_the_pool() -> None:
    res = _full(list(POOL), list(COMMITS))
    by_window = {k: w for w in res.workitems for k in w.windows}
    csv = by_window["claude-code:csv1#0"]
    assert by_window["codex:csv2#0"] is csv  # paraphrased continuation joins
    retry = by_window["claude-code:csv1#1"]  # "ok, switching gears: ..." is its own window
    assert retry is not csv and by_window["gemini-cli:hook1#0"] is retry
    assert csv.kind == "feature" and "Stream" in csv.title  # not a migration ("export")
    links = {ln.sha: ln for ln in res.links}
    assert "4" * 40 not in links and "6" * 40 not in links  # bump, ruff format: no link
    assert links["1" * 40].workitem == csv.id and links["3" * 40].workitem == csv.id
    assert links["2" * 40].workitem == retry.id
    auth = by_window["opencode:auth1#0"]
    assert by_window["claude-code:auth2#0"] is auth
    assert auth.title == "Add Google OAuth sign-in via authlib"
    assert dict(links["7" * 40].why)["files"] == 1.0


def test_an_appending_pass_keeps_old_authorship_only_when_new_writes_cannot_move_it() -> None:
    """New sessions' writes leave stored windows' authorship alone when every one is after the
    last commit's write window and no line crosses into "written into too many files"."""
    from looma_git.pipeline.link_content import GENERIC_FILES, WRITE_AFTER_S
    from looma_git.pipeline.resolve_append import _authorship_unmoved
    from looma_git.pipeline.signals import parse_ts

    c = COMMITS[0]
    t = parse_ts(c.ts)
    old = [Write(f"f{i}.py", "claude-code:old", t - 60) for i in range(GENERIC_FILES)]

    def content(*new: Write) -> dict[int, tuple[Write, ...]]:
        return {7: (*old, *new)}  # every write of the line the commit adds

    late = t + WRITE_AFTER_S + 1
    assert _authorship_unmoved(content(Write("f0.py", "codex:new", late)), {"codex:new"}, [c])
    assert not _authorship_unmoved(content(Write("f0.py", "codex:new", t + 5)), {"codex:new"},
                                   [c])
    # a third file: the line is now written into too many files and counts for no one
    assert not _authorship_unmoved(content(Write("other.py", "codex:new", late)),
                                   {"codex:new"}, [c])
    assert _authorship_unmoved(content(), {"codex:new"}, [c])
