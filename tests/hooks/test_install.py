"""install / uninstall / status against real repositories, read back with git and the fs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from looma_git.hooks import shims
from tests.helpers import cli as looma
from tests.helpers import git
from tests.hooks.util import install, status_json


def snapshot(d: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in a directory: bytes and full mode."""
    return {p.name: (p.read_bytes(), p.stat().st_mode) for p in sorted(d.iterdir())
            if p.is_file()}


def test_install_writes_executable_shims_with_this_interpreter(repo: Path) -> None:
    looma(repo, "hooks", "install")
    for name in shims.HOOK_NAMES:
        path = repo / ".git" / "hooks" / name
        assert os.access(path, os.X_OK)
        assert path.read_text() == shims.render(sys.executable)
    assert git(repo, "status", "--porcelain") == ""


def test_install_is_idempotent(repo: Path) -> None:
    looma(repo, "hooks", "install")
    before = snapshot(repo / ".git" / "hooks")
    out = looma(repo, "hooks", "install").stdout
    assert snapshot(repo / ".git" / "hooks") == before
    assert out.count("unchanged") == len(shims.HOOK_NAMES)


def test_uninstall_restores_foreign_hooks_byte_identical(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    (hooks / "post-commit").write_bytes(b"#!/bin/sh\n# mine\r\necho \xff\n")
    (hooks / "post-commit").chmod(0o750)
    (hooks / "pre-push").write_text("#!/usr/bin/env python3\nprint('x')\n")
    (hooks / "pre-push").chmod(0o700)
    (hooks / "post-merge").symlink_to("/nonexistent/target")
    before = snapshot(hooks)
    link_before = os.readlink(hooks / "post-merge")

    out = looma(repo, "hooks", "install").stdout
    assert "chained" in out
    assert (hooks / "post-commit.looma-chained").read_bytes() == before["post-commit"][0]
    assert os.readlink(hooks / "post-merge.looma-chained") == link_before
    looma(repo, "hooks", "install")  # twice: the chained copies must not be touched
    assert (hooks / "pre-push.looma-chained").stat().st_mode == before["pre-push"][1]

    looma(repo, "hooks", "uninstall")
    assert snapshot(hooks) == before
    assert os.readlink(hooks / "post-merge") == link_before
    assert not any(p.name.endswith(".looma-chained") for p in hooks.iterdir())


def test_install_refuses_to_clobber_a_second_foreign_hook(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    (hooks / "post-commit").write_text("#!/bin/sh\necho one\n")
    looma(repo, "hooks", "install")
    (hooks / "post-commit").write_text("#!/bin/sh\necho two\n")  # e.g. a hook manager rewrote it
    proc = looma(repo, "hooks", "install", check=False)
    assert proc.returncode == 1 and "conflict" in proc.stdout
    assert (hooks / "post-commit").read_text() == "#!/bin/sh\necho two\n"
    assert (hooks / "post-commit.looma-chained").read_text() == "#!/bin/sh\necho one\n"
    st = status_json(repo)
    assert {h["name"]: h["state"] for h in st["hooks"]}["post-commit"] == "foreign"
    out = looma(repo, "hooks", "uninstall").stdout
    assert "orphan" in out
    assert (hooks / "post-commit.looma-chained").exists()


def test_core_hooks_path_outside_the_work_tree_is_honoured_and_created_dir_removed(
        repo: Path, tmp_path: Path) -> None:
    hooks = tmp_path / "team-hooks"
    git(repo, "config", "core.hooksPath", str(hooks))
    looma(repo, "hooks", "install")
    assert (hooks / "post-commit").read_text().startswith("#!/bin/sh")
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    st = status_json(repo)
    assert Path(st["hooks_dir"]).resolve() == hooks.resolve()
    looma(repo, "hooks", "uninstall")
    assert not hooks.exists()


def test_tracked_hooks_path_in_the_work_tree_is_refused_untouched(repo: Path) -> None:
    team = repo / ".githooks"
    team.mkdir()
    (team / "post-commit").write_text("#!/bin/sh\necho team hook\n")
    (team / "post-commit").chmod(0o755)
    git(repo, "add", ".githooks")
    git(repo, "commit", "-q", "-m", "team hooks")
    git(repo, "config", "core.hooksPath", ".githooks")
    before = snapshot(team)
    proc = looma(repo, "hooks", "install", check=False)
    assert proc.returncode == 2
    assert "work tree" in proc.stderr and "nothing was installed" in proc.stderr
    assert snapshot(team) == before
    assert git(repo, "status", "--porcelain") == ""
    # `git commit -am` can therefore never commit a shim over the team's hook.
    (repo / "file0.txt").write_text("changed\n")
    git(repo, "commit", "-q", "-am", "change")
    assert git(repo, "show", "HEAD:.githooks/post-commit") == "#!/bin/sh\necho team hook"


def test_ignored_hooks_path_in_the_work_tree_is_used(repo: Path) -> None:
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("/.localhooks/\n")
    git(repo, "config", "core.hooksPath", ".localhooks")
    looma(repo, "hooks", "install")
    assert shims.is_looma_shim((repo / ".localhooks" / "post-commit").read_bytes())
    assert git(repo, "status", "--porcelain") == ""


def test_bare_repository_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    proc = looma(bare, "hooks", "install", check=False)
    assert proc.returncode == 2 and "bare repository" in proc.stderr
    assert sorted(p.name for p in (bare / "hooks").iterdir()
                  if not p.name.endswith(".sample")) == []


def test_global_hooks_path_is_refused_unless_asked(repo: Path, tmp_path: Path,
                                                   scrubbed_env: Path) -> None:
    glob = scrubbed_env / ".githooks"
    git(repo, "config", "--global", "core.hooksPath", str(glob))
    proc = looma(repo, "hooks", "install", check=False)
    assert proc.returncode == 2 and "every repository" in proc.stderr
    assert not glob.exists()
    looma(repo, "init")
    looma(repo, "hooks", "install", "--global")
    assert shims.is_looma_shim((glob / "post-commit").read_bytes())
    assert any("global core.hooksPath" in p for p in status_json(repo)["problems"])
    # Another repository on the machine, never initialised: the shims do nothing there.
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    (other / "x.txt").write_text("x\n")
    git(other, "add", "x.txt")
    proc = subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=other, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not (other / ".git" / "looma").exists()


def test_linked_worktree_installs_into_the_common_hooks_dir(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "side")
    looma(wt, "hooks", "install")
    assert (repo / ".git" / "hooks" / "post-commit").exists()
    st = status_json(wt)
    assert all(h["state"] == "installed" for h in st["hooks"])
    (wt / "w.txt").write_text("w\n")
    git(wt, "add", "w.txt")
    git(wt, "commit", "-q", "-m", "in worktree")
    sha = git(wt, "rev-parse", "HEAD")
    assert (repo / ".git" / "looma").is_dir()
    log = (repo / ".git" / "looma" / "queue")
    # The drainer may already have taken it; either way the sha went through the common dir.
    seen = (log.read_text() if log.exists() else "") + "".join(
        p.read_text() for p in (repo / ".git" / "looma").glob("queue.*.draining"))
    state = json.loads((repo / ".git" / "looma" / "hooks-state.json").read_text()) \
        if (repo / ".git" / "looma" / "hooks-state.json").exists() else {}
    assert sha in seen or state.get("drains", 0) >= 1


def test_status_reports_installed_outdated_and_absent(repo: Path) -> None:
    st = status_json(repo)
    assert {h["state"] for h in st["hooks"]} == {"absent"}
    install(repo, python="/gone/python")
    st = status_json(repo)
    assert all(h["state"] == "installed" and h["python_exists"] is False for h in st["hooks"])
    hook = repo / ".git" / "hooks" / "post-merge"
    hook.write_text(hook.read_text().replace("# Contract", "# Old contract"))
    st = status_json(repo)
    assert {h["name"]: h["state"] for h in st["hooks"]}["post-merge"] == "outdated"
    assert any("notes.rewriteRef" in p for p in st["problems"])
    looma(repo, "hooks", "install")  # refreshes the outdated and re-bakes the interpreter
    st = status_json(repo)
    assert all(h["state"] == "installed" and h["python_exists"] for h in st["hooks"])
    text = looma(repo, "hooks", "status").stdout
    assert "post-commit" in text and "queue: 0 commit(s)" in text
