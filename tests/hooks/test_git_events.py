"""Real git events through the installed shims: a burst of commits starts one drainer and costs
one pass per wave; cherry-picks are drained at once; an autosquash records each rewrite once."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from tests.helpers import cli, git
from tests.hooks.util import env, install, read_state, run_git, state_dir, twin, wait_for


def idle(repo: Path) -> bool:
    sd = state_dir(repo)
    lock = sd / "drain.lock"
    busy = lock.exists() and lock.read_text().strip() != ""
    return (not busy and not (sd / "drain.spawn").exists() and not (sd / "drain.wanted").exists()
            and not (sd / "queue").exists() and not list(sd.glob("queue.*.draining")))


def drainer_lines(repo: Path) -> list[str]:
    log = (state_dir(repo) / "hooks.log").read_text()
    return re.findall(r"drainer (\d+): (.*)", log)


def test_twenty_quick_commits_start_one_drainer(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOMA_DRAIN_SETTLE_S", "0.5")  # the linger under test (the suite's is 0)
    repo = twin(tmp_path)
    cli(repo, "init")
    install(repo)
    shas = []
    for i in range(20):
        (repo / "a.txt").write_text(f"{i}\n")
        rc, _, err = run_git(repo, "commit", "-qam", f"burst {i}")
        assert (rc, err) == (0, "")
        shas.append(git(repo, "rev-parse", "HEAD"))
    wait_for(lambda: idle(repo) and read_state(repo).get("drains", 0) >= 1
             and drainer_lines(repo), "the burst to drain")
    # A drainer launched in the instant between another's release and its second look finds
    # the lock taken and leaves at once ("another drainer holds the lock"): it did no work.
    lines = [(pid, t) for pid, t in drainer_lines(repo) if " held " in t]
    pids = {pid for pid, _ in lines}
    # Before: 12-16 drainers for 20 commits, up to 15 at once (the pid reached drain.lock only
    # once Python ran). Now the shim's `mkdir drain.spawn` lets one launch through, the rest
    # leave drain.wanted, and the drainer lingers SETTLE_S for the next commit. A loaded machine
    # can still space two commits further apart than that: a second drainer may start later,
    # but never while the first holds the lock.
    assert len(pids) <= 3, lines
    spans = sorted((float(a), float(b)) for _, t in lines
                   for a, b in re.findall(r"([\d.]+)-([\d.]+)", t.split("held", 1)[1]))
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end - 0.01, spans  # the lock is held by one drainer at a time
    passes = sum(int(m.group(1)) for _, t in lines if (m := re.match(r"(\d+) pass", t)))
    commits = sum(int(m.group(1)) for _, t in lines if (m := re.search(r"(\d+) commit", t)))
    assert commits == 20
    assert passes < 20  # waves, not one pass per commit
    assert read_state(repo)["drains"] == len(pids)


def test_cherry_pick_is_drained_at_once(tmp_path: Path) -> None:
    repo = twin(tmp_path)
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "on side", env=env())
    pick = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    cli(repo, "init")
    install(repo)
    rc, _, err = run_git(repo, "cherry-pick", pick)
    assert rc == 0, err
    picked = git(repo, "rev-parse", "HEAD")
    # git runs post-commit while CHERRY_PICK_HEAD exists; no later git event is needed.
    wait_for(lambda: idle(repo) and read_state(repo).get("drains", 0) >= 1, "the drain")
    assert read_state(repo)["last_drain"]["commits"] == 1
    assert f"queued {picked} only" not in (state_dir(repo) / "hooks.log").read_text()


def test_autosquash_records_each_rewrite_once(tmp_path: Path) -> None:
    from looma_git.api import ledger
    from looma_git.gitrepo import find_repo

    repo = twin(tmp_path)
    cli(repo, "init")
    install(repo)
    for name, msg in (("b.txt", "add b"), ("c.txt", "add c")):
        (repo / name).write_text("1\n")
        git(repo, "add", name)
        git(repo, "commit", "-qm", msg)
    (repo / "b.txt").write_text("2\n")
    git(repo, "commit", "-qam", "fixup! add b")
    wait_for(lambda: idle(repo), "the commit drains")
    rc, _, err = run_git(repo, "rebase", "-q", "-i", "--autosquash", "HEAD~3",
                         extra_env={"GIT_SEQUENCE_EDITOR": "true"})
    assert rc == 0, err
    # git ran post-rewrite twice with the fixup's pair: `amend` mid-rebase, then `rebase`.
    wait_for(lambda: idle(repo) and not (state_dir(repo) / "rewrites").exists()
             and ledger.load_state(find_repo(repo)).rewrites, "the rewrites to drain")
    ops = [o for o in ledger.log(find_repo(repo)) if o.op == "commit.rewrite"]
    pairs = [(o.payload["old"], o.payload["new"]) for o in ops]
    assert len(pairs) == len(set(pairs)) == 3  # add b, fixup, add c: each pair once
