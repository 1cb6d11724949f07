"""The drain links a commit as a full rebuild would: its incremental link step (no fold loaded
when nothing links, only the WorkItems sharing a file, the branch or a writer) against
`looma reprocess` on the same history, a user unlink included."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from looma_git.gitrepo import find_repo
from looma_git.store import fold_cache
from tests.api.scenario_env import build
from tests.helpers import cli, git
from tests.hooks.test_link_quality import NEW


def _commit(repo: Path, env: dict[str, str], date: str, path: str, line: str, msg: str) -> str:
    with (repo / path).open("a") as fh:
        fh.write(line)
    e = dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(repo, "add", path, env=e)
    git(repo, "commit", "-q", "-m", msg, env=e)  # no hooks installed: nothing runs
    return git(repo, "rev-parse", "HEAD", env=e)


def _links(repo: Path, env: dict[str, str], shas: set[str]) -> set[tuple[str, str]]:
    work = json.loads(cli(repo, "work", "--json", env=env).stdout)["workitems"]
    return {(sha, w["id"]) for w in work for sha in w["commits"] if sha in shas}


def _drain(repo: Path, env: dict[str, str], shas: list[str]) -> dict[str, Any]:
    state = repo / ".git" / "looma"
    (state / "queue").write_text("".join(f"{sha} 1773000000\n" for sha in shas))
    out = json.loads(cli(repo, "hook", "drain", "-v", env=env).stdout)
    assert out["commits"] == len(shas), out
    steps = {s["name"]: s for s in out["steps"]}
    assert all(s["status"] == "ok" for s in steps.values()), steps
    return steps


@pytest.mark.slow
def test_the_drains_links_are_the_full_rebuilds(tmp_path: Path) -> None:
    repo, env, _ = build(tmp_path / "s")
    env = dict(env, GIT_AUTHOR_NAME="Ada Byron", GIT_AUTHOR_EMAIL="ada@example.com",
               GIT_COMMITTER_NAME="Ada Byron", GIT_COMMITTER_EMAIL="ada@example.com")
    env.pop("LOOMA_HOOK_QUEUE", None)
    shas = [_commit(repo, env, date, path, line, msg) for _, _, date, path, line, msg in NEW]
    root = repo.parent
    keep = tmp_path / "copy"
    shutil.copytree(root, keep, symlinks=True)  # sessions hold absolute paths: restored below

    # The drain: one pass, these commits queued; nothing of the history is re-read.
    _drain(repo, env, shas)
    drained = _links(repo, env, set(shas))
    assert len({sha for sha, _ in drained}) >= 3, drained  # the effort commits link

    # The same history rebuilt in full (a fresh copy: the drain's ops are not there).
    shutil.rmtree(root)
    shutil.copytree(keep, root, symlinks=True)
    cli(repo, "reprocess", env=env)
    assert _links(repo, env, set(shas)) == drained

    # A user unlink of one of them, then the commit queued again (an amend's replay, a second
    # drain): the drain honours it from the fold cache's facts as the rebuild does.
    sha, wi = sorted(drained)[0]
    cli(repo, "unlink", sha, wi, env=env)
    paths = find_repo(repo)
    head = git(repo, "rev-parse", "refs/looma/ledger").encode()
    facts = fold_cache.load_facts(paths.state_dir, head, [sha])
    assert facts is not None and facts[sha].unlinked == (wi,)
    _drain(repo, env, [sha])
    after_drain = _links(repo, env, set(shas))
    assert (sha, wi) not in after_drain
    cli(repo, "reprocess", env=env)
    assert _links(repo, env, set(shas)) == after_drain


def test_a_commit_that_links_to_nothing_loads_no_fold(tmp_path: Path, monkeypatch) -> None:
    """The link step reads the ledger's facts of the commit from the fold cache's first part;
    the fold itself (whose size grows with the history) is loaded only to write a link."""
    from looma_git.api import linking
    from looma_git.pipeline import linking as pipeline_linking
    from looma_git.store import ledger_ref

    repo, env, _ = build(tmp_path / "s")
    # An effort's file, months after its work, nothing any session wrote: scored, not linked.
    sha = _commit(repo, env, "2026-09-14T09:00:00Z", "api/ratelimit.py", "\n# (reformatted)\n",
                  "Reformat comments")
    paths = find_repo(repo)
    cli(repo, "status", env=env)  # the fold cache at the ledger's head
    head = git(repo, "rev-parse", "refs/looma/ledger").encode()
    assert fold_cache.load_facts(paths.state_dir, head, [sha]) == {sha: fold_cache.CommitFacts()}
    assert fold_cache.load_facts(paths.state_dir, b"0" * 40, [sha]) is None  # another head

    def no_fold(*_: Any, **__: Any) -> Any:
        raise AssertionError("the fold was loaded")

    scored: list[int] = []
    real = pipeline_linking.link_commits

    def counting(commits: Any, targets: Any, *args: Any) -> Any:
        scored.append(len(targets))
        return real(commits, targets, *args)

    monkeypatch.setattr(ledger_ref.LedgerStore, "folded", no_fold)
    monkeypatch.setattr(fold_cache, "load", no_fold)
    monkeypatch.setattr(pipeline_linking, "link_commits", counting)
    monkeypatch.chdir(repo)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert linking.link_new_commits(paths, [sha]) == {}
    assert scored and scored[0] >= 1  # it was scored against the rate limiter's WorkItem
