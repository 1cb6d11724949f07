"""The drainer: lock, atomic take, put-back of unprocessed work, bookkeeping for status."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from looma_git.api import hooks as api
from looma_git.gitrepo import find_repo
from looma_git.hooks import drain, queue, state
from looma_git.ingest.base import DiscoveryEnv
from tests.helpers import commit_file, git, looma


def paths_of(repo: Path):
    return find_repo(repo)


def env_of(home: Path) -> DiscoveryEnv:
    return DiscoveryEnv(home=home, environ={}, platform=sys.platform)


def enqueue(repo: Path, *shas: str, t: int = 1_700_000_000) -> None:
    sd = repo / ".git" / "looma"
    sd.mkdir(exist_ok=True)
    with (sd / "queue").open("a") as fh:
        fh.writelines(f"{s} {t}\n" for s in shas)


class Recorder:
    """Steps that record what they were given, optionally failing."""

    def __init__(self, fail: set[str] | None = None, unavailable: set[str] | None = None):
        self.fail = fail or set()
        self.unavailable = unavailable or set()
        self.seen: dict[str, list[drain.Batch]] = {"ingest": [], "rewrites": [], "link": []}

    def step(self, name: str, consumes: str = "") -> drain.Step:
        def run(batch: drain.Batch) -> str:
            self.seen[name].append(batch)
            if name in self.unavailable:
                raise drain.StepUnavailable(f"{name} module missing")
            if name in self.fail:
                raise RuntimeError(f"{name} exploded")
            return "done"
        return drain.Step(name, run, consumes)

    def steps(self) -> list[drain.Step]:
        return [self.step("ingest"), self.step("rewrites", "rewrites"),
                self.step("link", "commits")]


def test_links_queued_commits_and_empties_the_queue(repo: Path, scrubbed_env: Path) -> None:
    a = commit_file(repo, "x.txt", "1", "one")
    b = commit_file(repo, "x.txt", "2", "two")
    enqueue(repo, a, b, a)
    rec = Recorder()
    res = api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
    assert res.ran and res.commits == 2 and res.requeued == 0
    assert rec.seen["link"][0].link_shas == (a, b)
    assert queue.pending(repo / ".git" / "looma" / "queue") == []
    st = json.loads((repo / ".git" / "looma" / "hooks-state.json").read_text())
    assert st["drains"] == 1 and len(st["samples"]["queue_wait_ms"]) == 2
    assert "last_error" not in st


def test_unavailable_link_step_keeps_every_sha(repo: Path, scrubbed_env: Path) -> None:
    a = commit_file(repo, "x.txt", "1", "one")
    enqueue(repo, a, t=123)
    rec = Recorder(unavailable={"link"})
    res = api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
    assert res.requeued == 1
    assert queue.pending(repo / ".git" / "looma" / "queue") == [f"{a} 123"]
    log = (repo / ".git" / "looma" / "hooks.log").read_text()
    assert "link: unavailable" in log
    # Run again: still kept, never dropped.
    api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
    assert queue.pending(repo / ".git" / "looma" / "queue") == [f"{a} 123"]


def test_failing_step_is_logged_with_traceback_and_others_still_run(
        repo: Path, scrubbed_env: Path) -> None:
    a = commit_file(repo, "x.txt", "1", "one")
    enqueue(repo, a)
    rec = Recorder(fail={"ingest"})
    res = api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
    assert [s.status for s in res.steps] == ["failed", "ok", "ok"]
    assert res.requeued == 0  # ingest consumes nothing queued
    log = (repo / ".git" / "looma" / "hooks.log").read_text()
    assert "Traceback" in log and "RuntimeError: ingest exploded" in log
    st = looma(repo, "hooks", "status", "--json")
    data = json.loads(st.stdout)
    assert data["last_error"]["step"] == "ingest"
    assert data["log_error"] == "RuntimeError: ingest exploded"
    assert set(data["latency"]) >= {"drain_ms", "queue_wait_ms", "step_ms.link"}


def test_rewrites_map_queued_commits_and_failures_put_them_back(
        repo: Path, scrubbed_env: Path) -> None:
    old = commit_file(repo, "x.txt", "1", "one")
    git(repo, "commit", "-q", "--amend", "-m", "one amended")
    new = git(repo, "rev-parse", "HEAD")
    enqueue(repo, old)
    sd = repo / ".git" / "looma"
    (sd / "rewrites").write_text(f"{old} {new} amend 5\n")
    rec = Recorder(fail={"rewrites", "link"})
    res = api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
    assert rec.seen["link"][0].link_shas == (new,)
    assert rec.seen["rewrites"][0].rewrites[0].old == old
    assert res.requeued == 2
    assert queue.pending(sd / "rewrites") == [f"{old} {new} amend 5"]
    assert queue.pending(sd / "queue") == [f"{new} 1700000000"]  # put back already mapped


def test_missing_and_malformed_entries_are_dropped_and_logged(repo: Path, scrubbed_env: Path) -> None:
    a = git(repo, "rev-parse", "HEAD")
    enqueue(repo, a, "f" * 40)
    with (repo / ".git" / "looma" / "queue").open("a") as fh:
        fh.write("garbage line\n")
    rec = Recorder()
    res = api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
    assert rec.seen["link"][0].link_shas == (a,)
    assert res.dropped == 2
    log = (repo / ".git" / "looma" / "hooks.log").read_text()
    assert "does not exist" in log and "malformed" in log


def test_leftovers_of_a_dead_drainer_are_picked_up(repo: Path, scrubbed_env: Path) -> None:
    a = git(repo, "rev-parse", "HEAD")
    sd = repo / ".git" / "looma"
    sd.mkdir()
    (sd / "queue.123.draining").write_text(f"{a} 1\n")
    rec = Recorder()
    api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
    assert rec.seen["link"][0].link_shas == (a,)
    assert not list(sd.glob("*.draining"))


def test_lines_appended_to_a_taken_file_are_not_lost(tmp_path: Path) -> None:
    q = tmp_path / "queue"
    q.write_text("a 1\n")
    with q.open("a") as late_writer:  # a shim that opened the file just before the rename
        taken = queue.take(q)
        late_writer.write("b 2\n")
    assert taken.lines == ("a 1",)
    assert queue.late_lines(taken) == ["b 2"]


def test_second_drainer_exits_while_the_lock_is_held(repo: Path, scrubbed_env: Path) -> None:
    enqueue(repo, git(repo, "rev-parse", "HEAD"))
    lock_path = repo / ".git" / "looma" / "drain.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        rec = Recorder()
        res = api.drain(paths_of(repo), env_of(scrubbed_env), rec.steps())
        assert not res.ran and rec.seen["link"] == []
    finally:
        os.close(fd)
    assert len(queue.pending(repo / ".git" / "looma" / "queue")) == 1


def test_work_queued_during_a_drain_is_drained_too(repo: Path, scrubbed_env: Path) -> None:
    a = git(repo, "rev-parse", "HEAD")
    b = commit_file(repo, "y.txt", "y", "later")
    enqueue(repo, a)
    seen: list[tuple[str, ...]] = []

    def link(batch: drain.Batch) -> str:
        seen.append(batch.link_shas)
        if len(seen) == 1:
            enqueue(repo, b)  # a commit lands while we are linking
        return "ok"

    api.drain(paths_of(repo), env_of(scrubbed_env), [drain.Step("link", link, "commits")])
    assert seen == [(a,), (b,)]


def test_follow_rewrites_chains_and_survives_cycles() -> None:
    def rw(o: str, n: str) -> queue.QueuedRewrite:
        return queue.QueuedRewrite(o, n, "rebase", 0, "")
    got = drain.follow_rewrites(["a", "x"], [rw("a", "b"), rw("b", "c"), rw("x", "y"),
                                             rw("y", "x")])
    assert got == {"a": "c", "x": "y"}


def test_percentiles_nearest_rank() -> None:
    p = state.percentiles([float(i) for i in range(1, 101)])
    assert (p["p50"], p["p90"], p["p99"], p["n"]) == (50.0, 90.0, 99.0, 100.0)
    assert state.percentiles([]) == {}


def test_real_steps_without_their_modules_keep_work_and_cli_drain_is_silent(
        repo: Path) -> None:
    a = git(repo, "rev-parse", "HEAD")
    enqueue(repo, a, t=7)
    proc = looma(repo, "hook", "drain")
    assert proc.stdout == "" and proc.stderr == ""
    st = json.loads((repo / ".git" / "looma" / "hooks-state.json").read_text())
    by = {s["name"]: s["status"] for s in st["last_drain"]["steps"]}
    assert by["link"] in ("ok", "unavailable")
    if by["link"] == "unavailable":
        assert queue.pending(repo / ".git" / "looma" / "queue") == [f"{a} 7"]


def test_post_rewrite_entry_point_queues_lines(repo: Path) -> None:
    old = git(repo, "rev-parse", "HEAD")
    new = "b" * 40
    looma(repo, "hook", "post-rewrite", "rebase", input=f"{old} {new}\n\n{old} {new} extra\n")
    lines = (repo / ".git" / "looma" / "rewrites").read_text().splitlines()
    assert [ln.split()[:3] for ln in lines] == [[old, new, "rebase"]] * 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_state_dir_is_a_clean_error(repo: Path) -> None:
    sd = repo / ".git" / "looma"
    sd.mkdir()
    sd.chmod(0o555)
    try:
        proc = looma(repo, "hook", "drain", check=False)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
    finally:
        sd.chmod(0o755)


def test_state_dir_is_a_file_is_a_clean_error(repo: Path) -> None:
    (repo / ".git" / "looma").write_text("x")
    proc = looma(repo, "hook", "drain", check=False)
    assert proc.returncode == 8 and "Traceback" not in proc.stderr


def test_status_json_shape(repo: Path) -> None:
    subprocess.run([sys.executable, "-m", "looma_git", "hooks", "install"], cwd=repo, check=True,
                   capture_output=True)
    data = json.loads(looma(repo, "hooks", "status", "--json").stdout)
    assert set(data) >= {"hooks_dir", "hooks", "queue_length", "rewrites_length",
                         "drainer_running", "last_drain", "last_error", "log_error", "latency",
                         "problems"}
