"""The ingest engine end to end over real repositories and generated Claude transcripts."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from looma_git.api.ingest import ingest
from looma_git.errors import LockError
from looma_git.gitrepo import find_repo
from looma_git.index import events as ev_index
from looma_git.index import storedb
from looma_git.ingest.base import DiscoveryEnv
from looma_git.ingest.engine import writer_lock
from tests.helpers import git, make_repo
from tests.ingest.gen_claude import SessionWriter, typical_session


def _env(home: Path, **overrides: tuple[Path, ...]) -> DiscoveryEnv:
    return DiscoveryEnv(home=home, overrides=overrides)


def _ingest(repo: Path, home: Path, **kw):
    return ingest(find_repo(repo), _env(home), agents=["claude-code"], **kw)


def _db(repo: Path) -> sqlite3.Connection:
    return storedb.connect(find_repo(repo), readonly=True)


def _projects(home: Path) -> Path:
    p = home / ".claude" / "projects"
    p.mkdir(parents=True, exist_ok=True)
    return p


def test_ingest_stores_events_tools_files_and_second_run_adds_nothing(repo, scrubbed_env):
    home = scrubbed_env
    typical_session(str(repo), seed=1, turns=4).write(_projects(home))
    r1 = _ingest(repo, home)
    assert r1.events_added == 4 * 5  # prompt + 4 merged replies per turn
    assert r1.sessions == {"claude-code": 1}
    assert r1.noise.get("system_reminder", 0) >= 1
    assert r1.skipped.get("non_message", 0) >= 1
    r2 = _ingest(repo, home)
    assert r2.events_added == 0 and r2.events_updated == 0 and r2.sessions == {}
    conn = _db(repo)
    sessions = ev_index.list_sessions(conn)
    assert [s.event_count for s in sessions] == [20]
    assert sessions[0].project_root == str(repo) and sessions[0].git_branch == "main"
    stored = ev_index.session_events(conn, "claude-code", sessions[0].session_id)
    assert [s.event.seq for s in stored] == sorted(s.event.seq for s in stored)
    edits = [s for s in stored if any(t.kind == "edit" for t in s.event.tool_calls)]
    assert edits and edits[0].files == (("src/mod0.py", "edit"),)
    tests_run = [t for s in stored for t in s.event.tool_calls if t.kind == "shell"]
    assert {t.test_outcome for t in tests_run} == {"passed", "failed"}
    failed = [t for t in tests_run if t.test_outcome == "failed"]
    assert failed[0].exit_code == 1 and failed[0].is_error
    # Nothing looma wrote shows up in the user's work tree.
    assert git(repo, "status", "--porcelain") == ""


def test_streaming_reply_split_across_runs_is_one_event(repo, scrubbed_env):
    home = scrubbed_env
    w = SessionWriter(str(repo), seed=7)
    w.user("add a feature")
    w.assistant("Plan: edit a.py", [("Edit", {"file_path": "a.py", "old_string": "x",
                                               "new_string": "y"})],
                [("ok", False, None)], msg_id="msg_A")
    lines = w.lines()
    path = _projects(home) / "p" / f"{w.sid}.jsonl"
    path.parent.mkdir()
    # First run sees only the prompt and the text line of msg_A.
    path.write_text("\n".join(lines[:2]) + "\n")
    _ingest(repo, home)
    with path.open("a") as fh:
        fh.write("\n".join(lines[2:]) + "\n")
    r = _ingest(repo, home)
    assert r.events_updated == 1
    conn = _db(repo)
    stored = ev_index.session_events(conn, "claude-code", w.sid)
    assistants = [s for s in stored if s.event.role == "assistant"]
    assert len(assistants) == 1
    assert assistants[0].event.text == "Plan: edit a.py"
    assert assistants[0].files == (("a.py", "edit"),)
    # Exactly the same store as one run over the whole file.
    other = make_repo(repo.parent / "clone2")
    home2 = repo.parent / "home2"
    w2 = SessionWriter(str(other), seed=7)
    w2.records = [json.loads(x.replace(str(repo), str(other))) for x in lines]
    w2.write(_projects(home2))
    _ingest(other, home2)
    texts = [(s.event.role, s.event.text, s.files) for s in
             ev_index.session_events(_db(other), "claude-code", w.sid)]
    assert texts == [(s.event.role, s.event.text, s.files) for s in stored]


def test_partial_last_line_is_left_and_picked_up_when_complete(repo, scrubbed_env):
    home = scrubbed_env
    w = SessionWriter(str(repo), seed=3)
    w.user("first prompt")
    w.user("second prompt")
    first, second = w.lines()
    path = _projects(home) / "p" / f"{w.sid}.jsonl"
    path.parent.mkdir()
    path.write_text(first + "\n" + second[:25])
    r1 = _ingest(repo, home)
    assert r1.events_added == 1 and not r1.skipped
    with path.open("a") as fh:
        fh.write(second[25:] + "\n")
    r2 = _ingest(repo, home)
    assert r2.events_added == 1 and not r2.skipped


def test_truncated_or_replaced_file_is_rescanned_without_duplicates(repo, scrubbed_env):
    home = scrubbed_env
    w = typical_session(str(repo), seed=5, turns=2)
    path = w.write(_projects(home))
    first = _ingest(repo, home).events_added
    # Replace the file by a shorter one with different head bytes plus one new prompt.
    w2 = SessionWriter(str(repo), sid=w.sid, seed=99)
    w2.user("a completely new conversation head")
    path.write_text("\n".join(w2.lines()) + "\n")
    r = _ingest(repo, home)
    assert r.events_added == 1
    assert any("rescanned" in n for n in r.notes)
    assert _db(repo).execute("SELECT count(*) FROM events").fetchone()[0] == first + 1


def test_attribution_worktrees_nested_repos_and_foreign_cwds(repo, scrubbed_env, tmp_path):
    home = scrubbed_env
    projects = _projects(home)
    wt = tmp_path / "linked-wt"
    git(repo, "worktree", "add", "-q", "-b", "feat", str(wt))
    nested = make_repo(repo / "vendor" / "lib")
    elsewhere = make_repo(tmp_path / "other")
    link = tmp_path / "repo-link"
    link.symlink_to(repo)
    for i, cwd in enumerate([repo, wt, nested, elsewhere, link, repo / "sub" / "dir"]):
        w = SessionWriter(str(cwd), sid=f"s{i}", seed=i)
        w.user(f"hello from {cwd}")
        w.write(projects)
    r = _ingest(repo, home)
    ids = {s.session_id for s in ev_index.list_sessions(_db(repo))}
    assert ids == {"s0", "s1", "s4", "s5"}
    assert r.unattributed_events == 2
    # The same store is shared by the linked worktree (git common dir).
    assert {s.session_id for s in ev_index.list_sessions(_db(wt))} == ids


def test_paths_escaping_the_repository_stay_raw(repo, scrubbed_env, tmp_path):
    home = scrubbed_env
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "out-link").symlink_to(outside)
    w = SessionWriter(str(repo), seed=11)
    w.user("touch files")
    raw = ["inside.py", "../escape.py", str(outside / "x.py"), "out-link/y.py",
           str(repo / "d" / ".." / "z.py"), str(repo / ".git" / "config")]
    w.assistant("editing", [("Write", {"file_path": p, "content": ""}) for p in raw],
                [("ok", False, None)] * len(raw))
    w.write(_projects(home))
    _ingest(repo, home)
    rows = _db(repo).execute("SELECT raw_path, relpath FROM tool_files ORDER BY idx").fetchall()
    assert [tuple(r) for r in rows] == [
        ("inside.py", "inside.py"), ("../escape.py", None), (str(outside / "x.py"), None),
        ("out-link/y.py", None), (str(repo / "d" / ".." / "z.py"), "z.py"),
        (str(repo / ".git" / "config"), None)]


def test_secrets_are_redacted_before_storage(repo, scrubbed_env):
    home = scrubbed_env
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    w = SessionWriter(str(repo), seed=12)
    w.user(f"use this token {token} to push")
    w.assistant("ok", [("Bash", {"command": f"GH_TOKEN={token} git push"})],
                [("done", False, None)])
    w.write(_projects(home))
    r = _ingest(repo, home)
    assert sum(r.redactions.values()) >= 2  # text, command (raw records are not copied)
    conn = _db(repo)
    dump = "\n".join(conn.iterdump())
    assert token not in dump
    # The raw records stay in the transcript, stored by reference; read back, they are redacted.
    refs = conn.execute("SELECT event_id, raw_json, raw_ref FROM events").fetchall()
    assert refs and all(raw == "" and ref for _, raw, ref in refs)
    raws = [ev_index.raw_record(conn, eid) for eid, _, _ in refs]
    assert all(raws) and not any(token in x for x in raws if x)
    assert any("[REDACTED:" in x for x in raws if x)


def test_writer_lock_excludes_a_second_ingest(repo, scrubbed_env):
    paths = find_repo(repo)
    with writer_lock(paths), pytest.raises(LockError):
        ingest(paths, _env(scrubbed_env), agents=["claude-code"])


def test_missing_adapters_are_noted_not_fatal(repo, scrubbed_env, monkeypatch):
    from looma_git.ingest import registry

    monkeypatch.setitem(registry.ADAPTERS, "windsurf", "looma_git.ingest.no_such:Nope")
    r = ingest(find_repo(repo), _env(scrubbed_env))
    assert any("windsurf" in n for n in r.notes)


def test_adapter_exceptions_become_skips(repo, scrubbed_env, monkeypatch):
    from looma_git.ingest import claude

    typical_session(str(repo), seed=2, turns=1).write(_projects(scrubbed_env))

    def boom(self, source, cursor):
        raise RuntimeError("database is locked")

    monkeypatch.setattr(claude.ClaudeAdapter, "read", boom)
    r = _ingest(repo, scrubbed_env)
    assert r.skipped == {"adapter_error": 1}
    assert "database is locked" in r.skip_samples["adapter_error"][0]
    monkeypatch.undo()
    assert _ingest(repo, scrubbed_env).events_added == 5  # retried on the next run


def test_source_override_reads_only_that_path(repo, scrubbed_env, tmp_path):
    typical_session(str(repo), seed=4, turns=1).write(_projects(scrubbed_env))
    backup = tmp_path / "backup"
    typical_session(str(repo), seed=8, turns=2).write(backup)
    r = ingest(find_repo(repo), _env(scrubbed_env, **{"claude-code": (backup,)}),
               agents=["claude-code"])
    assert r.events_added == 10


def test_claude_config_dir_list_and_xdg(repo, scrubbed_env, tmp_path):
    a, b = tmp_path / "cfgA", tmp_path / "cfgB"
    typical_session(str(repo), seed=21, turns=1).write(a / "projects")
    typical_session(str(repo), seed=22, turns=1).write(b / "projects")
    env = DiscoveryEnv(home=scrubbed_env, environ={"CLAUDE_CONFIG_DIR": f"{a},{b}"})
    assert ingest(find_repo(repo), env, agents=["claude-code"]).sessions == {"claude-code": 2}
    typical_session(str(repo), seed=23, turns=1).write(scrubbed_env / "xdg" / "claude" /
                                                       "projects")
    env = DiscoveryEnv(home=scrubbed_env, environ={"XDG_CONFIG_HOME": str(scrubbed_env / "xdg")})
    assert ingest(find_repo(repo), env, agents=["claude-code"]).sessions == {"claude-code": 1}


def test_events_since_returns_new_and_updated(repo, scrubbed_env):
    typical_session(str(repo), seed=31, turns=1).write(_projects(scrubbed_env))
    _ingest(repo, scrubbed_env)
    conn = _db(repo)
    assert len(ev_index.events_since(conn, 0)) == 5
    assert ev_index.events_since(conn, 2**40) == []


def test_store_db_lives_in_the_common_dir(repo, scrubbed_env):
    _ingest(repo, scrubbed_env)
    assert (repo / ".git" / "looma" / "store.db").is_file()
    assert os.listdir(repo) == [".git", "file0.txt"] or sorted(os.listdir(repo)) == [
        ".git", "file0.txt"]
