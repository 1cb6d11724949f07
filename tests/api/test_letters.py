"""A correction letter refers only to the listing the user saw; stale letters are refused
with the ids they meant, and nothing is written."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import cli, git


def _resume(repo, env, goal: str) -> dict:
    return json.loads(cli(repo, "resume", goal, "--json", env=env).stdout)


def test_letters_name_the_last_listing_only(scenario) -> None:
    repo, env, _ = scenario
    amb = _resume(repo, env, "search")
    assert amb["state"] == "ambiguous"
    a, b = (c["id"] for c in amb["candidates"][:2])
    # Letters resolve right after the listing (resume --work does not replace it) ...
    picked = json.loads(cli(repo, "resume", "--work", "B", "--json", env=env).stdout)
    assert picked["candidates"][0]["id"] == b
    # ... but any other resume replaces the listing: the old letters are refused.
    assert _resume(repo, env, "oauth login")["state"] == "confident"
    head = git(repo, "rev-parse", "refs/looma/ledger")
    proc = cli(repo, "correct", "merge", "A", "B", env=env, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "stale" in proc.stderr and a in proc.stderr and b in proc.stderr
    assert git(repo, "rev-parse", "refs/looma/ledger") == head  # nothing merged


def test_letters_are_stale_once_the_work_model_changed(scenario) -> None:
    repo, env, _ = scenario
    amb = _resume(repo, env, "search")
    a = amb["candidates"][0]["id"]
    cli(repo, "correct", "rename", "A", "Search indexing", env=env)  # fresh: allowed
    head = git(repo, "rev-parse", "refs/looma/ledger")
    proc = cli(repo, "correct", "merge", "A", "B", "--json", env=env, check=False)
    assert proc.returncode == 2
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == "stale_letter" and a in err["hint"]
    assert git(repo, "rev-parse", "refs/looma/ledger") == head


def test_a_letter_from_another_terminal_is_refused(scenario) -> None:
    repo, env, _ = scenario
    # Another terminal (a new session, as an agent's process or a second shell would be).
    subprocess.run([sys.executable, "-m", "looma_git", "resume", "search"], cwd=repo, env=env,
                   check=True, capture_output=True, start_new_session=True)
    proc = cli(repo, "correct", "merge", "A", "B", env=env, check=False)
    assert proc.returncode == 2 and "another terminal" in proc.stderr, proc.stderr
    proc = cli(repo, "correct", "rename", "Z", "x", env=env, check=False)
    assert proc.returncode == 2


def test_unknown_letter_lists_what_was_shown(scenario) -> None:
    repo, env, _ = scenario
    _resume(repo, env, "search")
    proc = cli(repo, "correct", "rename", "Q", "x", env=env, check=False)
    assert proc.returncode == 7 and "has no letter 'Q'" in proc.stderr and "A = wi_" in proc.stderr
