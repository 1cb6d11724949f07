"""Hooks never hurt git: every failure mode leaves git's status and output unchanged.

Each case builds twin repositories (same commits, same dates, so the same shas): `plain`
without looma and `hooked` with it, runs the same git command in both and compares status,
stdout and stderr; then checks the problem landed in hooks.log and `looma hooks status`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli, git
from tests.hooks.util import (
    env,
    install,
    normalize,
    read_state,
    run_git,
    state_dir,
    status_json,
    twin,
    wait_drains,
    wait_for,
)

MINIMAL_PATH = "/usr/bin:/bin"  # git and sh, but no looma / git-looma


class Twins:
    def __init__(self, tmp_path: Path) -> None:
        self.base = tmp_path
        self.plain = twin(tmp_path / "plain")
        self.hooked = twin(tmp_path / "hooked")

    def both(self, fn) -> None:
        fn(self.plain)
        fn(self.hooked)

    def same(self, *args: str, extra_env: dict[str, str] | None = None,
             input: str | None = None, cwd_rel: str = "repo") -> tuple[int, str, str]:
        """Run one git command in both; assert identical results; return the hooked one."""
        def run(side: str) -> tuple[int, str, str]:
            cwd = self.base / side / cwd_rel
            e = {k: v.replace("@SIDE@", side) for k, v in (extra_env or {}).items()}
            return normalize(run_git(cwd, *args, extra_env=e, input=input), self.base / side)
        plain, hooked = run("plain"), run("hooked")
        assert hooked == plain
        return hooked

    def commit(self, msg: str = "second", **kw) -> tuple[int, str, str]:
        self.both(lambda r: (r / "a.txt").write_text(f"{msg}\n"))
        return self.same("commit", "-a", "-m", msg, **kw)


@pytest.fixture
def twins(tmp_path: Path) -> Twins:
    return Twins(tmp_path)


def log_text(repo: Path) -> str:
    p = state_dir(repo) / "hooks.log"
    return p.read_text() if p.exists() else ""


def test_commit_with_hooks_is_indistinguishable_and_gets_drained(twins: Twins) -> None:
    install(twins.hooked)
    rc, out, _ = twins.commit()
    assert rc == 0 and "second" in out
    st = wait_drains(twins.hooked, 1)
    assert [s["name"] for s in st["last_drain"]["steps"]] == ["ingest", "rewrites", "link"]


def test_commit_returns_while_the_drainer_is_still_running(twins: Twins, tmp_path: Path) -> None:
    fifo = tmp_path / "release"
    os.mkfifo(fifo)
    marker = tmp_path / "drainer-started"
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!/bin/sh\necho started > '{marker}'\nread x < '{fifo}'\n")
    fake.chmod(0o755)
    install(twins.hooked, python=str(fake))
    try:
        rc, _, _ = twins.commit()  # would hang (until the 120 s timeout) if not detached
        assert rc == 0
        wait_for(marker.exists, "the detached drainer to start")
    finally:
        if marker.exists():
            _release(fifo)


def _release(fifo: Path, timeout: float = 30.0) -> None:
    """Let the fake drainer end: it writes its marker before it opens the FIFO, so a writer
    may find no reader yet (ENXIO) for a moment on a loaded machine; retry until it has one."""
    import errno
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
            continue
        os.write(fd, b"go\n")
        os.close(fd)
        return


def test_looma_gone_everywhere(twins: Twins) -> None:
    install(twins.hooked, python="/gone/bin/python")
    rc, _, _ = twins.commit(extra_env={"PATH": MINIMAL_PATH})
    assert rc == 0
    assert "looma not found" in log_text(twins.hooked)
    st = status_json(twins.hooked)
    assert "looma not found" in st["log_error"]
    assert st["queue_length"] == 1  # queued work is kept for when looma is back


def test_interpreter_gone_falls_back_to_looma_on_path(twins: Twins, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "looma").write_text(f"#!/bin/sh\nexec '{sys.executable}' -m looma_git \"$@\"\n")
    (bindir / "looma").chmod(0o755)
    install(twins.hooked, python="/gone/bin/python")
    twins.commit(extra_env={"PATH": f"{bindir}:{MINIMAL_PATH}"})
    wait_drains(twins.hooked, 1)


def test_import_error_in_looma(twins: Twins, tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "looma_git"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('simulated broken install')\n")
    install(twins.hooked)
    rc, _, _ = twins.commit(extra_env={"PYTHONPATH": str(broken.parent)})
    assert rc == 0
    wait_for(lambda: "simulated broken install" in log_text(twins.hooked), "the traceback")
    st = status_json(twins.hooked)
    assert "ImportError: simulated broken install" in st["log_error"]


def test_corrupt_store_db(twins: Twins) -> None:
    install(twins.hooked)
    state_dir(twins.hooked).mkdir(exist_ok=True)
    (state_dir(twins.hooked) / "store.db").write_bytes(b"this is not sqlite" * 100)
    twins.commit()
    st = wait_drains(twins.hooked, 1)
    assert "corrupt" in st["last_error"]["message"]
    status = status_json(twins.hooked)
    assert any("corrupt" in p for p in status["problems"])
    assert status["queue_length"] == 1  # the commit is put back, not dropped
    assert "corrupt" in log_text(twins.hooked)


def test_state_dir_is_a_file(twins: Twins) -> None:
    install(twins.hooked)
    shutil.rmtree(state_dir(twins.hooked))
    state_dir(twins.hooked).write_text("not a directory\n")
    rc, _, _ = twins.commit()
    assert rc == 0
    st = status_json(twins.hooked)
    assert any("is not a directory" in p for p in st["problems"])


def test_read_only_state_dir(twins: Twins) -> None:
    install(twins.hooked)
    sd = state_dir(twins.hooked)
    sd.mkdir(exist_ok=True)
    sd.chmod(0o555)
    try:
        rc, _, _ = twins.commit()
        assert rc == 0
        if os.geteuid() != 0:  # root writes anyway; the path-is-a-file cases cover root
            assert any("not writable" in p for p in status_json(twins.hooked)["problems"])
    finally:
        sd.chmod(0o755)


def test_queue_cannot_be_written_disk_full_stand_in(twins: Twins) -> None:
    install(twins.hooked)
    (state_dir(twins.hooked) / "queue").mkdir(parents=True)
    rc, _, _ = twins.commit()
    assert rc == 0
    assert "cannot append" in log_text(twins.hooked)
    st = status_json(twins.hooked)
    assert "cannot append" in st["log_error"]
    assert any("not a regular file" in p for p in st["problems"])


def test_dev_full(twins: Twins) -> None:
    install(twins.hooked)
    rc, _, _ = twins.commit(extra_env={"LOOMA_HOOK_QUEUE": "/dev/full"})
    assert rc == 0
    log = log_text(twins.hooked)
    assert "cannot append to /dev/full" in log
    assert "printf" in log  # the shell's own write error went to the log, not to git


def test_stale_drainer_lock_dead_pid(twins: Twins) -> None:
    install(twins.hooked)
    dead = subprocess.Popen(["true"])
    dead.wait()
    state_dir(twins.hooked).mkdir(exist_ok=True)
    (state_dir(twins.hooked) / "drain.lock").write_text(f"{dead.pid}\n")
    twins.commit()
    wait_drains(twins.hooked, 1)


def test_stale_mkdir_style_lock(twins: Twins) -> None:
    install(twins.hooked)
    (state_dir(twins.hooked) / "drain.lock").mkdir(parents=True)
    twins.commit()
    wait_drains(twins.hooked, 1)


def test_live_drainer_means_no_second_launch(twins: Twins) -> None:
    install(twins.hooked)
    state_dir(twins.hooked).mkdir(exist_ok=True)
    (state_dir(twins.hooked) / "drain.lock").write_text(f"{os.getpid()}\n")  # alive: us
    twins.commit()
    sha = git(twins.hooked, "rev-parse", "HEAD")
    assert (state_dir(twins.hooked) / "queue").read_text().split()[0] == sha
    assert read_state(twins.hooked) == {}


def test_git_env_exported_and_run_from_elsewhere(twins: Twins) -> None:
    install(twins.hooked)
    twins.both(lambda r: (r / "a.txt").write_text("from outside\n"))
    git_env = {"GIT_DIR": str(twins.base / "@SIDE@" / "repo" / ".git"),
               "GIT_WORK_TREE": str(twins.base / "@SIDE@" / "repo"),
               "GIT_INDEX_FILE": str(twins.base / "@SIDE@" / "repo" / ".git" / "index")}
    (twins.base / "plain" / "elsewhere").mkdir()
    (twins.base / "hooked" / "elsewhere").mkdir()
    rc, _, _ = twins.same("commit", "-a", "-m", "outside", extra_env=git_env,
                          cwd_rel="elsewhere")
    assert rc == 0
    wait_drains(twins.hooked, 1)
    assert not (twins.base / "hooked" / "elsewhere" / "looma").exists()


def test_foreign_post_checkout_status_is_preserved(twins: Twins) -> None:
    script = "#!/bin/sh\necho foreign post-checkout \"$@\"\nexit 3\n"
    for r in (twins.plain, twins.hooked):
        (r / ".git" / "hooks" / "post-checkout").write_text(script)
        (r / ".git" / "hooks" / "post-checkout").chmod(0o755)
    install(twins.hooked)
    rc, _, err = twins.same("checkout", "-b", "topic")
    assert rc != 0 and "foreign post-checkout" in err  # git maps the hook's 3 to its own 1


def test_pre_push_foreign_failure_blocks_ours_never(twins: Twins, tmp_path: Path) -> None:
    for side in ("plain", "hooked"):
        git(tmp_path / side, "init", "-q", "--bare", "remote.git")
        git(tmp_path / side / "repo", "remote", "add", "origin", "../remote.git")
    install(twins.hooked)
    rc, _, _ = twins.same("push", "-q", "origin", "main")
    assert rc == 0  # ours alone never blocks

    record = "#!/bin/sh\ncat > \"$(git rev-parse --git-dir)/pushed-stdin\"\necho refusing >&2\nexit 1\n"
    for r in (twins.plain, twins.hooked):
        cli(r, "hooks", "uninstall")
        (r / ".git" / "hooks" / "pre-push").write_text(record)
        (r / ".git" / "hooks" / "pre-push").chmod(0o755)
    install(twins.hooked)
    twins.commit("third")
    rc, _, err = twins.same("push", "origin", "main")
    assert rc != 0 and "refusing" in err
    seen = [(r / ".git" / "pushed-stdin").read_text() for r in (twins.plain, twins.hooked)]
    assert seen[0] == seen[1] and "refs/heads/main" in seen[0]


def test_foreign_post_rewrite_sees_the_same_stdin(twins: Twins) -> None:
    record = "#!/bin/sh\necho \"$@\" > .git/rewrite-seen\ncat >> .git/rewrite-seen\n"
    for r in (twins.plain, twins.hooked):
        (r / ".git" / "hooks" / "post-rewrite").write_text(record)
        (r / ".git" / "hooks" / "post-rewrite").chmod(0o755)
    install(twins.hooked, python="/gone/python")  # no drainer: inspect the queue as written
    twins.same("commit", "--amend", "-q", "-m", "amended", extra_env={"PATH": MINIMAL_PATH})
    seen = [(r / ".git" / "rewrite-seen").read_text() for r in (twins.plain, twins.hooked)]
    assert seen[0] == seen[1] and seen[0].startswith("amend\n")
    old, new = seen[0].splitlines()[1].split()[:2]
    line = (state_dir(twins.hooked) / "rewrites").read_text().split()
    assert line[:3] == [old, new, "amend"]


def test_husky_style_hooks_path_keeps_dollar_zero(tmp_path: Path) -> None:
    repo = twin(tmp_path)
    husky = repo / ".husky"
    (husky / "_").mkdir(parents=True)
    (husky / "_" / ".gitignore").write_text("*")  # what husky writes: the dir is ignored
    (husky / "_" / "h").write_text(
        'n=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\n'
        'sh -e "$s" "$@"\n')
    wrapper = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n'
    (husky / "_" / "post-commit").write_text(wrapper)
    (husky / "_" / "post-commit").chmod(0o755)
    (husky / "post-commit").write_text("echo husky-user-hook > .git/husky-ran\n")
    git(repo, "config", "core.hooksPath", ".husky/_")
    install(repo)
    assert (husky / "_" / "post-commit.looma-chained").read_text() == wrapper
    (repo / "a.txt").write_text("x\n")
    git(repo, "commit", "-qam", "husky")
    assert (repo / ".git" / "husky-ran").read_text() == "husky-user-hook\n"
    cli(repo, "hooks", "uninstall")
    assert (husky / "_" / "post-commit").read_text() == wrapper


def test_mid_rebase_only_queues_and_post_rewrite_catches_up(tmp_path: Path) -> None:
    repo = twin(tmp_path)
    for i in range(2):
        (repo / f"f{i}").write_text(f"{i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"c{i}", env=env())
    install(repo, python="/gone/python")  # no drainer: the test reads what the shims wrote
    e = env(PATH=MINIMAL_PATH, GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/edit/")
    subprocess.run(["git", "rebase", "-q", "-i", "HEAD~2"], cwd=repo, env=e, check=True,
                   capture_output=True, stdin=subprocess.DEVNULL)
    (repo / "f0").write_text("edited\n")
    git(repo, "commit", "-q", "-a", "--amend", "-m", "c0 edited", env=env(PATH=MINIMAL_PATH))
    amended = git(repo, "rev-parse", "HEAD")
    log = (state_dir(repo) / "hooks.log").read_text()
    assert f"queued {amended} only" in log
    assert "looma not found" not in log  # mid-rebase: no drainer launch attempted
    git(repo, "rebase", "--continue", env=env(PATH=MINIMAL_PATH))
    rewrites = [ln.split() for ln in (state_dir(repo) / "rewrites").read_text().splitlines()]
    kinds = [r[2] for r in rewrites]
    assert kinds[0] == "amend" and "rebase" in kinds
    assert rewrites[-1][1] == git(repo, "rev-parse", "HEAD")
    # post-rewrite (rebase) is the catch-up: it tried to start the drainer.
    assert "post-rewrite: error: looma not found" in (state_dir(repo) / "hooks.log").read_text()


@pytest.mark.parametrize("layout", ["branch", "detached", "worktree", "sha256", "git-dir-env"])
def test_queued_sha_is_head_on_every_layout(tmp_path: Path, layout: str) -> None:
    if layout == "sha256":
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "--object-format=sha256", "-b", "main")
        (repo / "a.txt").write_text("a\n")
        git(repo, "add", "a.txt")
        git(repo, "commit", "-q", "-m", "first")
    else:
        repo = twin(tmp_path)
    install(repo, python="/gone/python")  # no drainer: read the queue as the shim wrote it
    where, extra = repo, {"PATH": MINIMAL_PATH}
    if layout == "detached":
        git(repo, "checkout", "-q", "--detach")
    elif layout == "worktree":
        where = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", str(where), "-b", "side")
    elif layout == "git-dir-env":
        extra.update(GIT_DIR=str(repo / ".git"), GIT_WORK_TREE=str(repo))
    (where / "a.txt").write_text(f"{layout}\n")
    rc, _, err = run_git(where, "commit", "-q", "-a", "-m", layout, extra_env=extra)
    assert (rc, err) == (0, "")
    head = git(where, "rev-parse", "HEAD")
    assert (state_dir(repo) / "queue").read_text().split()[0] == head


def test_post_commit_fast_path_needs_no_git_process(tmp_path: Path) -> None:
    repo = twin(tmp_path)
    install(repo, python="/gone/python")
    only_date = tmp_path / "only-date"
    only_date.mkdir()
    for tool in ("date", "mkdir"):
        (only_date / tool).symlink_to(f"/bin/{tool}")
    (repo / "a.txt").write_text("fast\n")
    git(repo, "add", "a.txt")
    # git itself by absolute path; the hook's PATH has `date` and `mkdir` but no git.
    proc = subprocess.run(["/usr/bin/git", "commit", "-q", "-m", "fast"], cwd=repo,
                          env=env(PATH=str(only_date)), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    assert (proc.returncode, proc.stderr) == (0, "")
    line = (state_dir(repo) / "queue").read_text().split()
    assert line[0] == git(repo, "rev-parse", "HEAD") and line[1].isdigit()
