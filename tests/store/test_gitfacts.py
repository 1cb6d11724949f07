"""Commit facts read back from real repositories: missing commits, branch names."""

from __future__ import annotations

from pathlib import Path

from looma_git.store.gitfacts import list_commits
from tests.helpers import commit_file, git


def test_one_missing_commit_does_not_hide_the_others(repo: Path) -> None:
    a = commit_file(repo, "x.txt", "1", "one")
    b = commit_file(repo, "x.txt", "2", "two")
    gone = "0123456789abcdef0123456789abcdef01234567"  # a teammate's unpushed commit
    got = list_commits(repo, revs=(a, gone, b), no_walk=True)
    assert sorted(c.sha for c in got) == sorted([a, b])
    assert {c.subject for c in got} == {"one", "two"}
    assert list_commits(repo, revs=(gone,), no_walk=True) == []


def test_a_commit_named_by_sha_reports_its_branch_not_its_sha(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feat/session-ttl")
    a = commit_file(repo, "ttl.py", "1", "ttl one")
    b = commit_file(repo, "ttl.py", "2", "ttl two")
    git(repo, "checkout", "-q", "main")
    m = commit_file(repo, "main.txt", "m", "on main")
    got = {c.sha: c.ref for c in list_commits(repo, revs=(a, b, m), no_walk=True)}
    # `git log --source --no-walk SHA` says the commit was reached from SHA itself.
    assert got == {a: "refs/heads/feat/session-ttl", b: "refs/heads/feat/session-ttl",
                   m: "refs/heads/main"}
    git(repo, "checkout", "-q", "--detach", m)
    git(repo, "branch", "-q", "-D", "feat/session-ttl")
    orphan = {c.sha: c.ref for c in list_commits(repo, revs=(b,), no_walk=True)}
    assert orphan == {b: ""}  # no branch holds it: no branch, rather than a sha


def test_a_rebased_commit_keeps_its_author_date_beside_the_new_commit_date(repo: Path) -> None:
    import os

    (repo / "r.py").write_text("x = 1\n")
    git(repo, "add", "r.py")
    env = dict(os.environ, GIT_AUTHOR_DATE="2023-03-26T15:17:18+02:00",
               GIT_COMMITTER_DATE="2023-07-02T15:52:32+02:00")
    git(repo, "commit", "-q", "-m", "fix: overflow\n\nthe body, two lines\nof it", env=env)
    [c] = list_commits(repo, revs=("HEAD",), limit=1)
    assert (c.authored, c.ts) == ("2023-03-26T13:17:18Z", "2023-07-02T13:52:32Z")
    assert c.subject == "fix: overflow" and c.body == "the body, two lines\nof it"
    assert c.files == ("r.py",)
