"""Branch evidence from what git printed in an agent's shell (gitshell.py), and the branch
each window carries from it (pipeline/signals.py) when the agent records none."""

from __future__ import annotations

import pytest

from looma_git.gitshell import shell_git
from looma_git.pipeline.evidence import score
from looma_git.pipeline.inputs import Event, Session, ToolUse
from looma_git.pipeline.resolve import Resolver
from looma_git.pipeline.signals import sha_candidates, windows_of

PUSH = ("To github.com:acme/app.git\n * [new branch]      feat/x -> feat/x\n"
        "branch 'feat/x' set up to track 'origin/feat/x'.\n")


@pytest.mark.parametrize("command,output,path,commits", [
    # Moving onto a branch, by the arguments alone or as git reports it.
    ("git checkout -b feat/x", None, ("feat/x",), ()),
    ("git switch -c fix/y", "Switched to a new branch 'fix/y'\n", ("fix/y",), ()),
    ("git switch feat/x", None, ("feat/x",), ()),
    ("git checkout feat/x", "Switched to branch 'feat/x'\n", ("feat/x",), ()),
    ("git -C /r checkout -b 'fix/quoted'", None, ("fix/quoted",), ()),
    # What git prints after a commit, a status, a push, a show-current.
    ("git commit -am 'Add x'", "[feat/x 1a2b3c4] Add x\n 1 file changed\n", ("feat/x",),
     ("1a2b3c4",)),
    ("git commit -m init", "[feat/z (root-commit) abcdef1] init\n", ("feat/z",), ("abcdef1",)),
    ("git commit -m wip", "[detached HEAD 1234567] wip\n", (), ("1234567",)),
    ("git status", "On branch feat/s\nnothing to commit, working tree clean\n", ("feat/s",), ()),
    ("git push -u origin feat/x", PUSH, ("feat/x",), ()),
    ("git push", "To /tmp/r.git\n   1a2b3c4..5d6e7f8  feat/y -> feat/y\n", ("feat/y",),
     ("5d6e7f8",)),
    ("git push origin HEAD:feat/h", None, ("feat/h",), ()),
    ("git branch --show-current", "feat/cur\n", ("feat/cur",), ()),
    # One command line, several moves: the order they ran in, the last one where it stayed.
    ("git checkout -b feat/x && git add . && git commit -m 'a; b' && git push -u origin feat/x"
     " && git checkout main",
     "Switched to a new branch 'feat/x'\n[feat/x 9f8e7d6] a; b\n" + PUSH
     + "Switched to branch 'main'\n", ("feat/x", "main"), ("9f8e7d6",)),
    # Naming a branch is not being on it.
    ("git log --oneline main..feat/x", "1a2b3c4 Add x\n", (), ()),
    ("git diff origin/main", "diff --git a/x b/x\n", (), ()),
    ("git diff --stat origin/main feat/other", "", (), ()),
    ("git branch feat/later", "", (), ()),
    ("git fetch origin feat/x", "", (), ()),
    ("git merge feat/x", "Updating 1a2b3c4..5d6e7f8\nFast-forward\n", (), ()),
    ("git push origin --delete feat/x", " - [deleted]         feat/x\n", (), ()),
    ("git push origin v1.2.0", None, (), ()),
    ("git checkout -- app.py", None, (), ()),
    ("git checkout app.py", "Updated 1 path from the index\n", (), ()),
    ("git checkout feat/q", None, (), ()),  # a branch or a file: git's answer is needed
    ("cat notes.txt", "On branch feat/x\n[feat/x 1a2b3c4] x\n", (), ()),  # not git's output
])
def test_what_a_shell_call_says_about_the_branch(command: str, output: str | None,
                                                 path: tuple[str, ...],
                                                 commits: tuple[str, ...]) -> None:
    got = shell_git(command, output)
    assert (got.path, got.commits) == (path, commits)
    assert got.branch == (path[-1] if path else None)


def _sh(command: str) -> ToolUse:
    return ToolUse(kind="shell", name="run_shell_command", command=command, exit_code=0,
                   is_error=False, test_outcome=None, files=())


def _edit(path: str) -> ToolUse:
    return ToolUse(kind="edit", name="replace", command=None, exit_code=None, is_error=False,
                   test_outcome=None, files=(path,))


def _session(agent: str, sid: str, steps: list[tuple[str, str | None, tuple[ToolUse, ...]]],
             recorded: str | None = None, start_h: int = 10) -> Session:
    """Events one minute apart (a step whose text is "+3h" starts over three hours later): each
    step is (text, a branch, its tool calls); user turns have text. The branch is the one the
    agent recorded when `recorded` is given (Claude Code, Codex), else the one its shell's git
    output showed (Gemini CLI, OpenCode: the adapter's `shell_branches`)."""
    events = []
    hour, minute = start_h, 0
    for n, (text, branch, tools) in enumerate(steps):
        if text == "+3h":
            hour, minute, text = hour + 4, 0, "carry on with the parser please"
        minute += 1
        events.append(Event(event_id=f"{sid}-{n}", seq=n, ts=f"2026-03-02T{hour:02d}:{minute:02d}:00Z",
                            role="user" if text else "assistant", text=text,
                            branch=branch if recorded else None, tools=tools,
                            shown_branches=(branch,) if branch and not recorded else ()))
    return Session(agent=agent, session_id=sid, branch=recorded, events=tuple(events))


