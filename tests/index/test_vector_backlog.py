"""Vectors follow the new work: WorkItems always, what a run's new work added always (with
`embed_new`), a backlog (a cold store) only within the CPU budget and reported as pending,
and each distinct text embedded once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looma_git.gitrepo import find_repo
from looma_git.index import embedder as emb_mod
from looma_git.index import vector_sync


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the real embedder was asked to embed (the model still runs)."""
    if emb_mod.load_default() is None:
        pytest.skip("the default embedding model is not installed")
    seen: list[str] = []
    real = emb_mod.Embedder.embed

    def spy(self: Any, texts: Any, *a: Any, **kw: Any) -> Any:
        seen.extend(texts)
        return real(self, texts, *a, **kw)

    monkeypatch.setattr(emb_mod.Embedder, "embed", spy)
    return seen


def _texts(windows: int) -> list[vector_sync.Text]:
    out: list[vector_sync.Text] = [("wi_1", "workitem", "Google sign-in. sso. Changed: auth.py"),
                                   ("wi_2", "workitem", "Webhook retries. Changed: hooks.py")]
    out += [(f"mem_{i}", "memory", "We'll use Redis for the rate limiter.") for i in range(5)]
    out += [(f"win:s{i}", "window", f"session {i} about the invoice export {i}")
            for i in range(windows)]
    return out


def test_backlog_is_budgeted_new_work_is_not(repo: Path, embedded: list[str]) -> None:
    paths = find_repo(repo)
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    cold = vector_sync.sync(paths, _texts(20), 0.0, embed_new=True)
    # A cold store: only the WorkItems; the rest is backlog, pending and said so.
    assert cold.vectors == 2 and cold.pending == 25
    assert vector_sync.pending_count(paths) == 25
    embedded.clear()
    grown = vector_sync.sync(paths, _texts(21), 0.0, embed_new=True)
    # The new session's window is new work: embedded although the budget is spent; the
    # backlog is not paid by this run.
    assert embedded == ["session 20 about the invoice export 20"]
    assert grown.vectors == 3 and grown.pending == 25
    embedded.clear()
    # Without `embed_new` (a query's refresh) nothing but WorkItems is ever embedded.
    assert vector_sync.sync(paths, _texts(22), 0.0).pending == 26 and embedded == []
    full = vector_sync.sync(paths, _texts(22), None)
    assert full.pending == 0 and full.vectors == 29
    # Five memories with one text: one embedding.
    assert embedded.count("We'll use Redis for the rate limiter.") == 1
    assert vector_sync.pending_count(paths) == 0


def test_a_text_with_a_vector_is_never_left_pending_nor_embedded_again(
        repo: Path, embedded: list[str]) -> None:
    paths = find_repo(repo)
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    assert vector_sync.sync(paths, _texts(2), None).pending == 0
    embedded.clear()
    # Five more memories with the text of five stored ones (a later pass promotes the same
    # decision again): their vector is copied, though the budget is spent.
    more = _texts(2) + [(f"mem_{i}", "memory", "We'll use Redis for the rate limiter.")
                        for i in range(5, 10)]
    out = vector_sync.sync(paths, more, 0.0)
    assert out.pending == 0 and out.vectors == len(more) and embedded == []
    from looma_git.index.vectors import VectorStore

    emb = emb_mod.load_default()
    assert emb is not None
    with VectorStore(vector_sync.vectors_path(paths), emb.dim, emb.model_id) as vs:
        assert vs.vector("mem_7") == vs.vector("mem_0") is not None


def test_stored_vectors_are_of_their_texts_first_tokens_and_older_ones_are_redone(
        repo: Path, embedded: list[str]) -> None:
    import hashlib
    import json

    import numpy as np

    from looma_git.index.vectors import VectorStore

    paths = find_repo(repo)
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    cap = vector_sync.TOKENS_BY_KIND["workitem"]
    assert cap == vector_sync.TOKENS_BY_KIND["window"] == vector_sync.TOKENS_BY_KIND["memory"]
    summary = "Google sign-in. sso. " + " ".join(f"Changed: auth{i}.py, the login form."
                                                 for i in range(10))
    texts: list[vector_sync.Text] = [("wi_1", "workitem", summary),
                                     ("win:s1", "window", summary)]
    assert vector_sync.sync(paths, texts, None).pending == 0
    emb = emb_mod.load_default()
    assert emb is not None
    with VectorStore(vector_sync.vectors_path(paths), emb.dim, emb.model_id) as vs:
        wi, win = (np.frombuffer(vs.vector(i) or b"", dtype="<f4") for i in ("wi_1", "win:s1"))
    # The vector is of the text's first `cap` tokens, not of its whole (256-token) text.
    assert np.allclose(wi, emb.embed([summary], max_tokens=cap)[0], atol=1e-6)
    assert np.allclose(win, wi, atol=1e-6)
    assert float(wi @ emb.embed([summary])[0]) < 0.999
    # A WorkItem recorded from before the cap (its hash without it) is embedded again,
    # although the budget is spent; the window, recorded with the cap, is not.
    record_path = paths.state_dir / vector_sync.EMBEDDED_FILE
    record = json.loads(record_path.read_text())
    record["docs"]["wi_1"] = hashlib.sha1(f"workitem\0{summary}".encode()).hexdigest()
    record_path.write_text(json.dumps(record))
    embedded.clear()
    assert vector_sync.sync(paths, texts, 0.0).pending == 0
    assert embedded == [summary]


def test_a_small_backlog_is_embedded_whole_whatever_the_budget(
        repo: Path, embedded: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Which texts have vectors must not depend on how far a CPU budget got on this machine
    when the whole backlog is small; a large backlog keeps the budget (0 s: none paid)."""
    paths = find_repo(repo)
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    assert len(_texts(20)) - 2 <= vector_sync.WHOLE_BACKLOG
    out = vector_sync.sync(paths, _texts(20), 1e-9, embed_new=True)
    assert out.pending == 0 and out.vectors == 27
    assert vector_sync.pending_count(paths) == 0
    monkeypatch.setattr(vector_sync, "WHOLE_BACKLOG", 10)
    embedded.clear()
    # 40 windows more than the (lowered) threshold: the budget decides, and it is nearly nil.
    big = _texts(60)
    more = vector_sync.sync(paths, big, 1e-9)
    assert more.pending > 0 and len(embedded) <= 16


def test_counts_read_the_record_of_the_stores_own_model(repo: Path) -> None:
    """`counts` (what `reindex` reports without loading a model) follows the model vectors.db
    is stamped with, not the default one: vectors of another model are still counted."""
    from looma_git.index.vectors import VectorStore

    paths = find_repo(repo)
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    texts = _texts(2)
    with VectorStore(vector_sync.vectors_path(paths), 4, "another-model-v1"):
        pass
    done = {i: vector_sync._text_hash(k, t) for i, k, t in texts[:3]}
    vector_sync._write_embedded(paths, "another-model-v1", done, [])
    assert vector_sync.counts(paths, texts) == (3, len(texts) - 3)
