"""Human corrections are durable: every later pass (new sessions, reprocess, a fresh clone's
reindex) respects them; bad corrections write nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.api.scenario_env import add_claude_session, by_files, work
from tests.helpers import cli as looma
from tests.helpers import git


@pytest.fixture
def scen(scenario) -> tuple[Path, dict[str, str]]:
    repo, env, _truth = scenario
    return repo, env


def _titles(items: list[dict]) -> list[str]:
    return sorted(w["title"] for w in items)


def test_merge_survives_new_sessions_and_reprocess(scen) -> None:
    repo, env = scen
    items = work(repo, env)
    e1, e2 = by_files(items, "search/index.py"), by_files(items, "search/rank.py")
    looma(repo, "correct", "merge", e1["id"], e2["id"], "-m", "one search effort", env=env)
    merged = work(repo, env)
    assert len(merged) == len(items) - 1
    target = by_files(merged, "search/index.py")
    assert target["id"] == e2["id"] and "search/rank.py" in target["files"]
    assert target["confidence"] == 1.0
    # A new session touching only the old E1 files would, by score alone, re-create E1.
    add_claude_session(repo, env, "new-index-1", "Speed up search indexing of products",
                       ["search/index.py", "search/tokenize.py"])
    looma(repo, "ingest", env=env)
    looma(repo, "reprocess", env=env)
    after = work(repo, env)
    assert len([w for w in after if any(f.startswith("search/") for f in w["files"])]) == 1
    assert any(s["id"] == "new-index-1" for s in by_files(after, "search/index.py")["sessions"])


def test_split_survives_new_sessions_and_reprocess(scenario) -> None:
    repo, env, truth = scenario
    a = by_files(work(repo, env), "auth/oauth.py")
    # The effort's two editing sessions (a read-only explanation of the same code may sit with
    # them: it is not split off here).
    own = {s["id"] for wi in truth["workitems"] if wi["key"] == "A" for s in wi["sessions"]}
    sessions = [f"{s['agent']}:{s['id']}" for s in a["sessions"] if s["id"] in own]
    assert len(sessions) == 2
    looma(repo, "correct", "split", a["id"], "--into", "OAuth client,OAuth routes",
          "--part", f"1={sessions[0].split(':', 1)[1]}",
          "--part", f"2={sessions[1].split(':', 1)[1]}", env=env)
    parts = [w for w in work(repo, env) if w["title"] in ("OAuth client", "OAuth routes")]
    assert len(parts) == 2 and a["id"] not in {w["id"] for w in work(repo, env)}
    # A session editing files of both parts would, by score alone, re-merge them.
    add_claude_session(repo, env, "new-auth-1", "Tidy the OAuth code",
                       ["auth/oauth.py", "auth/routes.py", "auth/tokens.py"])
    looma(repo, "ingest", env=env)
    looma(repo, "reprocess", env=env)
    after = work(repo, env)
    assert sorted(w["title"] for w in after if w["title"].startswith("OAuth ")) == [
        "OAuth client", "OAuth routes"]
    assert a["id"] not in {w["id"] for w in after}


def test_rename_is_pinned(scen) -> None:
    repo, env = scen
    c = by_files(work(repo, env), "auth/session.py")
    looma(repo, "correct", "rename", c["id"], "Session refresh race", env=env)
    add_claude_session(repo, env, "new-sess-1", "Fix the session timeout again",
                       ["auth/session.py"])
    looma(repo, "ingest", env=env)
    looma(repo, "reprocess", env=env)
    assert by_files(work(repo, env), "auth/session.py")["title"] == "Session refresh race"


def test_false_positive_never_comes_back(scen) -> None:
    repo, env = scen
    d = by_files(work(repo, env), "config/settings.py")
    looma(repo, "correct", "false-positive", d["id"], "-m", "not real work", env=env)
    assert not [w for w in work(repo, env) if "config/settings.py" in w["files"]]
    add_claude_session(repo, env, "new-cfg-1", "Tweak the settings loader",
                       ["config/settings.py", "config/loader.py"])
    looma(repo, "ingest", env=env)
    looma(repo, "reprocess", env=env)
    assert not [w for w in work(repo, env) if "config/settings.py" in w["files"]]


def test_undo_merge_restores_both_with_sessions_and_links(scen) -> None:
    repo, env = scen
    before = work(repo, env)
    e1, e2 = by_files(before, "search/index.py"), by_files(before, "search/rank.py")
    out = looma(repo, "correct", "merge", e1["id"], e2["id"], "--json", env=env).stdout
    op = json.loads(out)["op_id"]
    looma(repo, "correct", "undo", op[:12], env=env)
    after = work(repo, env)
    for old in (e1, e2):
        new = next(w for w in after if w["id"] == old["id"])
        assert new["sessions"] == old["sessions"] and sorted(new["commits"]) == sorted(
            old["commits"])
    # Undo of the undo merges again.
    undo_id = json.loads(looma(repo, "log", "--json", env=env).stdout)["ops"][0]["id"]
    looma(repo, "correct", "undo", undo_id[:12], env=env)
    assert len(work(repo, env)) == len(before) - 1


def test_errors_write_nothing(scen) -> None:
    repo, env = scen
    head = git(repo, "rev-parse", "refs/looma/ledger")
    items = work(repo, env)
    a = items[0]["id"]
    cases = [
        ("correct", "rename", "wi_doesnotexist", "X"),
        ("correct", "merge", a, a),
        ("correct", "rename", "wi_", "ambiguous prefix"),
        ("correct", "split", a, "--into", "P1,P2", "--part", "1=nosuchsession"),
        ("correct", "undo", "ffffffffffff"),
    ]
    for args in cases:
        proc = looma(repo, *args, env=env, check=False)
        assert proc.returncode not in (0, 70), (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "looma: error" in proc.stderr, proc.stderr
    assert git(repo, "rev-parse", "refs/looma/ledger") == head


def test_corrections_survive_a_fresh_clone_reindex(scen, tmp_path: Path) -> None:
    repo, env = scen
    c = by_files(work(repo, env), "auth/session.py")
    looma(repo, "correct", "rename", c["id"], "Session refresh race", env=env)
    mine = work(repo, env)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "--initial-branch=main", str(remote))
    git(repo, "push", "-q", str(remote), "HEAD:refs/heads/main", "refs/looma/ledger",
        "refs/notes/looma")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/looma/ledger:refs/looma/ledger",
        "refs/notes/looma:refs/notes/looma")
    fresh_env = dict(env, HOME=str(tmp_path))  # the teammate has no transcripts
    looma(clone, "init", env=fresh_env)
    looma(clone, "reindex", env=fresh_env)
    theirs = work(clone, fresh_env)
    assert [(w["id"], w["title"], sorted(w["commits"])) for w in theirs] == [
        (w["id"], w["title"], sorted(w["commits"])) for w in mine]
    out = looma(clone, "resume", "session refresh race", "--json", env=fresh_env).stdout
    res = json.loads(out)
    assert res["state"] == "confident" and res["candidates"][0]["title"] == "Session refresh race"
    sha = c["commits"][0]
    assert "Session refresh race" in git(clone, "notes", "--ref=looma", "show", sha)


def test_log_user_and_blame(scen) -> None:
    repo, env = scen
    c = by_files(work(repo, env), "auth/session.py")
    looma(repo, "correct", "rename", c["id"], "Session refresh race", "-m", "clearer", env=env)
    user_ops = json.loads(looma(repo, "log", "--user", "--json", env=env).stdout)["ops"]
    assert [o["op"] for o in user_ops] == ["workitem.rename"]
    blame = json.loads(looma(repo, "blame", c["id"], "--json", env=env).stdout)["ops"]
    assert blame[0]["op"] == "workitem.create" and blame[-1]["op"] == "workitem.rename"
    assert blame[-1]["rationale"] == "clearer" and blame[-1]["actor"]["kind"] == "user"


def test_candidates_listed_and_force_promoted(scen) -> None:
    repo, env = scen
    listed = json.loads(looma(repo, "work", "--candidates", "--json", env=env).stdout)
    cands = [w for w in listed["workitems"] if not w["promoted"]]
    assert cands, "the read-only session stays a local candidate"
    c = cands[0]
    assert c["status"] == "candidate" and c["band"] == "low"
    assert c["id"] not in {w["id"] for w in work(repo, env)}  # not shared
    looma(repo, "correct", "promote", c["id"], "-m", "worth tracking", env=env)
    promoted = [w for w in work(repo, env) if w["title"] == c["title"]]
    assert len(promoted) == 1 and promoted[0]["confidence"] == 1.0
    looma(repo, "reprocess", env=env)
    again = [w for w in work(repo, env) if w["title"] == c["title"]]
    assert len(again) == 1 and again[0]["confidence"] == 1.0
    after = json.loads(looma(repo, "work", "--candidates", "--json", env=env).stdout)
    assert c["id"] not in {w["id"] for w in after["workitems"] if not w["promoted"]}


def test_split_changes_state_at_once_and_undo_is_guarded(scen) -> None:
    repo, env = scen
    a = by_files(work(repo, env), "auth/oauth.py")
    s0, s1 = (s["id"] for s in a["sessions"])
    out = looma(repo, "correct", "split", a["id"], "--into", "P1,P2", "--part", f"1={s0}",
                "--part", f"2={s1}", "--json", env=env).stdout
    split_op = json.loads(out)["op_id"]
    parts = {w["title"]: w for w in work(repo, env) if w["title"] in ("P1", "P2")}
    assert all(p["files"] and p["commits"] for p in parts.values()), parts
    undo = json.loads(looma(repo, "correct", "undo", split_op[:12], "--json", env=env).stdout)
    again = looma(repo, "correct", "undo", split_op[:12], env=env, check=False)
    assert again.returncode == 2 and "already undone" in again.stderr
    assert undo["op_id"][:10] in again.stderr  # the hint names the undo to undo
    blame = json.loads(looma(repo, "blame", a["id"], "--json", env=env).stdout)["ops"]
    assert [o["op"] for o in blame][-2:] == ["workitem.split", "undo"]
