"""What scripts and people rely on: JSON errors, exit codes, broken pipes, bare `looma`,
typo suggestions, checked input, identity, link echo, recall of revs, NO_COLOR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.scenario_env import by_files, work
from tests.helpers import cli, git, make_repo


def _json_error(proc: subprocess.CompletedProcess[str]) -> dict:
    doc = json.loads(proc.stdout)  # exactly one JSON document on stdout
    assert set(doc) == {"error"}
    err = doc["error"]
    assert {"code", "message", "hint", "exit_code"} <= set(err)
    assert err["exit_code"] == proc.returncode
    return err


def test_json_errors_are_one_document_with_the_documented_code(scenario) -> None:
    repo, env, _ = scenario
    cases = [
        (("correct", "rename", "wi_doesnotexist", "X", "--json"), 7, "not_found"),
        (("correct", "rename", "wi_", "X", "--json"), 7, "ambiguous"),
        (("timeline", "nosuch", "--json"), 7, "not_found"),
        (("correct", "undo", "ffffffffffff", "--json"), 7, "not_found"),
        (("work", "--status", "bogus", "--json"), 2, "usage"),
        (("ask", "x", "-n", "0", "--json"), 2, "usage"),
        (("sync", "nosuchremote", "--json"), None, None),
        (("link", "nosuchrev", "wi_", "--json"), 7, "not_found"),
    ]
    for args, code, kind in cases:
        proc = cli(repo, *args, env=env, check=False)
        assert proc.returncode != 0, args
        err = _json_error(proc)
        if code is not None:
            assert (proc.returncode, err["code"]) == (code, kind), (args, err)
        assert "Traceback" not in proc.stderr
    amb = _json_error(cli(repo, "correct", "rename", "wi_", "X", "--json", env=env,
                          check=False))
    assert len(amb["matches"]) > 1
    fresh = make_repo(Path(env["HOME"]).parent / "not-initialized")
    err = _json_error(cli(fresh, "resume", "auth", "--json", env=env, check=False))
    assert err["code"] == "not_initialized" and "looma init" in err["hint"]


def test_broken_pipe_is_silent_like_git(scenario) -> None:
    repo, env, _ = scenario
    proc = subprocess.run(f"{sys.executable} -m looma_git log | head -1", shell=True, cwd=repo,
                          env=env, capture_output=True, text=True,
                          executable="/bin/bash")
    assert proc.stdout.count("\n") == 1 and proc.stderr == "", proc.stderr
    status = subprocess.run(
        f"{sys.executable} -m looma_git log | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}",
        shell=True, cwd=repo, env=env, capture_output=True, text=True, executable="/bin/bash")
    assert status.stdout.strip() in ("0", "141") and status.stderr == ""


def test_bare_looma_prints_help_to_stdout_and_suggests_typos(tmp_path: Path) -> None:
    proc = cli(tmp_path, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: looma") and not proc.stderr
    assert "Exit codes:" in proc.stdout and "130" in proc.stdout
    typo = cli(tmp_path, "resum", check=False)
    assert typo.returncode == 2 and "resume" in typo.stderr


def test_resume_outcome_for_scripts(scenario) -> None:
    repo, env, _ = scenario
    codes = {}
    for goal in ("oauth login", "search", "kubernetes helm chart"):
        proc = cli(repo, "resume", goal, "--porcelain", env=env, check=False)
        codes[proc.stdout.split("\n", 1)[0]] = proc.returncode
        rows = [r.split("\t") for r in proc.stdout.splitlines()[1:]]
        assert all(len(r) == 5 and r[1].startswith("wi_") for r in rows), proc.stdout
        assert cli(repo, "resume", goal, "--exit-code", env=env,
                   check=False).returncode == proc.returncode
    assert codes == {"confident": 0, "ambiguous": 10, "cold": 11}
    assert cli(repo, "resume", "search", env=env).returncode == 0  # plain: always 0
    blank = [cli(repo, "resume", g, env=env, check=False) for g in ("", "   ")]
    assert [p.returncode for p in blank] == [2, 2]
    assert blank[0].stderr == blank[1].stderr


def test_empty_states_do_not_mislead(scenario) -> None:
    repo, env, _ = scenario
    proc = cli(repo, "work", "--status", "bogus", env=env, check=False)
    assert proc.returncode == 2 and "bogus" in proc.stderr and "No WorkItems" not in proc.stdout
    out = cli(repo, "work", "--status", "done", env=env).stdout
    if "No WorkItems" in out:
        assert "in all" in out
    for n in ("0", "-5"):
        assert cli(repo, "ask", "why", "-n", n, env=env, check=False).returncode == 2


def test_rename_checks_the_title_and_needs_an_identity(scenario) -> None:
    repo, env, _ = scenario
    wid = by_files(work(repo, env), "auth/session.py")["id"]
    head = git(repo, "rev-parse", "refs/looma/ledger")
    for bad in ("x" * 5000, "two\nlines", "   "):
        proc = cli(repo, "correct", "rename", wid, bad, env=env, check=False)
        assert proc.returncode == 2 and "looma: error" in proc.stderr, proc.stderr
    (Path(env["HOME"]) / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    proc = cli(repo, "correct", "rename", wid, "Fine title", env=env, check=False)
    assert proc.returncode == 2 and "git identity" in proc.stderr and "user.name" in proc.stderr
    assert git(repo, "rev-parse", "refs/looma/ledger") == head


def test_link_echoes_sha_and_undo_and_recall_resolves_revs(scenario) -> None:
    repo, env, _ = scenario
    item = by_files(work(repo, env), "auth/session.py")
    sha = git(repo, "rev-parse", "HEAD~1")
    out = json.loads(cli(repo, "link", "HEAD~1", item["id"], "--json", env=env).stdout)
    assert out["sha"] == sha and out["workitem"] == item["id"] and out["undo"].startswith(
        "looma correct undo ")
    text = cli(repo, "unlink", "HEAD~1", item["id"], env=env).stdout
    assert sha[:10] in text and "HEAD" not in text and "looma correct undo" in text
    linked = item["commits"][-1]
    git(repo, "branch", "-f", "recall-test", linked)
    for rev in ("recall-test", linked[:12]):
        res = json.loads(cli(repo, "recall", rev, "--json", env=env).stdout)["results"]
        assert item["id"] in {r["workitem"]["id"] for r in res}, rev
    git(repo, "checkout", "-q", "--detach", linked)
    res = json.loads(cli(repo, "recall", "HEAD", "--json", env=env).stdout)["results"]
    assert item["id"] in {r["workitem"]["id"] for r in res}


@pytest.mark.parametrize("cmd", [("init",), ("hooks", "install"), ("share", "enable", "team")])
def test_setup_commands_have_json(scenario, cmd: tuple[str, ...]) -> None:
    repo, env, _ = scenario
    git(repo, "remote", "add", "team", str(repo))
    data = json.loads(cli(repo, *cmd, "--json", env=env).stdout)
    assert isinstance(data, dict) and data


def test_no_color_is_honoured(tmp_path: Path) -> None:
    from tests.cli.ptyrun import PtyRun

    env = dict(os.environ, NO_COLOR="1")
    run = PtyRun(tmp_path, "help", "--no-pager", env=env)
    assert run.wait(30) == 0
    coloured = PtyRun(tmp_path, "demo", "--dir", str(tmp_path / "d"), env=env)
    assert coloured.read_until("$ looma init", timeout=120), coloured.text
    os.kill(coloured.pid, 9)
    coloured.wait(10)
    assert "\x1b[" not in coloured.text.replace("\x1b[K", ""), repr(coloured.text[:300])


def test_no_internals_leak(scenario, tmp_path: Path) -> None:
    repo, env, _ = scenario
    proc = cli(tmp_path, "-C", "/nonexistent/x", "work", env=env, check=False)
    assert proc.returncode == 3 and "PosixPath" not in proc.stderr, proc.stderr
    gone = tmp_path / "gone"
    gone.mkdir()
    deleted = subprocess.run(f"cd {gone} && rmdir {gone} && {sys.executable} -m looma_git work",
                             shell=True, env=env, capture_output=True, text=True)
    assert deleted.returncode == 3 and "no longer exists" in deleted.stderr, deleted.stderr
    git(repo, "remote", "add", "nowhere", str(tmp_path / "no-such-remote.git"))
    cli(repo, "share", "enable", "nowhere", env=env)
    proc = cli(repo, "sync", "nowhere", env=env, check=False)
    assert proc.returncode == 9 and "Exception" not in proc.stderr, proc.stderr
    assert "hung up" in proc.stderr
    log = cli(repo, "log", env=env).stdout
    assert "{'" not in log and "None" not in log and "[{" not in log


def test_status_says_where_the_clone_stands(scenario, tmp_path: Path) -> None:
    repo, env, _ = scenario
    fresh = make_repo(tmp_path / "fresh")
    st = json.loads(cli(fresh, "status", "--json", env=env).stdout)["state"]
    assert st["state"] == "not initialized" and st["next"] == "looma init"
    assert cli(fresh, "status", env=env).stdout.startswith("state       not initialized")
    assert json.loads(cli(repo, "status", "--json", env=env).stdout)["state"]["state"] == \
        "up to date"
    from tests.api.scenario_env import add_claude_session

    add_claude_session(repo, env, "stale-1", "Speed up search indexing", ["search/index.py"])
    cli(repo, "ingest", "--no-refine", env=env)
    assert json.loads(cli(repo, "status", "--json", env=env).stdout)["state"]["state"] == \
        "work model stale"
    import fcntl

    assert json.loads(cli(repo, "status", "--json", env=env).stdout)["index"][
        "embedding_now"] is False
    from looma_git.index.vector_background import LOCK

    fd = os.open(repo / ".git" / "looma" / "ingest.lock", os.O_RDWR | os.O_CREAT)
    vfd = os.open(repo / ".git" / "looma" / LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(vfd, fcntl.LOCK_EX)  # as the detached top-up after a large ingest holds it
        held = subprocess.run([sys.executable, "-m", "looma_git", "status", "--json"], cwd=repo,
                              env=env, capture_output=True, text=True)
        assert json.loads(held.stdout)["state"]["state"] == "ingest running"
        assert json.loads(held.stdout)["index"]["embedding_now"] is True
        assert "vectors being embedded in the background" in cli(repo, "status", env=env).stdout
    finally:
        os.close(fd)
        os.close(vfd)


def test_ingest_says_where_it_looked(tmp_path: Path, scrubbed_env: Path) -> None:
    repo = make_repo(tmp_path / "r")
    cli(repo, "init")
    quiet = cli(repo, "ingest").stdout
    assert "no transcripts found" in quiet and "--verbose" in quiet
    loud = cli(repo, "ingest", "--verbose").stdout
    assert f"HOME={scrubbed_env}" in loud
    assert str(scrubbed_env / ".claude" / "projects") in loud and "codex" in loud
