"""Content evidence: what sessions wrote against what commits add, and the links it decides."""

from __future__ import annotations

import json

from looma_git.pipeline.content import gone_key, line_key, removed_key, written_keys
from looma_git.pipeline.link_content import Content, Write
from looma_git.pipeline.linking import Target, link_commits
from looma_git.pipeline.signals import parse_ts
from looma_git.pipeline.text import is_housekeeping, kind_from_text, strong_link
from looma_git.store.gitfacts import CommitInfo

T0 = parse_ts("2026-03-02T10:00:00Z")
AUTH = ["def exchange_code(code, verifier):", "    token = client.fetch_token(code=code)",
        "    return session_from(token, verifier)"]
QUEUE = ["class RetryQueue(BaseQueue):", "    backoff = ExponentialBackoff(base=2.0)",
         "    dead_letter_after = 6"]


def _k(line: str) -> int:
    key = line_key(line)
    assert key is not None
    return key


def test_written_keys_read_each_agents_edit_shapes_and_never_the_replaced_text() -> None:
    claude = "\n".join(json.dumps(r) for r in (
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Edit",
         "input": {"file_path": "/r/auth.py", "old_string": "def old_name(x):",
                   "new_string": AUTH[0] + "\n" + AUTH[1]}}]}},
        {"type": "user", "toolUseResult": {"originalFile": "def untouched_line():",
                                           "structuredPatch": [{"lines": ["-removed_line()",
                                                                          "+" + AUTH[2]]}]}}))
    got = written_keys(claude)
    # What was replaced counts only as taken out, in a key space of its own.
    assert got == {_k(AUTH[0]), _k(AUTH[1]), _k(AUTH[2]), _gone("def old_name(x):"),
                   _gone("removed_line()")}
    assert _k("def old_name(x):") not in got and _k("removed_line()") not in got
    patch = "*** Begin Patch\n*** Update File: q.py\n@@\n-old_queue = None\n+" + QUEUE[0] + "\n"
    codex = json.dumps({"payload": {"type": "custom_tool_call", "input": patch}})
    assert written_keys(codex) == {_k(QUEUE[0]), _gone("old_queue = None")}
    args = json.dumps({"patch": patch})
    assert written_keys(json.dumps({"payload": {"arguments": args}})) == {
        _k(QUEUE[0]), _gone("old_queue = None")}
    cursor = json.dumps({"message": {"content": [{"type": "tool_use", "name": "Write",
                         "input": {"contents": "\n".join(QUEUE), "path": "/r/q.py"}}]}})
    assert written_keys(cursor) == {_k(x) for x in QUEUE}
    # A stub for an oversized record, prose and short lines carry nothing.
    assert written_keys(json.dumps({"truncated": True, "chars": 99999})) == set()
    assert written_keys(json.dumps({"text": AUTH[0], "content": "}\n)\n  pass"})) == set()
    heredoc = "cat > q.py <<'EOF'\n" + QUEUE[1] + "\nEOF\n"
    assert written_keys("", (heredoc,)) == {_k(QUEUE[1])}
    # Context an edit restates on both sides is not taken out; a file `git rm` removes is.
    edit = json.dumps({"input": {"old_string": AUTH[0] + "\n" + AUTH[1],
                                 "new_string": AUTH[0]}})
    assert written_keys(edit) == {_k(AUTH[0]), _gone(AUTH[1])}
    assert written_keys("", ("cd app && git rm -q app/old.py; rm -f ./tmp/x.py",)) == {
        gone_key("app/old.py"), gone_key("tmp/x.py")}
    assert written_keys("", ("grep -rn term . | wc -l",)) == set()


def _gone(line: str) -> int:
    key = removed_key(line)
    assert key is not None
    return key


