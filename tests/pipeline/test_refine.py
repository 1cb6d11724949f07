"""The refinery pass on hand-built sessions: convergence, separation, read-only, lifecycle."""

from __future__ import annotations

from looma_git.pipeline.inputs import Event, Session, ToolUse
from looma_git.pipeline.refine import RefineInput, refine
from looma_git.store.gitfacts import CommitInfo

KNOWN = frozenset({"auth/oauth.py", "auth/routes.py", "auth/session.py", "README.md"})


def ev(n: int, ts: str, role: str, text: str = "", edits: tuple[str, ...] = (),
       reads: tuple[str, ...] = ()) -> Event:
    tools = tuple([ToolUse("edit", "Edit", None, None, False, None, (f,)) for f in edits]
                  + [ToolUse("read", "Read", None, None, False, None, (f,)) for f in reads])
    return Event(f"e{n}-{ts}", n, ts, role, text, None, tools)


def sess(agent: str, sid: str, events: list[Event]) -> Session:
    return Session(agent, sid, None, tuple(events))


def commit(sha: str, ts: str, subject: str, files: tuple[str, ...]) -> CommitInfo:
    return CommitInfo(sha=sha, ts=ts, author="a", subject=subject, body="", files=files,
                      ref="refs/heads/main", parents=("p",))


SESSIONS = (
    sess("claude-code", "c1", [
        ev(0, "2026-03-01T10:00:00Z", "user", "Add OAuth login with PKCE"),
        ev(1, "2026-03-01T10:01:00Z", "assistant",
           "We decided to store tokens in Redis. TODO: add the callback route handler.",
           edits=("auth/oauth.py",)),
    ]),
    sess("codex", "x1", [
        ev(0, "2026-03-02T10:00:00Z", "user", "Continue the OAuth login: the callback route"),
        ev(1, "2026-03-02T10:01:00Z", "assistant",
           "Actually, let's not use Redis; switch to Postgres for tokens.",
           edits=("auth/oauth.py", "auth/routes.py")),
    ]),
    sess("gemini-cli", "g1", [
        ev(0, "2026-03-03T09:00:00Z", "user", "Users get logged out when the session refreshes"),
        ev(1, "2026-03-03T09:01:00Z", "assistant", "Bug: the session expires when refresh races.",
           edits=("auth/session.py",)),
    ]),
    sess("opencode", "r1", [
        ev(0, "2026-03-04T09:00:00Z", "user", "Explain the README"),
        ev(1, "2026-03-04T09:01:00Z", "assistant", "It describes setup.", reads=("README.md",)),
    ]),
)
COMMITS = (
    commit("a" * 40, "2026-03-01T11:00:00Z", "Add OAuth client with PKCE", ("auth/oauth.py",)),
    commit("b" * 40, "2026-03-02T11:00:00Z", "Add the OAuth callback route handler",
           ("auth/routes.py", "auth/oauth.py")),
    commit("c" * 40, "2026-03-03T10:00:00Z", "Fix session refresh race", ("auth/session.py",)),
    commit("d" * 40, "2026-03-05T10:00:00Z", "Fix README typo", ("README.md",)),
)


def run():
    return refine(RefineInput(sessions=SESSIONS, commits=COMMITS, known_paths=KNOWN,
                              sha_lookup={}))


def test_convergence_separation_and_readonly() -> None:
    res = run()
    by_session = {s: w for w in res.workitems for s in w.sessions}
    oauth = by_session[("claude-code", "c1")]
    assert by_session[("codex", "x1")] is oauth  # two agents, one effort
    fix = by_session[("gemini-cli", "g1")]
    assert fix is not oauth and fix.kind == "bugfix"  # same directory, another effort
    ro = by_session[("opencode", "r1")]
    assert ro.readonly and ro.confidence.band == "low"
    assert oauth.confidence.band in ("medium", "high") and oauth.title.startswith("Add OAuth")
    links = {ln.sha: ln.workitem for ln in res.links}
    assert links["a" * 40] == oauth.id and links["c" * 40] == fix.id
    assert "d" * 40 not in links  # a chore links to nothing


def test_reversal_supersedes_and_done_todo_expires() -> None:
    res = run()
    mems = {m.text: m for m in res.memories}
    redis = next(m for t, m in mems.items() if "store tokens in Redis" in t)
    postgres = next(m for t, m in mems.items() if "switch to Postgres" in t)
    assert redis.lifecycle == "superseded" and redis.superseded_by == postgres.id
    todo = next(m for t, m in mems.items() if "callback route handler" in t)
    assert todo.lifecycle == "expired"
    bug = next(m for t, m in mems.items() if t.startswith("Bug:"))
    assert bug.lifecycle == "active"


def test_deterministic() -> None:
    assert run() == run()
