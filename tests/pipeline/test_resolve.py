"""Resolution of session windows into WorkItems: segmentation at a stated switch, evidence
weighted by how distinctive it is, feature branches, and investigations without commits."""

from __future__ import annotations

from looma_git.pipeline.inputs import Session
from looma_git.pipeline.refine import RefineInput, refine
from looma_git.pipeline.resolve import Resolver, window_order
from looma_git.pipeline.signals import windows_of
from tests.pipeline.test_refine import ev, sess

KNOWN = frozenset({"app/auth/google.py", "app/auth/routes.py", "app/auth/reset.py",
                   "app/auth/verify.py", "app/emails/templates.py", "app/billing/export.py",
                   "app/billing/invoice.py", "tests/test_export.py", "requirements.txt",
                   "app/orders/queries.py", "app/orders/routes.py", "app/db.py",
                   "app/webhooks/retry.py", "billing/export.py", "billing/invoice.py",
                   "webhooks/retry.py", "AUTHORS.rst", "CHANGELOG.rst"})


def _on(branch: str | None, s: Session) -> Session:
    return Session(s.agent, s.session_id, branch, s.events)


def _clusters(sessions: list[Session]) -> dict[str, str]:
    """window key -> cluster id, as a full pass resolves them."""
    windows = [w for s in sessions for w in windows_of(s, KNOWN, {})]
    r = Resolver([])
    return {w.key: r.add(w)[0] for w in sorted(windows, key=window_order)}


def _day(d: int, h: int) -> str:
    return f"2026-05-{d:02d}T{h:02d}:00:00Z"


def test_a_stated_switch_cuts_the_window_and_each_topic_resolves_on_its_own() -> None:
    s = sess("claude-code", "mix", [
        ev(0, _day(1, 9), "user", "the invoice csv export times out for big customers"),
        ev(1, _day(1, 9), "assistant", "Streaming the rows now.", edits=("app/billing/export.py",)),
        ev(2, _day(1, 10), "user", "ok. back to the webhook retries: a dead endpoint is "
                                   "retried forever, cap the attempts"),
        ev(3, _day(1, 10), "assistant", "Capped at five.", edits=("app/webhooks/retry.py",)),
    ])
    ws = windows_of(s, KNOWN, {})
    assert [w.cut for w in ws] == ["", "topic"]
    assert [sorted(w.edited) for w in ws] == [["app/billing/export.py"],
                                              ["app/webhooks/retry.py"]]
    got = _clusters([s])
    assert len(set(got.values())) == 2


def test_efforts_sharing_a_file_and_a_manifest_stay_apart_and_each_gathers_its_sessions(
) -> None:
    sso1 = sess("claude-code", "sso1", [
        ev(0, _day(2, 9), "user", "add google sign-in with authlib, match accounts on email"),
        ev(1, _day(2, 9), "assistant", "Added the OAuth client.",
           edits=("app/auth/google.py", "app/auth/routes.py", "requirements.txt")),
    ])
    reset1 = sess("codex", "reset1", [
        ev(0, _day(3, 9), "user", "forgot password flow: email a single-use reset link"),
        ev(1, _day(3, 9), "assistant", "Reset tokens expire after 30 minutes.",
           edits=("app/auth/reset.py", "app/auth/routes.py", "requirements.txt")),
    ])
    sso2 = sess("gemini-cli", "sso2", [
        ev(0, _day(4, 9), "user", "the google login loops on safari, the oauth state cookie"),
        ev(1, _day(4, 9), "assistant", "SameSite=Lax on the state cookie.",
           edits=("app/auth/google.py",)),
    ])
    reset2 = sess("cursor", "reset2", [
        ev(0, _day(5, 9), "user", "the reset link email needs its own template"),
        ev(1, _day(5, 9), "assistant", "Added a password reset template.",
           edits=("app/auth/reset.py", "app/emails/templates.py")),
    ])
    got = _clusters([_on("feat/google-sso", sso1), _on("feat/password-reset", reset1),
                     sso2, reset2])
    assert got["claude-code:sso1#0"] == got["gemini-cli:sso2#0"]
    assert got["codex:reset1#0"] == got["cursor:reset2#0"]
    assert got["claude-code:sso1#0"] != got["codex:reset1#0"]


def test_a_window_on_another_feature_branch_starts_its_own_workitem() -> None:
    """Two efforts in one function, on two feature branches: the branch keeps them apart."""
    a = sess("claude-code", "a", [
        ev(0, _day(6, 9), "user", "invoice export: stream the csv rows for big customers"),
        ev(1, _day(6, 9), "assistant", "Rows are streamed.",
           edits=("app/billing/export.py", "tests/test_export.py")),
    ])
    b = sess("claude-code", "b", [
        ev(0, _day(7, 9), "user", "numbers in the downloaded invoices should follow the "
                                  "customer's locale: decimal comma for fr_FR"),
        ev(1, _day(7, 9), "assistant", "Formatting now honours the locale's separator.",
           edits=("app/billing/export.py", "tests/test_export.py")),
    ])
    same = _clusters([_on("export-stream", a), _on("export-stream", b)])
    assert same["claude-code:a#0"] == same["claude-code:b#0"]
    apart = _clusters([_on("export-stream", a), _on("export-locale", b)])
    assert apart["claude-code:a#0"] != apart["claude-code:b#0"]


