"""Link quality through the installed hooks: new commits on the scenario, linked by the drainer."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.api.scenario_env import build
from tests.helpers import cli, git
from tests.hooks.util import wait_for

# New commits made through git after `looma hooks install`: (label, workitem or None, date,
# file, appended line, message). Dates sit in the efforts' working hours (the linker weighs
# time proximity); the chores touch files no effort owns.
NEW = [
    ("C4", "C", "2026-03-06T15:10:00Z", "auth/session.py",
     "# retry the refresh once when the token is stale\n",
     "Retry session refresh once on a stale token"),
    ("chore-typo", None, "2026-03-14T09:00:00Z", "README.md", "\nSee docs/ for details.\n",
     "Fix typo in README"),
    ("C5", "C", "2026-03-06T15:20:00Z", "tests/test_session.py",
     "\n\ndef test_stale_token_retry():\n    assert True\n",
     "Cover the stale-token retry in the session tests"),
    ("B5", "B", "2026-03-13T11:40:00Z", "api/ratelimit.py",
     "\nBURST_DEFAULT = 20  # tokens allowed above the steady rate\n",
     "Make the rate limiter burst size configurable"),
    ("chore-bump", None, "2026-03-14T09:10:00Z", "requirements.txt", "urllib3==2.2.2\n",
     "Bump urllib3 to 2.2.2"),
]


def _commit(repo: Path, env: dict[str, str], date: str, path: str, line: str, msg: str) -> str:
    with (repo / path).open("a") as fh:
        fh.write(line)
    e = dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(repo, "add", path, env=e)
    git(repo, "commit", "-q", "-m", msg, env=e)  # the real post-commit shim fires
    return git(repo, "rev-parse", "HEAD", env=e)


def _hooks_idle(repo: Path, env: dict[str, str]) -> dict[str, Any] | None:
    st = json.loads(cli(repo, "hooks", "status", "--json", env=env).stdout)
    done = st["queue_length"] == 0 and not st["drainer_running"] and st["last_drain"]
    return st if done else None


def _link_prf(repo: Path, env: dict[str, str], truth: dict[str, Any],
              extra: set[tuple[str, str]]) -> tuple[float, float, set, set]:
    """Commit-link precision/recall; each WorkItem stands for the truth key most of its
    sessions carry (as tests/bench/quality.py does)."""
    work = json.loads(cli(repo, "work", "--json", env=env).stdout)["workitems"]
    true_of = {f"{s['agent']}:{s['id']}": wi["key"] for wi in truth["workitems"]
               for s in wi["sessions"]}
    key_of = {}
    for w in work:
        keys = [true_of[k] for s in w["sessions"]
                if (k := f"{s['agent']}:{s['id']}") in true_of]
        if keys:
            key_of[w["id"]] = max(sorted(set(keys)), key=keys.count)
    truth_links = {(sha, wi["key"]) for wi in truth["workitems"] for sha in wi["commits"]}
    truth_links |= extra
    pred = {(sha, key_of.get(w["id"], w["id"])) for w in work for sha in w["commits"]}
    tp = len(truth_links & pred)
    return (tp / len(pred) if pred else 1.0, tp / len(truth_links), pred, truth_links)


@pytest.mark.slow
def test_commits_made_through_the_hooks_link_like_backfill(tmp_path: Path) -> None:
    repo, env, truth = build(tmp_path)
    env = dict(env, GIT_AUTHOR_NAME="Ada Byron", GIT_AUTHOR_EMAIL="ada@example.com",
               GIT_COMMITTER_NAME="Ada Byron", GIT_COMMITTER_EMAIL="ada@example.com")
    env.pop("LOOMA_HOOK_QUEUE", None)
    cli(repo, "hooks", "install", env=env)
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "main"

    made: dict[str, tuple[str, str | None]] = {}
    for label, wi, date, path, line, msg in NEW:
        made[label] = (_commit(repo, env, date, path, line, msg), wi)
    new_shas = {sha for sha, _ in made.values()}

    # The drainer runs detached; the deadline only turns a hang into a readable failure.
    st = wait_for(lambda: _hooks_idle(repo, env), "the hook queue to drain", deadline_s=180)
    assert st["last_error"] is None, st["last_error"]
    log = (repo / ".git" / "looma" / "hooks.log").read_text()
    assert "link: ok" in log, log[-2000:]

    extra = {(sha, wi) for sha, wi in made.values() if wi}
    precision, recall, pred, truth_links = _link_prf(repo, env, truth, extra)
    assert precision >= 0.9, (precision, sorted(pred - truth_links))
    assert recall >= 0.85, (recall, sorted(truth_links - pred))
    # Every new effort commit is linked to its effort, neither chore to anything.
    for label, (sha, wi) in made.items():
        got = {k for s, k in pred if s == sha}
        assert got == ({wi} if wi else set()), (label, got)

    # Visible with plain git: the new links are notes on the new commits, by the hook.
    shown = git(repo, "log", "--notes=looma", "--format=%H%n%N%x00", "-n", "8", env=env)
    notes = {rec.strip().split("\n", 1)[0]: rec for rec in shown.split("\x00") if rec.strip()}
    for label, (sha, wi) in made.items():
        if wi:
            assert "by: hook" in notes[sha] and "workitem: wi_" in notes[sha], (label, notes[sha])
        else:
            assert "looma-note" not in notes[sha], (label, notes[sha])
            assert git(repo, "notes", "--ref=looma", "show", sha, check=False, env=env) == ""
    assert new_shas <= set(notes)
    assert git(repo, "status", "--porcelain", env=env) == ""
    assert os.path.exists(repo / ".git" / "hooks" / "post-commit")
