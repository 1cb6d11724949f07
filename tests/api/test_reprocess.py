"""`looma reprocess` is deterministic and publishes nothing when nothing is new."""

from __future__ import annotations

import json

from tests.helpers import cli as looma
from tests.helpers import git


def test_reprocess_twice_is_byte_identical_and_publishes_nothing(scenario) -> None:
    repo, env, _ = scenario
    head = git(repo, "rev-parse", "refs/looma/ledger")
    notes = git(repo, "rev-parse", "refs/notes/looma")
    first = json.loads(looma(repo, "reprocess", "--json", env=env).stdout)
    work1 = looma(repo, "work", "--json", env=env).stdout
    second = json.loads(looma(repo, "reprocess", "--json", env=env).stdout)
    work2 = looma(repo, "work", "--json", env=env).stdout
    assert first["ops_written"] == 0 and second["ops_written"] == 0
    assert work1 == work2
    assert git(repo, "rev-parse", "refs/looma/ledger") == head
    assert git(repo, "rev-parse", "refs/notes/looma") == notes
    assert looma(repo, "ingest", "--json", env=env).stdout  # nothing new: still no ops
    assert git(repo, "rev-parse", "refs/looma/ledger") == head
