"""With hooks installed, an ordinary commit touches only the WorkItems it links to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.api.scenario_env import build
from tests.helpers import cli, git
from tests.hooks.util import wait_for

FIELDS = ("title", "kind", "summary", "confidence", "band", "status")


def _hooks_idle(repo: Path, env: dict[str, str]) -> dict[str, Any] | None:
    st = json.loads(cli(repo, "hooks", "status", "--json", env=env).stdout)
    done = st["queue_length"] == 0 and not st["drainer_running"] and st["last_drain"]
    return st if done else None


def _work(repo: Path, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    items = json.loads(cli(repo, "work", "--json", env=env).stdout)["workitems"]
    return {w["id"]: w for w in items}


def _new_ops(repo: Path, before: str, env: dict[str, str]) -> list[str]:
    """The ledger op files written since `before` (the ledger ref's old tip)."""
    names = git(repo, "diff", "--name-only", "--diff-filter=A", before, "refs/looma/ledger",
                env=env)
    return [git(repo, "show", f"refs/looma/ledger:{n}", env=env)
            for n in names.splitlines() if n.startswith("ops/")]


def _commit(repo: Path, env: dict[str, str], date: str, path: str, text: str, msg: str) -> str:
    with (repo / path).open("a") as fh:
        fh.write(text)
    e = dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(repo, "add", path, env=e)
    git(repo, "commit", "-q", "-m", msg, env=e)  # the installed post-commit hook fires
    wait_for(lambda: _hooks_idle(repo, env), "the hook queue to drain", deadline_s=180)
    return git(repo, "rev-parse", "HEAD", env=e)


@pytest.mark.slow
def test_an_ordinary_commit_rewrites_no_unrelated_workitem(tmp_path: Path) -> None:
    repo, env, _ = build(tmp_path)
    env.pop("LOOMA_HOOK_QUEUE", None)
    cli(repo, "hooks", "install", env=env)
    before = _work(repo, env)
    tip = git(repo, "rev-parse", "refs/looma/ledger", env=env)

    # A follow-up on the rate limiter, in its working hours, by this clone's user.
    sha = _commit(repo, env, "2026-03-13T11:40:00Z", "api/ratelimit.py",
                  "\nBURST_DEFAULT = 20  # tokens allowed above the steady rate\n",
                  "Make the rate limiter burst size configurable")
    after = _work(repo, env)
    ops = _new_ops(repo, tip, env)
    assert ops, "the commit was not linked at all"
    # Only link ops, each for the new commit; no WorkItem op.
    assert all("op: commit.link" in op and sha in op for op in ops), ops
    linked = {wid for wid, w in after.items() if sha in w["commits"]}
    assert len(linked) == 1, linked
    for wid, w in before.items():
        if wid in linked:
            # Its own title and kind hold too: it already had its creating commit.
            assert (after[wid]["title"], after[wid]["kind"]) == (w["title"], w["kind"])
            continue
        assert {f: after[wid][f] for f in FIELDS} == {f: w[f] for f in FIELDS}, wid

    # A second commit that implements nothing (a README typo) writes nothing at all.
    tip = git(repo, "rev-parse", "refs/looma/ledger", env=env)
    _commit(repo, env, "2026-03-14T09:00:00Z", "README.md", "\nSee docs/ for details.\n",
            "Fix typo in README")
    assert _new_ops(repo, tip, env) == []
    assert {w: {f: v[f] for f in FIELDS} for w, v in _work(repo, env).items()} == \
        {w: {f: v[f] for f in FIELDS} for w, v in after.items()}
