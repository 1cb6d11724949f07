"""install / uninstall / status against real repositories, read back with git and the fs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from looma_git.hooks import shims
from tests.helpers import git, looma
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
        assert path.read_text() == shims.render(name, sys.executable)
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


def test_core_hooks_path_is_honoured_and_created_dir_removed(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    looma(repo, "hooks", "install")
    assert (repo / ".githooks" / "post-commit").read_text().startswith("#!/bin/sh")
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    st = status_json(repo)
    assert Path(st["hooks_dir"]).resolve() == (repo / ".githooks").resolve()
    looma(repo, "hooks", "uninstall")
    assert not (repo / ".githooks").exists()


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