def test_a_test_only_window_joins_the_effort_of_the_module_it_tests() -> None:
    a = sess("codex", "impl", [
        ev(0, _day(8, 9), "user", "finance wants the invoices of a month as a csv export"),
        ev(1, _day(8, 9), "assistant", "Export written.", edits=("app/billing/export.py",)),
    ])
    t = sess("cursor", "tests", [
        ev(0, _day(8, 14), "user", "write tests for the csv export"),
        ev(1, _day(8, 14), "assistant", "Covered.", edits=("tests/test_export.py",)),
    ])
    got = _clusters([a, t])
    assert got["codex:impl#0"] == got["cursor:tests#0"]


def test_read_only_sessions_of_one_question_become_one_investigation() -> None:
    reads = ("app/orders/queries.py", "app/orders/routes.py", "app/db.py")
    one = sess("claude-code", "slow1", [
        ev(0, _day(9, 9), "user", "why is GET /orders slow? p95 went from 300ms to 2.3s"),
        ev(1, _day(9, 9), "assistant", "The profile shows an N+1 in items_for_order.",
           reads=reads),
    ])
    two = sess("gemini-cli", "slow2", [
        ev(0, _day(11, 9), "user", "the orders endpoint p95 latency is still 2.4s, is it "
                                   "only the N+1 in items_for_order?"),
        ev(1, _day(11, 9), "assistant", "The serializer adds 200ms on top.", reads=reads),
    ])
    res = refine(RefineInput(sessions=(one, two), commits=(), known_paths=KNOWN,
                             sha_lookup={}))
    [item] = [w for w in res.workitems if len(w.sessions) == 2]
    assert item.kind == "investigation" and item.readonly and item.corroborated
    assert 0.0 < item.confidence.value <= 0.35


def test_a_tour_of_the_code_joins_no_effort_and_nothing_joins_it() -> None:
    work = sess("claude-code", "rank", [
        ev(0, _day(12, 9), "user", "search results come back in random order, add ranking"),
        ev(1, _day(12, 9), "assistant", "Ranking by relevance.",
           edits=("app/orders/queries.py",)),
    ])
    tour = sess("opencode", "tour", [
        ev(0, _day(12, 15), "user", "How does the order query ranking work here? Just explain."),
        ev(1, _day(12, 15), "assistant", "Rows are ranked by relevance in queries.py.",
           reads=("app/orders/queries.py",)),
    ])
    question = sess("cursor", "q", [
        ev(0, _day(13, 9), "user", "is the ranking of order query results stable for ties?"),
        ev(1, _day(13, 9), "assistant", "Ties are broken by id.",
           reads=("app/orders/queries.py",)),
    ])
    got = _clusters([work, tour, question])
    assert got["opencode:tour#0"] not in (got["claude-code:rank#0"], got["cursor:q#0"])
    assert got["cursor:q#0"] == got["claude-code:rank#0"]  # a question about the work joins it


def test_a_subagent_joins_the_work_of_the_session_that_delegated_it() -> None:
    parent = sess("claude-code", "p1", [
        ev(0, _day(14, 9), "user", "stream the invoice csv export instead of building it"),
        ev(1, _day(14, 9), "assistant", "Streaming rows.", edits=("app/billing/export.py",)),
    ])
    sub = sess("claude-code", "p1/agent-a1", [
        ev(0, _day(14, 10), "user", "List every caller of build_csv under app/ and tests/"),
        ev(1, _day(14, 10), "assistant", "Two callers.", reads=("app/billing/invoice.py",)),
    ])
    got = _clusters([parent, sub])
    assert got["claude-code:p1/agent-a1#0"] == got["claude-code:p1#0"]


def _resumed(opening: str, edits: tuple[str, ...], reply: str) -> Session:
    """A session on one feature branch, resumed nine days later with `opening`."""
    return _on("feat/export-stream", sess("claude-code", "resumed", [
        ev(0, _day(1, 9), "user", "the invoice csv export times out for big customers"),
        ev(1, _day(1, 9), "assistant", "Streaming the rows through a generator, paged by "
           "invoice id.", edits=("billing/export.py",)),
        ev(2, _day(10, 9), "user", opening),
        ev(3, _day(10, 9), "assistant", reply, edits=edits),
    ]))


