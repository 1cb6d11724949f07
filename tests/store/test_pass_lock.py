"""store/locking.pass_lock: one refinery pass (or drainer link step, or ingest) at a time per
clone, across processes; re-entrant in a process and in what it forks while holding it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from looma_git.errors import LockError
from looma_git.store.locking import pass_lock

# Holds the pass lock of the state dir argv[1] until stdin closes; says "held" once it has it.
_HOLDER = r"""
import sys
from pathlib import Path
from looma_git.store.locking import pass_lock
with pass_lock(Path(sys.argv[1]), wait=5):
    print("held", flush=True)
    sys.stdin.read()
"""


def _hold(state: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(state)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def _release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0


def test_another_process_waits_for_the_pass_or_gives_up(tmp_path: Path) -> None:
    holder = _hold(tmp_path)
    try:
        with pytest.raises(LockError, match="another looma pass is running"), \
                pass_lock(tmp_path, wait=0.2):
            pass
    finally:
        _release(holder)
    with pass_lock(tmp_path, wait=0):  # free again
        pass


def test_a_waiting_pass_runs_once_the_other_ends(tmp_path: Path) -> None:
    holder = _hold(tmp_path)
    t0 = time.monotonic()
    import threading

    threading.Timer(0.5, _release, (holder,)).start()
    with pass_lock(tmp_path, wait=10):
        waited = time.monotonic() - t0
    assert waited >= 0.4


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_reentrant_here_and_in_a_child_forked_while_held(tmp_path: Path) -> None:
    from looma_git.pipeline.child import in_child

    with pass_lock(tmp_path, wait=0), pass_lock(tmp_path, wait=0):  # (the same process)
        def nested() -> bool:
            with pass_lock(tmp_path, wait=0):  # the parent holds it for this child
                return True

        assert in_child(nested)
    holder = _hold(tmp_path)  # released by all of the above
    _release(holder)


def test_an_ingest_does_not_read_beside_a_pass_and_the_drain_skips_instead(
        repo: Path, scrubbed_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit's drainer beside a cold ingest: its pass published the efforts it saw half
    stored as WorkItems of their own (250 became 500 at 1,500 sessions) and a forked child of
    it read pages being rewritten. Now a reading or pass waits for the other, and the
    drainer's ingest step is skipped, not an error."""
    from looma_git.api.hooks import steps
    from looma_git.gitrepo import find_repo
    from looma_git.hooks import drain as drain_mod
    from looma_git.hooks import scan
    from looma_git.ingest.base import DiscoveryEnv
    from looma_git.ingest.engine import run_ingest
    from tests.helpers import cli

    cli(repo, "init")
    paths = find_repo(repo)
    env = DiscoveryEnv(home=Path(os.environ["HOME"]))
    monkeypatch.setattr(scan, "unchanged", lambda _paths: None)  # (as if a transcript grew)
    holder = _hold(paths.state_dir)
    try:
        with pytest.raises(LockError):
            run_ingest(paths, env, lock_wait_s=0.0)
        ingest_step = next(s for s in steps(paths, env) if s.name == "ingest")
        got = ingest_step.run(drain_mod.Batch((), ()))
    finally:
        _release(holder)
    assert got.startswith("skipped: another looma ingest or pass is running")
    run_ingest(paths, env, lock_wait_s=0.0)  # free again


def test_looma_ingest_says_it_waits_for_a_pass_then_runs(repo: Path,
                                                        scrubbed_env: dict[str, str]) -> None:
    import threading

    from looma_git.api.update import update
    from looma_git.gitrepo import find_repo
    from looma_git.ingest.base import DiscoveryEnv
    from tests.helpers import cli

    cli(repo, "init")
    paths = find_repo(repo)
    holder = _hold(paths.state_dir)
    threading.Timer(0.5, _release, (holder,)).start()
    names: list[str] = []
    report = update(paths, DiscoveryEnv(home=Path(os.environ["HOME"])), phase=names.append)
    assert names[:2] == ["waiting for another looma ingest or the hooks' drainer",
                         "reading transcripts"]
    assert report.ingest.events_added == 0


def test_status_says_an_ingest_runs_while_a_pass_holds_the_lock(repo: Path,
                                                                scrubbed_env: dict[str, str]
                                                                ) -> None:
    """A cold ingest's work model holds only the pass lock (its reading lock is free)."""
    from looma_git.gitrepo import find_repo
    from looma_git.status import clone_state
    from tests.helpers import cli

    cli(repo, "init")
    paths = find_repo(repo)
    holder = _hold(paths.state_dir)
    try:
        assert clone_state(paths).state == "ingest running"
    finally:
        _release(holder)
    assert clone_state(paths).state != "ingest running"