def _commit(sha: str, lines_file: str, author: str = "Ada", subject: str = "Add the work",
            hours: float = 1.0, branch: str = "refs/heads/main") -> CommitInfo:
    from datetime import UTC, datetime

    ts = datetime.fromtimestamp(T0 + hours * 3600, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return CommitInfo(sha=sha, ts=ts, author=author, subject=subject, body="",
                      files=(lines_file,), ref=branch, parents=("p",))


def _target(tid: str, session: str, files: set[str]) -> Target:
    return Target(id=tid, title="", files=frozenset(files), branches=frozenset(),
                  spans=((T0 - 3600, T0),), terms=(), windows=((session, T0 - 3600, T0),))


def _content(added: dict[str, tuple[str, list[str]]],
             writes: list[tuple[str, str, list[str], float]],
             capable: set[str]) -> Content:
    w: dict[int, list[Write]] = {}
    for session, file, lines, ts in writes:
        for line in lines:
            w.setdefault(_k(line), []).append(Write(file, session, ts))
    return Content(added={sha: tuple((f, _k(x)) for x in lines)
                          for sha, (f, lines) in added.items()},
                   writes={k: tuple(v) for k, v in w.items()}, capable=frozenset(capable))


def test_the_sessions_that_wrote_the_lines_win_over_file_overlap() -> None:
    # Both WorkItems edited app/shared.py; only "auth" wrote what the commit adds.
    auth = _target("auth", "claude-code:s1", {"app/shared.py", "app/auth.py"})
    queue = _target("queue", "codex:s2", {"app/shared.py"})
    c = _commit("c1", "app/shared.py", subject="Shared helpers for the queue")
    content = _content({"c1": ("app/shared.py", AUTH)},
                       [("claude-code:s1", "app/shared.py", AUTH, T0 - 600)],
                       {"claude-code:s1", "codex:s2"})
    [link] = link_commits([c], [queue, auth], content=content)
    assert link.workitem == "auth"
    why = dict(link.why)
    assert why["content"] == 1.0 and why["lines"] == 3.0


def test_lines_written_into_another_file_after_the_commit_or_long_before_do_not_count() -> None:
    auth = _target("auth", "claude-code:s1", {"app/auth.py"})
    c = _commit("c1", "app/auth.py")
    for file, ts in (("app/other.py", T0 - 600), ("app/auth.py", T0 + 5 * 3600),
                     ("app/auth.py", T0 - 40 * 86400)):
        content = _content({"c1": ("app/auth.py", AUTH)}, [("claude-code:s1", file, AUTH, ts)],
                           {"claude-code:s1"})
        links = link_commits([c], [auth], own_authors=frozenset({"Ada"}), content=content)
        # Not content: only the fallback (file overlap, an hour after the window) can link.
        assert all("content" not in dict(ln.why) for ln in links), (file, ts, links)


def test_a_strangers_commit_whose_lines_no_session_wrote_is_not_linked() -> None:
    rl = _target("ratelimit", "claude-code:s1", {"app/api/middleware.py"})
    c = _commit("t1", "app/api/middleware.py", author="Priya", subject="Add request metrics")
    content = _content({"t1": ("app/api/middleware.py", QUEUE)},
                       [("claude-code:s1", "app/api/middleware.py", AUTH, T0 - 600)],
                       {"claude-code:s1"})
    assert link_commits([c], [rl], own_authors=frozenset({"Ada"}), content=content) == []
    # Without content evidence the same commit used to link on file overlap and time.
    assert link_commits([c], [rl], own_authors=None)


def test_a_session_that_does_not_show_its_writes_keeps_the_fallback() -> None:
    # Gemini/OpenCode-style records name the edited files but not the text: a stranger's
    # commit is then judged on files, branch, time and wording like before.
    rl = Target(id="rl", title="", files=frozenset({"app/rl.py"}),
                branches=frozenset({"feat/rl"}), spans=((T0 - 3600, T0),), terms=(),
                windows=(("gemini-cli:g1", T0 - 3600, T0), ("claude-code:s1", T0 - 7200,
                                                             T0 - 3600)))
    c = _commit("c1", "app/rl.py", author="Omar", branch="refs/heads/feat/rl")
    content = _content({"c1": ("app/rl.py", QUEUE)}, [], {"claude-code:s1"})
    [link] = link_commits([c], [rl], own_authors=frozenset({"Ada"}), content=content)
    assert link.workitem == "rl" and "content" not in dict(link.why)


def test_housekeeping_never_links_but_a_fixup_or_manifest_commit_with_content_does() -> None:
    jobs = _target("jobs", "claude-code:s1", {"requirements.txt", "app/jobs.py"})
    req = ["rq==1.16.2  # background jobs"]
    bump = _commit("b1", "requirements.txt", author="dependabot[bot]",
                   subject="Bump rq from 1.16.1 to 1.16.2")
    fmt = _commit("f1", "app/jobs.py", subject="style: ruff format")
    add = _commit("a1", "requirements.txt", subject="Add rq to requirements")
    fix = _commit("x1", "app/jobs.py", subject="fixup! Add the job queue")
    content = _content({"b1": ("requirements.txt", req), "a1": ("requirements.txt", req),
                        "f1": ("app/jobs.py", QUEUE), "x1": ("app/jobs.py", QUEUE)},
                       [("claude-code:s1", "requirements.txt", req, T0 - 60),
                        ("claude-code:s1", "app/jobs.py", QUEUE, T0 - 60)], {"claude-code:s1"})
    links = link_commits([bump, fmt, add, fix], [jobs], content=content)
    assert sorted(ln.sha for ln in links) == ["a1", "x1"]
    assert is_housekeeping("Release 1.4.0") and is_housekeeping("x", "renovate[bot]")
    assert not is_housekeeping("fixup! Add OAuth") and not is_housekeeping("wip")
    assert is_housekeeping("Lint") and is_housekeeping("Formatting with black")
    assert is_housekeeping("lint and format") and is_housekeeping("Fix lint")
    assert not is_housekeeping("Lint and test with tox-uv (#212)")  # a CI change


def test_a_lint_or_format_pass_is_housekeeping_only_when_it_names_nothing_else() -> None:
    for subject in ("Lint", "Lint fixes", "lint: fix warnings", "Fix linting", "Formatting",
                    "Format code with ruff (#31)", "Reformat tests", "Run black"):
        assert is_housekeeping(subject), subject
    # Work beyond the pass: how CI lints and tests, a feature about formatting numbers.
    for subject in ("Lint and test with tox-uv (#212)",
                    "Format the invoice totals as currency", "Formatting of dates in the export"):
        assert not is_housekeeping(subject), subject


def test_a_line_written_into_many_files_is_no_evidence() -> None:
    auth = _target("auth", "claude-code:s1", {"app/auth.py"})
    common = ["from app.db import session_scope"]
    writes = [("claude-code:s1", "app/auth.py", common, T0 - 60)] + [
        ("claude-code:s9", f"app/m{i}.py", common, T0 - 60) for i in range(3)]
    content = _content({"c1": ("app/auth.py", common)}, writes, {"claude-code:s1"})
    c = _commit("c1", "app/auth.py", author="Priya")
    assert link_commits([c], [auth], own_authors=frozenset({"Ada"}), content=content) == []


def test_kinds_follow_the_first_cue_of_the_request() -> None:
    assert kind_from_text("Refactor config: migrate settings to pydantic so bad env values "
                          "fail at startup.") == "refactor"
    assert kind_from_text("Migrate settings to pydantic BaseSettings") == "migration"
    assert kind_from_text("the webhook retries are broken, partners get duplicates") == "bugfix"
    assert kind_from_text("Add validation so that bad values fail early") == "feature"
    assert kind_from_text("why is GET /orders slow?") == "investigation"
    assert kind_from_text("Add Google sign-in") == "feature"
    # Quoted code is a command or a name, not a cue: the subject's "fix" decides.
    assert kind_from_text("`pipx upgrade --install` keeps the old version fix(upgrade): honor "
                          "the version specifier") == "bugfix"
    assert kind_from_text("`migrate_db` should accept a dry-run flag") == "feature"
    # Bug reports rarely say "bug": what no longer works is one.
    assert kind_from_text("someone reported translations don't work at all from pypi") == "bugfix"
    assert kind_from_text("Replace Exception with a more specific error") == "refactor"
    assert kind_from_text("3.14 is out, add it to the test matrix and the classifiers") == "chore"
    # The commit subject is a sentence of its own: a purpose clause of the request ("since
    # ...") does not swallow it.
    assert kind_from_text("switch it to something specific since it's an OSError\n"
                          "Replace Exception with FileNotFoundError") == "refactor"


def test_strong_links_rest_on_content_branch_or_a_user() -> None:
    assert strong_link({"content": 0.8, "files": 1.0})
    assert strong_link({"branch": 1.0, "files": 0.5})
    assert strong_link({}, user=True) and strong_link({"user": 1.0})
    assert not strong_link({"files": 1.0, "time": 1.0, "text": 0.3})
    assert not strong_link(None)


def test_a_rebased_commit_is_linked_by_the_lines_written_before_it_was_authored() -> None:
    """Rebased three months later: the commit date moved on, the author date did not, and the
    session's writes just before the author date are still the commit's content; a commit
    authored as late as it was committed does not reach that far back."""
    from dataclasses import replace
    from datetime import UTC, datetime

    auth = _target("auth", "claude-code:s1", {"app/auth.py"})
    rebased = _commit("c1", "app/auth.py", hours=90 * 24)
    content = _content({"c1": ("app/auth.py", AUTH)},
                       [("claude-code:s1", "app/auth.py", AUTH, T0 - 600)], {"claude-code:s1"})
    assert all("content" not in dict(ln.why) for ln in link_commits([rebased], [auth],
                                                                     content=content))
    authored = datetime.fromtimestamp(T0, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    [link] = link_commits([replace(rebased, authored=authored)], [auth], content=content)
    assert link.workitem == "auth" and dict(link.why)["content"] == 1.0


def test_someone_elses_late_commit_on_the_branch_is_not_the_sessions_work() -> None:
    """A contributor's session wrote the branch's first commit; weeks later a reviewer
    (who has sessions of their own elsewhere) pushes a one-line edit onto that branch that no
    session wrote: the branch alone does not make it the WorkItem's. The contributor's own
    late commit on the branch, and the reviewer's commit made during the work, still link."""
    br = "refs/heads/feat/rl"
    rl = Target(id="rl", title="", files=frozenset({"app/rl.py"}),
                branches=frozenset({"feat/rl"}), spans=((T0 - 3600, T0),), terms=(),
                windows=(("claude-code:s1", T0 - 3600, T0),))
    first = _commit("c1", "app/rl.py", author="Sam", branch=br)
    review = _commit("c2", "app/rl.py", author="Will", hours=30 * 24, subject="Update app/rl.py",
                     branch=br)
    content = _content({"c1": ("app/rl.py", AUTH), "c2": ("app/rl.py", QUEUE[:1])},
                       [("claude-code:s1", "app/rl.py", AUTH, T0 - 600)], {"claude-code:s1"})
    own = frozenset({"Sam", "Will"})
    links = link_commits([first, review], [rl], own_authors=own, content=content)
    assert [ln.sha for ln in links] == ["c1"]
    from dataclasses import replace

    for later in (replace(review, author="Sam"), _commit("c2", "app/rl.py", author="Will",
                                                         hours=2, branch=br)):
        got = link_commits([first, later], [rl], own_authors=own, content=content)
        assert {ln.sha for ln in got} == {"c1", "c2"}, later