def test_a_session_resumed_after_a_pause_with_a_stated_switch_is_a_new_topic() -> None:
    """Nine days later, "different thing now": the resumed stretch is resolved on its own
    evidence, not carried into the earlier work by the session (nor by the branch the
    checkout was still on)."""
    s = _resumed("different thing now - a dead webhook endpoint is retried forever, cap the "
                 "attempts", ("webhooks/retry.py",),
                 "Capped webhook delivery retries at five attempts with exponential backoff.")
    ws = windows_of(s, KNOWN, {})
    assert [w.cut for w in ws] == ["", "topic"]
    got = _clusters([s])
    assert got["claude-code:resumed#0"] != got["claude-code:resumed#1"]


def test_a_session_resumed_after_a_pause_without_a_switch_carries_on_its_work() -> None:
    s = _resumed("the export still times out for the biggest customer, stream the invoice "
                 "lines too", ("billing/invoice.py",), "Invoice lines stream as well.")
    assert [w.cut for w in windows_of(s, KNOWN, {})] == ["", "pause"]
    got = _clusters([s])
    assert got["claude-code:resumed#0"] == got["claude-code:resumed#1"]
    back = _resumed("back to the export: the invoice lines need streaming as well",
                    ("billing/invoice.py",), "Invoice lines stream as well.")
    assert [w.cut for w in windows_of(back, KNOWN, {})] == ["", "pause"]


def test_a_turn_that_only_records_the_work_is_no_new_topic() -> None:
    """Adding oneself to AUTHORS and a changelog line before committing wraps the work up:
    files apart from the window's, but files every effort ends in, so no cut; a turn on
    files of their own still is one."""
    def session(opening: str, edits: tuple[str, ...]) -> Session:
        return sess("gemini-cli", "wrap", [
            ev(0, _day(3, 9), "user", "the invoice csv export times out for big customers"),
            ev(1, _day(3, 9), "assistant", "Streaming the rows.", edits=("billing/export.py",)),
            ev(2, _day(3, 10), "user", opening),
            ev(3, _day(3, 10), "assistant", "Done.", edits=edits),
        ])
    wrap = session("add me to AUTHORS.rst and a changelog entry, then commit and push to my "
                   "fork", ("AUTHORS.rst", "CHANGELOG.rst"))
    assert [sorted(w.edited) for w in windows_of(wrap, KNOWN, {})] == [
        ["AUTHORS.rst", "CHANGELOG.rst", "billing/export.py"]]
    other = session("a dead webhook endpoint is retried forever, cap the attempts",
                    ("webhooks/retry.py",))
    assert [w.cut for w in windows_of(other, KNOWN, {})] == ["", "topic"]


def _long_effort() -> Session:
    """A long Claude Code session on a feature branch that opens a pull request."""
    noise = ("Reading the module to see how rows are built.", "Running the focused tests.",
             "The generator yields one row per invoice; memory stays flat.", "ruff is clean.",
             "Paging by invoice id keeps the query on the primary key index.")
    evs = [ev(0, _day(1, 9), "user", "the invoice csv export builds the whole file in memory "
                                     "and times out for big customers; stream it")]
    evs += [ev(i, _day(1, 9), "assistant", f"{noise[i % 5]} (step {i})",
               edits=("app/billing/export.py",) if i % 3 == 0 else (),
               reads=("app/billing/invoice.py", "app/db.py") if i % 4 == 0 else ())
            for i in range(1, 30)]
    evs += [ev(30, _day(1, 10), "user", "open a PR for it"),
            ev(31, _day(1, 10), "assistant", "Opened PR #57 from feat/invoice-stream.",
               edits=("tests/test_export.py",))]
    return _on("feat/invoice-stream", sess("claude-code", "cc1", evs))


def test_a_continuation_by_another_agent_weeks_later_joins_on_what_it_names() -> None:
    """Two weeks later a Gemini CLI session on the trunk edits a file the effort only read,
    in few words of its own: files and words alone do not tie it to the effort (the same
    request could be new work), but naming the effort's branch or its pull request does."""
    other = _on("feat/webhook-retry", sess("codex", "cx1", [
        ev(0, _day(3, 9), "user", "webhook retries: a dead endpoint is retried forever"),
        ev(1, _day(3, 9), "assistant", "Capped at five.", edits=("app/webhooks/retry.py",))]))

    def later(prompt: str) -> Session:
        return sess("gemini-cli", "g1", [
            ev(0, _day(15, 9), "user", prompt),
            ev(1, _day(15, 9), "assistant", "Added the header row for an empty month.",
               edits=("app/billing/invoice.py",))])

    ask = "the header row is missing when a month has no invoices"
    for prompt, joins in ((ask, False),
                          (f"picking up feat/invoice-stream from two weeks ago: {ask}", True),
                          (f"review on PR #57: {ask}", True),
                          (f"unlike feat/webhook-retry, {ask}", False)):
        got = _clusters([_long_effort(), other, later(prompt)])
        assert (got["gemini-cli:g1#0"] == got["claude-code:cc1#0"]) is joins, prompt
        assert got["gemini-cli:g1#0"] != got["codex:cx1#0"]
