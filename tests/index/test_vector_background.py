"""A cold ingest's vectors embedded by a detached process: the index and its stamp are
written first, the process ends where the inline top-up ends, and a query that needs
meaning waits for it instead of ranking on some of the vectors."""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from looma_git.api import index as api_index
from looma_git.api import ledger as api_ledger
from looma_git.gitrepo import RepoPaths, find_repo
from looma_git.index import embedder as emb_mod
from looma_git.index import vector_background, vector_sync
from looma_git.index.meta import read_meta
from looma_git.ledger.ops import OpDraft
from looma_git.retrieval import semantic


def _ledger(repo: Path) -> tuple[RepoPaths, list[str]]:
    if emb_mod.load_default() is None:
        pytest.skip("the default embedding model is not installed")
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    ids = []
    for title in ("Implement OAuth Login", "Fix Session Timeout"):
        op = api_ledger.append(paths, [OpDraft(
            "workitem.create", {"type": "workitem", "id": None},
            {"title": title, "kind": "feature", "files": ["a.py"], "confidence": 0.7})],
            actor="system")[0]
        ids.append("wi_" + op.id[:10])
    return paths, ids


class _Held:
    """The background lock held as a running top-up holds it (another open file)."""

    def __init__(self, paths: RepoPaths) -> None:
        paths.state_dir.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(paths.state_dir / vector_background.LOCK, os.O_RDWR | os.O_CREAT)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self) -> None:
        os.close(self.fd)


def test_a_query_waits_for_a_running_top_up_and_a_second_one_embeds_inline(
        repo: Path) -> None:
    paths, ids = _ledger(repo)
    held = _Held(paths)
    assert vector_background.running(paths)
    assert not vector_background.wait(paths, timeout=0.05)
    # A top-up is running: this reindex cannot start another, so it embeds inline.
    rep = api_index.reindex(paths, full=True, memory_budget_s=0, vectors_beside=True)
    assert not rep.vectors_beside and rep.vectors == 2
    # While it runs a query waits; it ranks on what the top-up leaves (here: all vectors).
    vector_sync.vectors_path(paths).unlink()
    (paths.state_dir / vector_sync.EMBEDDED_FILE).unlink()

    def finish() -> None:
        time.sleep(0.3)
        api_index.reindex(paths, full=False, memory_budget_s=0)
        held.release()

    worker = threading.Thread(target=finish)
    t0 = time.monotonic()
    worker.start()
    try:
        cos = semantic.item_cosines(paths, "oauth login", set(ids))
    finally:
        worker.join()
    assert time.monotonic() - t0 >= 0.3 and sorted(cos) == sorted(ids)
    assert not vector_background.running(paths)


