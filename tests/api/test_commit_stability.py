"""An ordinary commit touches only the WorkItem it links (issue 13, "the model must be stable"):
the link step writes no op on any other WorkItem, and no WorkItem's shared fields move."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from looma_git.gitrepo import find_repo
from looma_git.ledger.ops import Op
from looma_git.ledger.validate import parse_op_file
from tests.api.scenario_env import by_files, work
from tests.helpers import git


def _new_ops(repo: Path, env: dict[str, str], before: str) -> list[Op]:
    """The ops the ledger gained since commit `before` of refs/looma/ledger, parsed."""
    after = git(repo, "rev-parse", "refs/looma/ledger", env=env)
    if after == before:
        return []
    added = git(repo, "diff", "--name-only", "--diff-filter=A", before, after, "--", "ops",
                env=env).split()
    out = []
    for path in added:
        blob = git(repo, "rev-parse", f"{after}:{path}", env=env)
        data = subprocess.run(["git", "cat-file", "blob", blob], cwd=repo, env=env,
                              capture_output=True, check=True).stdout
        parsed = parse_op_file(path, blob, data)
        assert isinstance(parsed, Op), (path, parsed)
        out.append(parsed)
    return out


def _commit(repo: Path, env: dict[str, str], path: str, line: str, msg: str, date: str) -> str:
    with (repo / path).open("a") as fh:
        fh.write(line)
    e = dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(repo, "add", path, env=e)
    git(repo, "commit", "-q", "-m", msg, env=e)
    return git(repo, "rev-parse", "HEAD", env=e)


def _shared(items: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {w["id"]: (w["title"], w["kind"], w.get("summary"), w.get("confidence"),
                      tuple(w["commits"])) for w in items}


def test_a_commit_writes_ops_only_for_the_workitem_it_links(scenario, monkeypatch) -> None:
    from looma_git.api.linking import link_commits

    repo, env, _ = scenario
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    paths = find_repo(repo)
    items = work(repo, env)
    limiter = by_files(items, "api/ratelimit.py")
    before = git(repo, "rev-parse", "refs/looma/ledger", env=env)

    sha = _commit(repo, env, "api/ratelimit.py",
                  "\nBURST_DEFAULT = 20  # tokens allowed above the steady rate\n",
                  "Make the rate limiter burst size configurable", "2026-03-13T11:40:00Z")
    link_commits(paths, [sha], by="hook")
    ops = _new_ops(repo, env, before)
    assert [(op.op, op.target.id, op.payload.get("workitem")) for op in ops] == [
        ("commit.link", sha, limiter["id"])]
    after = work(repo, env)
    others = {k: v for k, v in _shared(after).items() if k != limiter["id"]}
    assert others == {k: v for k, v in _shared(items).items() if k != limiter["id"]}
    mine = next(w for w in after if w["id"] == limiter["id"])
    assert (mine["title"], mine["kind"]) == (limiter["title"], limiter["kind"])

    # A second, unrelated commit (a README fix, which no effort owns) writes nothing at all
    # and moves nothing back.
    head = git(repo, "rev-parse", "refs/looma/ledger", env=env)
    other = _commit(repo, env, "README.md", "\nSee docs/ for details.\n", "Fix typo in README",
                    "2026-03-14T09:00:00Z")
    link_commits(paths, [other], by="hook")
    assert _new_ops(repo, env, head) == []
    assert _shared(work(repo, env)) == _shared(after)
