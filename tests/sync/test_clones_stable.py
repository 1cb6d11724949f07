"""Clones with different local sessions converge after syncing and then write nothing more:
shared fields are derived in the fold from every clone's observations (DESIGN §4.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import cli as looma
from tests.helpers import git
from tests.sync.teammates import FILES, claude, clone, remote, shared


@pytest.mark.slow
def test_two_clones_with_disjoint_sessions_converge_and_then_write_nothing(tmp_path: Path
                                                                           ) -> None:
    bare = remote(tmp_path, FILES, [
        ("billing/csv.py", "def stream():\n    yield from rows\n",
         "Stream the invoice CSV export", "2026-04-01T11:00:00Z"),
        ("api/retry.py", "BACKOFF = 2\n", "Reset the webhook retry backoff",
         "2026-04-02T11:00:00Z"),
        ("billing/invoice.py", "header = True\n", "Write the CSV header first",
         "2026-04-03T11:00:00Z")])
    a, env_a = clone(tmp_path, bare, "a")
    b, env_b = clone(tmp_path, bare, "b")
    # Disjoint sessions: A saw the start of the CSV work and the retry fix, B the follow-ups.
    claude(Path(env_a["HOME"]), a, "s-a1", [
        ("2026-04-01T09:00:00.000Z", "Stream the invoice CSV export", ["billing/csv.py"]),
        ("2026-04-01T09:30:00.000Z", "and the invoice totals", ["billing/invoice.py",
                                                                 "billing/csv.py"])])
    claude(Path(env_a["HOME"]), a, "s-a2", [
        ("2026-04-02T09:00:00.000Z", "The webhook retries are broken: backoff never resets",
         ["api/retry.py"])])
    claude(Path(env_b["HOME"]), b, "s-b1", [
        ("2026-04-03T09:00:00.000Z", "continue the streaming CSV export: header row",
         ["billing/csv.py", "billing/invoice.py"])])
    claude(Path(env_b["HOME"]), b, "s-b2", [
        ("2026-04-02T15:00:00.000Z", "cap webhook retry attempts", ["api/retry.py",
                                                                    "api/webhooks.py"])])
    looma(a, "ingest", env=env_a)
    looma(b, "ingest", env=env_b)
    for _round in range(3):
        for repo, env in ((a, env_a), (b, env_b)):
            looma(repo, "sync", env=env)
            looma(repo, "reprocess", env=env)
    for repo, env in ((a, env_a), (b, env_b)):
        looma(repo, "sync", env=env)
    heads = {str(r): git(r, "rev-parse", "refs/looma/ledger") for r in (a, b)}
    for repo, env in ((a, env_a), (b, env_b)):
        out = json.loads(looma(repo, "reprocess", "--json", env=env).stdout)
        assert out["ops_written"] == 0, (repo.name, out)
    assert {str(r): git(r, "rev-parse", "refs/looma/ledger") for r in (a, b)} == heads
    wa, wb = shared(a, env_a), shared(b, env_b)
    assert wa and wa == wb
    # Both clones' sessions count on every shared WorkItem they worked on.
    sessions = {s["id"] for w in wa for s in w["sessions"]}
    assert {"s-a1", "s-a2", "s-b1", "s-b2"} <= sessions