def test_an_ingest_of_many_new_events_leaves_the_vectors_to_the_detached_process(
        repo: Path, scrubbed_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import re

    from looma_git.api.update import update
    from looma_git.ingest.base import DiscoveryEnv

    paths, ids = _ledger(repo)
    d = scrubbed_env / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    d.mkdir(parents=True)
    base = {"sessionId": "s1", "cwd": str(repo), "gitBranch": "main", "version": "2.0.76",
            "isSidechain": False, "userType": "external"}
    turns = [("user", "Implement the OAuth login callback with PKCE"),
             ("assistant", "I'll add the PKCE verifier to the OAuth callback.")]
    (d / "s1.jsonl").write_text("".join(json.dumps(dict(
        base, type=role, uuid=f"u{i}", parentUuid=f"u{i - 1}" if i else None,
        timestamp=f"2026-05-04T09:0{i}:00.000Z", message={"role": role, "content": text}))
        + "\n" for i, (role, text) in enumerate(turns)))
    started: list[bool] = []
    real = vector_background.start

    def recorded(*a: object, **kw: object) -> bool:
        started.append(real(*a, **kw))  # type: ignore[arg-type]
        return started[-1]

    monkeypatch.setattr(vector_background, "BESIDE_FROM", 1)  # "many": these two events
    monkeypatch.setattr(vector_background, "start", recorded)
    update(paths, DiscoveryEnv(home=scrubbed_env, environ={}, platform=sys.platform))
    assert started == [True]
    assert vector_background.wait(paths, timeout=60)
    meta = read_meta(paths.state_dir)
    assert meta is not None and meta.model_id == emb_mod.DEFAULT_MODEL_ID
    assert meta.vectors >= 2 and meta.vectors_pending == 0
    # What the inline top-up writes: the model's vectors of the WorkItem texts, under their ids.
    emb = emb_mod.load_default()
    assert emb is not None
    from looma_git.index.vectors import VectorStore

    texts = vector_sync.item_texts(api_index.load_records(paths))
    want = emb.embed([t for _, _, t in texts])
    with VectorStore(vector_sync.vectors_path(paths), emb.dim, emb.model_id) as vs:
        for (doc, _, _), vec in zip(texts, want, strict=True):
            got = vs.vector(doc)
            assert got is not None and bytes(got) == vec.astype("<f4").tobytes()
    assert sorted(semantic.item_cosines(paths, "oauth login", set(ids))) == sorted(ids)


def test_a_query_says_that_it_waits_and_the_wait_is_bounded(repo: Path, capsys,
                                                          monkeypatch) -> None:
    """A `resume` right after a cold ingest used to block up to two minutes without a word:
    the wait is said on stderr (never stdout: JSON or the MCP stream), and when the top-up
    outlasts the bound the query ranks on what is there and says so."""
    paths = find_repo(repo)
    assert vector_background.WAIT_S <= 30
    held = _Held(paths)
    try:
        said: list[str] = []
        t0 = time.monotonic()
        assert not vector_background.wait(paths, timeout=0.2, say=said.append)
        assert time.monotonic() - t0 >= 0.2 and len(said) == 2
        assert "waiting" in said[0] and "so far" in said[1]
        monkeypatch.setattr(vector_background, "WAIT_S", 0.1)
        monkeypatch.setattr(vector_background.wait, "__defaults__", (0.1, None))
        semantic.query_cosines(paths, "oauth login", ("workitem",))
        out = capsys.readouterr()
        assert out.out == "" and "waiting for the background embedding" in out.err
    finally:
        held.release()
    said.clear()
    assert vector_background.wait(paths, say=said.append) and said == []


def _prewarm_exits(paths: RepoPaths) -> None:
    """The prewarmed process is gone (it holds no lock and no pipe any more)."""
    import subprocess

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        got = subprocess.run(["pgrep", "-f", f"vector_background.*{paths.git_dir}"],
                             capture_output=True, text=True)
        if got.returncode != 0:
            return
        time.sleep(0.05)
    raise AssertionError("the prewarmed top-up did not exit")


def test_a_prewarmed_top_up_without_a_task_exits_and_embeds_nothing(repo: Path) -> None:
    paths, _ids = _ledger(repo)
    prewarmed = vector_background.prewarm(paths)
    assert prewarmed is not None
    assert not vector_background.running(paths)  # no lock until it has a task
    prewarmed.cancel()
    _prewarm_exits(paths)
    assert not vector_sync.vectors_path(paths).exists()
    assert not vector_background.running(paths)


def test_a_prewarmed_top_up_is_told_to_exit_while_another_holds_the_lock(repo: Path) -> None:
    paths, _ids = _ledger(repo)
    api_index.reindex(paths, full=True, memory_budget_s=0)
    held = _Held(paths)
    try:
        prewarmed = vector_background.prewarm(paths)
        assert prewarmed is not None
        assert not vector_background.start(paths, 0.0, True, prewarmed)  # the caller embeds
        _prewarm_exits(paths)
    finally:
        held.release()
    assert not vector_background.running(paths)


def test_a_prewarmed_top_up_embeds_what_the_stamp_names(repo: Path) -> None:
    paths, ids = _ledger(repo)
    prewarmed = vector_background.prewarm(paths)
    rep = api_index.reindex(paths, full=True, memory_budget_s=0, vectors_beside=True,
                            prewarmed=prewarmed)
    assert rep.vectors_beside
    assert vector_background.wait(paths, timeout=60)
    meta = read_meta(paths.state_dir)
    assert meta is not None and meta.model_id == emb_mod.DEFAULT_MODEL_ID
    assert meta.vectors >= 2 and meta.vectors_pending == 0
    assert sorted(semantic.item_cosines(paths, "oauth login", set(ids))) == sorted(ids)
