"""Reading in forked workers stores exactly what a sequential run stores, in the same order."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
from pathlib import Path

import pytest

from looma_git.gitrepo import find_repo
from looma_git.index import event_stage
from looma_git.ingest import parallel
from looma_git.ingest.base import DiscoveryEnv
from looma_git.ingest.engine import RunResult, run_ingest
from tests.ingest.gen_claude import SessionWriter, typical_session

_SECRET = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s1"


def _codex_rollout(cwd: str, seed: int) -> list[str]:
    sid = f"019e1625-789d-76c0-80ab-{seed:012d}"
    ts = "2026-05-12T10:00:00.000Z"
    recs: list[dict] = [{"timestamp": ts, "type": "session_meta",
                         "payload": {"id": sid, "timestamp": ts, "cwd": cwd,
                                     "originator": "codex-tui", "cli_version": "0.125.0"}}]
    for t in range(4):
        prompt = f"turn {t}: export API_TOKEN={_SECRET}" if t == 1 else f"turn {t} of {seed}"
        recs += [
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": prompt}]}},
            {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message",
                                                              "message": prompt}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call", "name": "exec_command", "call_id": f"c{seed}_{t}",
                "arguments": json.dumps({"cmd": "pytest -q", "workdir": cwd})}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"c{seed}_{t}",
                "output": "Process exited with code 0\nOutput:\n3 passed"}},
        ]
    return [json.dumps(r) for r in recs]


def _corpus(repo: Path, home: Path, tmp: Path) -> None:
    projects = home / ".claude" / "projects"
    for i in range(24):
        w = typical_session(str(repo), seed=i, turns=3)
        if i % 5 == 0:
            w.user(f"here is the key {_SECRET} please rotate it")
        w.write(projects)
    # A foreign project: read, never stored.
    typical_session(str(tmp / "elsewhere"), seed=100, turns=2).write(projects)
    # A continuation file of session 1 recorded from another cwd (sorted after the repo's
    # project directory): it is ours only because session 1 became known earlier in the run.
    cont = SessionWriter(str(tmp / "zz-other"), sid=typical_session(str(repo), 1).sid, seed=7)
    cont.user("continuing the parser work from a sibling checkout")
    cont.assistant("Continuing.")
    cont.write(projects, name="continuation")
    day = home / ".codex" / "sessions" / "2026" / "05" / "12"
    day.mkdir(parents=True)
    for i in range(8):
        (day / f"rollout-2026-05-12T10-00-00-019e1625-789d-76c0-80ab-{i:012d}.jsonl") \
            .write_text("\n".join(_codex_rollout(str(repo), i)) + "\n")


def _snapshot(repo: Path) -> dict[str, list[tuple]]:
    db = sqlite3.connect(find_repo(repo).state_dir / "store.db")
    try:
        out = {}
        for table in ("events", "tool_calls", "tool_files", "sessions", "cursors",
                      "ingest_counts"):
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")
                    if r[1] not in ("ingested_at", "updated_at")]
            sel = ",".join(f'"{c}"' for c in cols)
            # In rowid order: workers must store the same rows in the same order.
            out[table] = [tuple(r) for r in db.execute(f"SELECT {sel} FROM {table} ORDER BY rowid")]
        return out
    finally:
        db.close()


def _summary(r: RunResult) -> dict:
    d = dataclasses.asdict(r)
    d.pop("duration_s")
    return d


@pytest.mark.parametrize("staged", [True, False])
def test_workers_store_exactly_what_a_sequential_run_stores(repo, scrubbed_env, tmp_path,
                                                            monkeypatch, staged):
    # Workers ship rows as SQLite images (index/event_stage), or pickled where SQLite
    # cannot serialize.
    monkeypatch.setattr(event_stage, "AVAILABLE", staged)
    home = scrubbed_env
    _corpus(repo, home, tmp_path)
    paths = find_repo(repo)
    env = DiscoveryEnv(home=home)
    seq = run_ingest(paths, env, agents=["claude-code", "codex"], workers=0)
    seq_rows = _snapshot(repo)
    for p in paths.state_dir.iterdir():
        if p.name.startswith("store.db"):
            p.unlink()
    par = run_ingest(paths, env, agents=["claude-code", "codex"], workers=2)
    assert _snapshot(repo) == seq_rows
    assert _summary(par) == _summary(seq)
    # The corpus exercises what must match: redaction counts, unattributed events, and the
    # continuation file that is ours only through a session stored earlier in the run.
    assert seq.redactions.get("github_token", 0) >= 5 + 8
    assert seq.unattributed_events > 0
    sessions = {r[2] for r in seq_rows["events"]}
    assert typical_session(str(repo), 1).sid in sessions
    texts = [r[8] for r in seq_rows["events"]]
    assert "continuing the parser work from a sibling checkout" in texts
    assert not any(_SECRET in t for t in texts)
    # Nothing new: a re-run with workers reads no source.
    again = run_ingest(paths, env, agents=["claude-code", "codex"], workers=2)
    assert sum(a.events_added for a in again.agents.values()) == 0
    assert sum(a.unchanged for a in again.agents.values()) == sum(
        a.sources for a in again.agents.values())


def _pid_and_square(i: int) -> tuple[int, int]:
    return os.getpid(), i * i


def test_ordered_map_runs_in_children_and_keeps_order():
    got = list(parallel.ordered_map(_pid_and_square, list(range(50)), workers=2, window=3))
    assert [i for i, _ in got] == list(range(50))
    assert [v[1] for _, v in got] == [i * i for i in range(50)]
    assert os.getpid() not in {v[0] for _, v in got}


def _boom(i: int) -> int:
    if i == 3:
        raise ValueError("bad source")
    return i


def _until_raised(fn, exc_type: type[Exception]) -> tuple[list[int], Exception]:
    """The values `ordered_map(fn, range(10))` gave before it raised `exc_type`, and that."""
    out: list[int] = []
    try:
        for _i, v in parallel.ordered_map(fn, list(range(10)), workers=2):
            out.append(v)
    except exc_type as exc:
        return out, exc
    raise AssertionError(f"ordered_map over {fn.__name__} raised nothing")


def test_ordered_map_reraises_a_worker_exception():
    out, exc = _until_raised(_boom, ValueError)
    assert "bad source" in str(exc)
    assert out == [0, 1, 2]


def _gc_state(_i: int) -> tuple[bool, int]:
    import gc

    return gc.get_freeze_count() > 0, gc.get_threshold()[0]


def test_workers_start_with_the_parent_frozen_and_callers_keep_their_gc_state():
    import gc

    if gc.get_freeze_count():
        gc.unfreeze()  # (nothing in this process froze on purpose: start from a thawed heap)
    got = [v for _, v in parallel.ordered_map(_gc_state, list(range(4)), workers=2)]
    assert got == [(True, parallel.WORKER_GC_GEN0)] * 4  # the parent's objects: never walked
    assert gc.get_freeze_count() == 0 and gc.get_threshold()[0] != parallel.WORKER_GC_GEN0
    gc.freeze()  # a caller that froze its heap itself (a forked work-model child) stays frozen
    try:
        assert [v for _, v in parallel.ordered_map(_boom, [0, 1], workers=2)] == [0, 1]
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def _slow_evens(i: int) -> tuple[int, float, bytes]:
    import time

    if i % 2 == 0:
        time.sleep(0.05)  # worker 0 takes the even indices
    return i, time.monotonic(), b"x" * 300_000  # a few results fill a pipe


def test_a_worker_ahead_keeps_computing_while_the_parent_waits_on_the_other():
    """Worker 1 (odd indices, fast) is not held up by a full pipe while the parent waits on
    worker 0: all its results are done before worker 0 has done a third of its own."""
    import time

    got = list(parallel.ordered_map(_slow_evens, list(range(24)), workers=2, window=4096))
    assert [i for i, _ in got] == list(range(24))
    done = {v[0]: v[1] for _, v in got}
    assert max(done[i] for i in range(1, 24, 2)) < done[8]
    assert time.monotonic() >= max(done.values())


def _dies(i: int) -> int:
    if i == 4:
        os._exit(3)  # a reader process killed mid-run (OOM, a signal)
    return i


def test_a_reader_that_dies_is_reported_not_waited_for():
    out, exc = _until_raised(_dies, RuntimeError)
    assert "died" in str(exc)
    assert out == [0, 1, 2, 3]
