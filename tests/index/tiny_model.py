"""Builds a tiny ONNX encoder and WordPiece tokenizer in-process, so tests run the real loading path."""

from __future__ import annotations

from pathlib import Path

import numpy as np

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "git", "notes", "yaml", "ledger",
         "cat", "dog", "sun", "window", "##s"]
DIM = 8


def _embedding_table() -> np.ndarray:
    """Version-control words point along axis 0, animal/outdoor words along axis 1."""
    rng = np.random.default_rng(7)
    table = rng.normal(0, 0.05, (len(VOCAB), DIM)).astype(np.float32)
    for word in ("git", "notes", "yaml", "ledger"):
        table[VOCAB.index(word), 0] += 1.0
    for word in ("cat", "dog", "sun", "window"):
        table[VOCAB.index(word), 1] += 1.0
    table[VOCAB.index("notes"), 2] += 0.3
    table[VOCAB.index("dog"), 3] += 0.3
    return table


def build_tiny(dir: Path, *, symbolic_dim: bool = False) -> tuple[Path, Path]:
    """Write tiny.onnx and tiny_tokenizer.json into `dir`; return their paths."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    dir.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok_path = dir / "tiny_tokenizer.json"
    tok.save(str(tok_path))

    out_dim: str | int = "hidden" if symbolic_dim else DIM
    graph = helper.make_graph(
        [helper.make_node("Gather", ["E", "input_ids"], ["g"]),
         helper.make_node("Cast", ["token_type_ids"], ["tt"], to=TensorProto.FLOAT),
         helper.make_node("Unsqueeze", ["tt", "ax"], ["tt3"]),
         helper.make_node("Add", ["g", "tt3"], ["last_hidden_state"])],
        "tiny",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
         for n in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", out_dim])],
        initializer=[numpy_helper.from_array(_embedding_table(), "E"),
                     numpy_helper.from_array(np.array([-1], np.int64), "ax")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    model_path = dir / "tiny.onnx"
    onnx.save(model, str(model_path))
    return model_path, tok_path
