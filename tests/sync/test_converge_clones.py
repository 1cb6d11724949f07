"""Two clones that each made a WorkItem for one effort end with one after syncing (a system
merge, pipeline/converge.py); two different efforts, even sharing a file, stay apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli as looma
from tests.sync.teammates import FILES, claude, clone, remote, shared


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Clone A streamed the CSV export and fixed webhook retries; clone B continued the CSV
    export and added usage lines to the invoice (sharing billing/invoice.py with it). Each
    ingests its own sessions, then they sync, reprocess and sync again."""
    tmp = tmp_path_factory.mktemp("converge")
    # Each teammate committed their own work: each clone publishes its WorkItems before it
    # sees the other's.
    bare = remote(tmp, {**FILES, "billing/usage.py": "USAGE = []\n"}, [
        ("billing/csv.py", "def stream():\n    yield from rows\n",
         "Stream the invoice CSV export", "2026-04-01T11:00:00Z"),
        ("api/retry.py", "BACKOFF = 2\n", "Reset the webhook retry backoff",
         "2026-04-02T11:00:00Z"),
        ("billing/csv.py", "HEADER = True\n", "Write the CSV header row first",
         "2026-04-03T11:00:00Z"),
        ("billing/usage.py", "def lines():\n    return USAGE\n",
         "Add metered usage lines to the PDF", "2026-04-06T11:00:00Z")])
    a, env_a = clone(tmp, bare, "a")
    b, env_b = clone(tmp, bare, "b")
    claude(Path(env_a["HOME"]), a, "s-a1", [
        ("2026-04-01T09:00:00.000Z", "Stream the invoice CSV export row by row",
         ["billing/csv.py"]),
        ("2026-04-01T09:30:00.000Z", "the CSV export needs the invoice totals too",
         ["billing/csv.py", "billing/invoice.py"])])
    claude(Path(env_a["HOME"]), a, "s-a2", [
        ("2026-04-02T09:00:00.000Z", "The webhook retries are broken: backoff never resets",
         ["api/retry.py", "api/webhooks.py"])])
    claude(Path(env_b["HOME"]), b, "s-b1", [
        ("2026-04-03T09:00:00.000Z", "continue the CSV export: stream the header row",
         ["billing/csv.py"])])
    claude(Path(env_b["HOME"]), b, "s-b2", [
        ("2026-04-06T09:00:00.000Z", "add metered usage lines to the PDF",
         ["billing/usage.py", "billing/invoice.py"])])
    looma(a, "ingest", env=env_a)
    looma(b, "ingest", env=env_b)
    looma(a, "sync", env=env_a)
    looma(b, "sync", env=env_b)
    merged = json.loads(looma(b, "reprocess", "--json", env=env_b).stdout)
    looma(b, "sync", env=env_b)
    looma(a, "sync", env=env_a)
    after = json.loads(looma(a, "reprocess", "--json", env=env_a).stdout)
    return {"a": shared(a, env_a), "b": shared(b, env_b), "merged": merged,
            "after": after}


def _by_sessions(items: list[dict[str, Any]]) -> dict[frozenset[str], dict[str, Any]]:
    return {frozenset(s["id"] for s in w["sessions"]): w for w in items}


def test_one_effort_made_on_two_clones_becomes_one_workitem(synced: dict[str, Any]) -> None:
    assert synced["merged"]["ops"].get("workitem.merge") == 1, synced["merged"]
    assert synced["a"] == synced["b"]
    csv = [w for w in synced["a"] if {"s-a1", "s-b1"} & {s["id"] for s in w["sessions"]}]
    assert len(csv) == 1, csv
    assert {s["id"] for s in csv[0]["sessions"]} == {"s-a1", "s-b1"}
    # A system merge joins evidence, it confirms nothing: no pinned confidence.
    assert csv[0]["confidence"] < 1.0
    # Converged: the other clone, seeing the merge, has nothing to add.
    assert synced["after"]["ops_written"] == 0, synced["after"]


def test_different_efforts_on_two_clones_stay_apart(synced: dict[str, Any]) -> None:
    """The usage work shares billing/invoice.py with the CSV export; the webhook fix shares
    nothing with anything: three WorkItems."""
    groups = _by_sessions(synced["a"])
    assert set(groups) == {frozenset({"s-a1", "s-b1"}), frozenset({"s-a2"}),
                           frozenset({"s-b2"})}, list(groups)
