"""A small persistent cache of query vectors (goal/question -> embedding), in the state dir.

Loading the embedding model costs a fresh process ~0.8 s (onnxruntime, tokenizers, the ONNX
session) against ~1 ms to embed one short goal, and people and agents repeat their goals.
The vector of a text is a pure function of the model, so entries never go stale; they are
keyed by model id and text and stored as raw little-endian float32 (what sqlite-vec reads),
so a hit needs neither numpy nor onnxruntime. The file is a local cache: damaged or foreign
content only costs a re-embed, never a wrong vector of another model.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

FILE_NAME = "query-vectors.json"
MAX_ENTRIES = 512
MAX_BYTES = 8 * 1024 * 1024


def _key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\0{' '.join(text.split())}".encode()).hexdigest()[:32]


class QueryVectorCache:
    """Vectors of one model; `get` and `put` raw float32 bytes."""

    def __init__(self, state_dir: Path, model_id: str, dim: int) -> None:
        self.path = Path(state_dir) / FILE_NAME
        self.model_id = model_id
        self.dim = dim
        self._entries: dict[str, str] | None = None

    def _load(self) -> dict[str, str]:
        if self._entries is None:
            self._entries = {}
            try:
                if self.path.stat().st_size <= MAX_BYTES:
                    doc = json.loads(self.path.read_bytes())
                    if doc.get("model_id") == self.model_id and doc.get("dim") == self.dim:
                        self._entries = {str(k): str(v) for k, v in doc["vectors"].items()}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                pass
        return self._entries

    def get(self, text: str) -> bytes | None:
        """The cached vector of `text`, or None."""
        raw = self._load().get(_key(self.model_id, text))
        if raw is None:
            return None
        try:
            blob = base64.b64decode(raw, validate=True)
        except ValueError:
            return None
        return blob if len(blob) == 4 * self.dim else None

    def put(self, text: str, blob: bytes) -> None:
        """Remember `text`'s vector (the newest MAX_ENTRIES are kept); never raises."""
        if len(blob) != 4 * self.dim:
            return
        entries = self._load()
        key = _key(self.model_id, text)
        entries.pop(key, None)
        entries[key] = base64.b64encode(blob).decode("ascii")
        while len(entries) > MAX_ENTRIES:
            entries.pop(next(iter(entries)))
        tmp = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"model_id": self.model_id, "dim": self.dim,
                                       "vectors": entries}, separators=(",", ":")))
            os.replace(tmp, self.path)
        except OSError:
            try:
                tmp.unlink()
            except OSError:
                pass