KNOWN = frozenset({"app/parser.py", "app/lexer.py", "README.md"})


def test_a_session_that_pushed_a_branch_worked_on_it_even_after_going_back_to_main() -> None:
    # Gemini CLI: the adapter set each event's branch from its shell output (none recorded).
    s = _session("gemini-cli", "g1", [
        ("add a tokenizer to the parser", None, ()),
        ("", None, (_edit("app/parser.py"),)),
        ("", "feat/x", (_sh("git checkout -b feat/x && git commit -am 'Add tokenizer'"),)),
        ("", "feat/x", (_sh("git push -u origin feat/x"),)),
        ("", "main", (_sh("git checkout main"),)),
        ("+3h", None, ()),
        ("", None, (_edit("app/parser.py"),)),
    ])
    first, second = windows_of(s, KNOWN, {})
    assert first.branch == "feat/x"
    assert second.cut == "pause" and second.branch == "main"  # the checkout ended feat/x


def test_commands_that_only_name_branches_leave_a_window_without_one() -> None:
    s = _session("opencode", "o1", [
        ("compare feat/x with main", None, ()),
        ("", None, (_sh("git log --oneline main..feat/x"),)),
        ("", None, (_sh("git diff origin/main"),)),
        ("", None, (_sh("git branch feat/later && git fetch origin feat/y"),)),
    ])
    [w] = windows_of(s, KNOWN, {})
    assert w.branch is None


def test_the_recorded_branch_is_kept_and_commands_can_move_it_on() -> None:
    # Claude Code records gitBranch on every record: mentions do not change it ...
    s = _session("claude-code", "c1", [
        ("review the lexer", "feat/lexer", ()),
        ("", "feat/lexer", (_sh("git log main..feat/other && git branch feat/later"),)),
    ], recorded="feat/lexer")
    assert [w.branch for w in windows_of(s, KNOWN, {})] == ["feat/lexer"]
    # ... a checkout -b does, and a recorded value restated on every record does not undo it.
    s = _session("claude-code", "c2", [
        ("start the parser rewrite", "main", ()),
        ("", "main", (_sh("git checkout -b feat/parser"), _edit("app/parser.py"))),
        ("", "main", (_edit("app/parser.py"),)),
        ("+3h", "main", ()),
        ("", "main", (_edit("app/lexer.py"),)),
    ], recorded="main")
    assert [w.branch for w in windows_of(s, KNOWN, {})] == ["feat/parser", "feat/parser"]


def test_a_window_only_looking_around_on_a_branch_did_not_work_on_it() -> None:
    # `git status` on the jobs branch while only reading about /orders; then work on the branch.
    s = _session("gemini-cli", "g3", [
        ("before I touch the jobs branch: how slow is the orders query", None, ()),
        ("", "feat/jobs", (_sh("git status"),)),
        ("+3h", None, ()),
        ("", None, (_edit("app/parser.py"),)),
        ("", "feat/jobs", (_sh("git status"),)),
    ])
    assert [w.branch for w in windows_of(s, KNOWN, {})] == [None, "feat/jobs"]


def test_printed_commit_shas_are_the_windows_commits() -> None:
    ev = Event(event_id="e1", seq=1, ts="2026-03-02T10:01:00Z", role="assistant", text="",
               branch=None, tools=(_sh("git commit -am 'Add x'"),),
               shown_branches=("feat/x",), shown_commits=("1a2b3c4",))
    s = Session(agent="opencode", session_id="o9", branch=None, events=(
        Event(event_id="e0", seq=0, ts="2026-03-02T10:00:00Z", role="user", text="add x",
              branch=None, tools=()), ev))
    full = "1a2b3c4" + "d" * 33
    assert "1a2b3c4" in sha_candidates([s])
    [w] = windows_of(s, KNOWN, {"1a2b3c4": full})
    assert w.commits == frozenset({full}) and w.branch == "feat/x"


def test_shell_branch_evidence_links_a_gemini_window_to_the_work_on_that_branch() -> None:
    # A Claude session recorded on feat/x; a Gemini session later pushed feat/x. The branch is
    # the link between them (a different branch would count against).
    claude = _session("claude-code", "c1", [
        ("write the lexer for the new parser", "feat/x", ()),
        ("", "feat/x", (_edit("app/lexer.py"),)),
    ], recorded="feat/x", start_h=8)
    gemini = _session("gemini-cli", "g1", [
        ("fix the failing tokenizer test", None, ()),
        ("", None, (_edit("README.md"),)),
        ("", "feat/x", (_sh("git commit -am 'Fix tokenizer test' && git push"),)),
    ], start_h=12)
    other = _session("gemini-cli", "g2", [
        ("fix the failing tokenizer test", None, ()),
        ("", None, (_edit("README.md"),)),
        ("", None, (_sh("git log main..feat/x && git diff origin/main"),)),
    ], start_h=12)
    r = Resolver([])
    [cw] = windows_of(claude, KNOWN, {})
    cid = r.add(cw)[0]
    [gw] = windows_of(gemini, KNOWN, {})
    [ow] = windows_of(other, KNOWN, {})
    _, parts = score(gw, r.by_id[cid], r.rarity())
    assert gw.branch == "feat/x" and parts["link"] == 1.0
    _, parts = score(ow, r.by_id[cid], r.rarity())
    assert ow.branch is None and parts["link"] == 0.0
