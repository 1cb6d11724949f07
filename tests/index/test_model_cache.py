"""The per-user model cache on the real MiniLM: the folded copy's vectors are the shipped
model's bit for bit; partial or unwritable caches are not used; verified files are re-hashed
once they change."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from looma_git.index import embedder as emb
from looma_git.index import model_cache

TEXTS = ["How do I rotate the database credentials?",
         "Retry the webhook delivery with exponential backoff and full jitter when the "
         "receiver answers 503; give up after five attempts and record the failure.",
         "", "auth", "The cat sat on the windowsill in the sun. " * 40]


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("LOOMA_CACHE_DIR", str(root))
    return root


def _shipped() -> emb.Embedder:
    embedder, reason = emb.load_default_with_reason()
    if embedder is None:
        pytest.skip(f"default embedding model unavailable: {reason}")
    return embedder


def test_folded_copy_gives_the_shipped_models_vectors_bit_for_bit(cache: Path) -> None:
    shipped = _shipped()
    assert shipped.source is not None  # nothing cached yet: the shipped model runs
    assert emb.for_batch(shipped, model_cache.FOLD_AT_TEXTS - 1) is shipped  # too small to build
    assert model_cache.folded_model(emb.DEFAULT_MODEL_ID, emb.MODEL_SHA256) is None
    folded = emb.for_batch(shipped, model_cache.FOLD_AT_TEXTS)
    assert folded is not shipped and folded.source is None
    path = model_cache.folded_model(emb.DEFAULT_MODEL_ID, emb.MODEL_SHA256)
    assert path is not None and path.is_relative_to(cache)
    # Every weight is in the external file (the one onnxruntime maps), the graph is small.
    assert (path.parent / "model.data").stat().st_size > 80_000_000
    assert path.stat().st_size < 1_000_000
    a, b = shipped.embed(TEXTS), folded.embed(TEXTS)
    assert np.array_equal(a, b)
    assert np.array_equal(shipped.embed(TEXTS[:1]), folded.embed(TEXTS[:1]))
    # A later process loads the folded copy straight away, and never builds it again.
    again = emb.load_default()
    assert again is not None and again.source is None
    assert emb.for_batch(again, 1000) is again
    assert np.array_equal(again.embed(TEXTS), a)


def test_partial_copy_is_not_used(cache: Path) -> None:
    shipped = _shipped()
    emb.for_batch(shipped, model_cache.FOLD_AT_TEXTS)
    path = model_cache.folded_model(emb.DEFAULT_MODEL_ID, emb.MODEL_SHA256)
    assert path is not None
    data = path.parent / "model.data"
    with open(data, "r+b") as fh:  # a copy cut short (a full disk, a killed build)
        fh.truncate(data.stat().st_size // 2)
    assert model_cache.folded_model(emb.DEFAULT_MODEL_ID, emb.MODEL_SHA256) is None
    loaded = emb.load_default()
    assert loaded is not None and loaded.source is not None  # the shipped model again
    assert np.array_equal(loaded.embed(TEXTS[:2]), shipped.embed(TEXTS[:2]))


def test_unwritable_cache_keeps_the_shipped_model(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("LOOMA_CACHE_DIR", str(blocker))
    shipped = _shipped()
    assert emb.for_batch(shipped, 10_000) is shipped
    assert not list(tmp_path.glob(".*tmp"))


def test_verified_record_is_dropped_when_the_file_changes(cache: Path, tmp_path: Path) -> None:
    f = tmp_path / "model.bin"
    f.write_bytes(b"weights v1")
    sha = hashlib.sha256(b"weights v1").hexdigest()
    assert not model_cache.is_verified(f, sha)
    model_cache.remember_verified(f, sha)
    assert model_cache.is_verified(f, sha)
    assert not model_cache.is_verified(f, "0" * 64)  # another pin
    f.write_bytes(b"weights v2")  # same path, other bytes: hashed again
    os.utime(f, ns=(1, 1))
    assert not model_cache.is_verified(f, sha)


def test_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.delenv("LOOMA_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert model_cache.cache_root() == tmp_path / ".cache" / "looma"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache.cache_root() == tmp_path / "xdg" / "looma"
    monkeypatch.setenv("LOOMA_CACHE_DIR", str(tmp_path / "mine"))
    assert model_cache.cache_root() == tmp_path / "mine"
