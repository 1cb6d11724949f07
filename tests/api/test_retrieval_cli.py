"""Read commands on the scenario: JSON contracts, hostile queries, budgets, cold and no-goal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.api.scenario_env import build
from tests.helpers import cli as looma


@pytest.fixture(scope="module")
def scen(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    for key in [k for k in os.environ if k.startswith(("GIT_", "XDG_"))]:
        mp.delenv(key)
    home = tmp_path_factory.mktemp("home")
    (home / ".gitconfig").write_text("[user]\n\tname = T\n\temail = t@example.com\n")
    mp.setenv("HOME", str(home))
    try:
        repo, env, truth = build(tmp_path_factory.mktemp("r"))
        yield repo, env, truth
    finally:
        mp.undo()


def j(repo: Path, env: dict[str, str], *args: str) -> dict:
    return json.loads(looma(repo, *args, "--json", env=env).stdout)


def test_work_json_contract(scen) -> None:
    repo, env, _ = scen
    out = j(repo, env, "work")
    for w in out["workitems"]:
        assert {"id", "title", "kind", "status", "lifecycle", "confidence", "band", "files",
                "commits", "sessions"} <= set(w)
        assert all({"agent", "id"} <= set(s) for s in w["sessions"])
    human = looma(repo, "work", env=env).stdout.splitlines()
    assert human and all("[conf " in line for line in human)


def test_resume_json_contract(scen) -> None:
    repo, env, _ = scen
    out = j(repo, env, "resume", "oauth login")
    assert out["state"] == "confident" and out["bundle"]
    b = out["bundle"]
    assert {"git", "decisions", "todos", "bugs", "commits", "sessions", "files",
            "overflow", "evidence_notice"} <= set(b)
    assert b["git"]["head"] and "dirty" in b["git"]
    amb = j(repo, env, "resume", "search")
    assert amb["state"] == "ambiguous" and amb["bundle"] is None
    assert [c["letter"] for c in amb["candidates"]][:2] == ["A", "B"]
    cold = j(repo, env, "resume", "kubernetes helm chart")
    assert cold["state"] == "cold" and cold["candidates"] == [] and cold["recent"]


def test_resume_budget_reports_overflow_and_keeps_protected(scen) -> None:
    repo, env, _ = scen
    full = j(repo, env, "resume", "oauth login")["bundle"]
    tiny = j(repo, env, "resume", "oauth login", "--budget", "200")["bundle"]
    assert tiny["todos"] == full["todos"] and tiny["decisions"] == full["decisions"]
    assert tiny["overflow"] or tiny["protected_over_budget"]
    text = looma(repo, "resume", "oauth login", "--budget", "200", env=env).stdout
    assert "overflow" in text


@pytest.mark.parametrize("query", ["what's", "k8s: deploy", "(x", "NOT safe", "c++", '"',
                                   "-", "title:", "AND"])
def test_hostile_queries(scen, query: str) -> None:
    repo, env, _ = scen
    for cmd in ("ask", "resume"):
        proc = looma(repo, cmd, query, env=env, check=False)
        assert proc.returncode == 0, (cmd, query, proc.stderr)


def test_resume_without_goal_and_by_letter(scen) -> None:
    repo, env, _ = scen
    out = j(repo, env, "resume")
    assert out["state"] in ("confident", "ambiguous") and out["candidates"]
    j(repo, env, "resume", "search")
    picked = j(repo, env, "resume", "--work", "B")
    assert picked["state"] == "confident" and picked["bundle"]


def test_ask_timeline_recall_status(scen) -> None:
    repo, env, _ = scen
    facts = j(repo, env, "ask", "why postgres instead of redis")["facts"]
    assert facts and all(f["status"] in ("confirmed", "unconfirmed") for f in facts)
    assert any(f["status"] == "confirmed" and f["band"] for f in facts)
    wid = j(repo, env, "work")["workitems"][0]["id"]
    tl = j(repo, env, "timeline", wid)
    kinds = {e["kind"] for e in tl["entries"]}
    assert {"op", "commit", "session"} <= kinds
    rec = j(repo, env, "recall", "auth/session.py")
    assert rec["results"] and "file" in rec["results"][0]["why"]
    st = j(repo, env, "status")
    assert st["ingestion"]["events"] > 0 and "embedder" in st and "index" in st
    health = j(repo, env, "status", "--health")
    assert {"candidate_conversion", "merge_rate", "false_positive_rate", "noise_ratio",
            "unlinked_commit_ratio", "sync_conflicts"} <= set(health["health"])


def test_corrupt_index_is_rebuilt_and_repopulated(scen) -> None:
    repo, env, _ = scen
    j(repo, env, "ask", "oauth")
    tdir = repo / ".git" / "looma" / "tantivy"
    for f in tdir.iterdir():
        if f.name == "meta.json":
            f.write_text("{ this is not json")
    facts = j(repo, env, "ask", "oauth")["facts"]
    assert facts, "the index must be rebuilt and repopulated, not left empty"


def test_memory_vectors_are_budgeted_and_completed(scen) -> None:
    repo, env, _ = scen
    full = j(repo, env, "reindex", "--all-vectors")
    assert full["vectors_pending"] == 0 and full["vectors"] >= full["workitems"]
    if full["embedder"]:  # with a model: memories and session windows are embedded too
        assert full["vectors"] > full["workitems"] + full["memories"]
        facts = j(repo, env, "ask", "where do login credentials get persisted")["facts"]
        assert facts


def test_queries_before_init_say_so_and_write_nothing(tmp_path: Path) -> None:
    from tests.helpers import make_repo

    repo = make_repo(tmp_path / "bare")
    for cmd in (("resume", "auth"), ("ask", "why")):
        proc = looma(repo, *cmd, check=False)
        assert proc.returncode == 3 and "looma init" in proc.stderr, proc.stderr
    assert not (repo / ".git" / "looma").exists()


def test_budget_must_be_sensible_and_source_must_exist(scen) -> None:
    repo, env, _ = scen
    proc = looma(repo, "resume", "oauth", "--budget", "-5", env=env, check=False)
    assert proc.returncode == 2 and "budget" in proc.stderr.lower()
    proc = looma(repo, "ingest", "--source", "codex=/nonexistent/path", env=env, check=False)
    assert proc.returncode == 2 and "no such file" in proc.stderr
    proc = looma(repo, "backfill", "--since", "nosuchrev", env=env, check=False)
    assert proc.returncode == 7 and "nosuchrev" in proc.stderr
