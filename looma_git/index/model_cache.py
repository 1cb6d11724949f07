"""The embedding model's per-user cache: a folded fp32 copy of its weights and a record of verified files.

The shipped model stores int8 weights that a `Cast`/`Mul` turns back into fp32 on EVERY run
(its graph dequantises all 22M weights, the 11.7M-row word table included, before the first
MatMul): one query cost ~70 ms of CPU and ~90 MB of peak memory for a few tokens of work.
Folding those nodes once (onnxruntime's basic optimisation level, the same kernels) and
saving the result with its weights in an external file gives a model that onnxruntime
memory-maps: a query touches only the pages it uses, and a batch skips the per-run
dequantisation (-16% CPU). With MatMul pre-packing off, the vectors are bit-for-bit those of
the shipped model (tests/index/test_model_cache.py), so the two can be mixed in one index.

Building the copy costs ~0.7 CPU-s and 90 MB of disk, so only a process about to embed many
texts builds it (`FOLD_AT_TEXTS`); any process uses it once it is there. A copy that is
missing, partial or unreadable is simply not used. The cache lives in `$LOOMA_CACHE_DIR`, else
`$XDG_CACHE_HOME/looma`, else `~/.cache/looma`; it is never required.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

FOLD_AT_TEXTS = 64  # a batch this big pays for the build in the same run (~0.7 CPU-s)
VERIFIED_FILE = "verified-models.json"
_FOLDED_MODEL = "model.onnx"
_FOLDED_DATA = "model.data"
_STAMP = "stamp.json"
_BUILD_TIMEOUT_S = 300


def cache_root() -> Path | None:
    """The per-user cache directory (not created here); None when no home is known."""
    explicit = os.environ.get("LOOMA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "looma"
    home = os.environ.get("HOME")
    return Path(home) / ".cache" / "looma" if home else None


def _stat_key(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, sort_keys=True))
    os.replace(tmp, path)


def is_verified(path: Path, sha256: str) -> bool:
    """True when `path` was hashed to `sha256` before and has not changed since (same size,
    mtime and inode): hashing the 23 MB model costs ~20 ms of every fresh query process."""
    root = cache_root()
    key = _stat_key(path)
    if root is None or key is None:
        return False
    doc = _read_json(root / VERIFIED_FILE) or {}
    entry = doc.get(str(path))
    return isinstance(entry, dict) and entry.get("sha256") == sha256 and entry.get("stat") == key


def remember_verified(path: Path, sha256: str) -> None:
    """Record that `path` hashed to `sha256` (best effort: a read-only home just re-hashes)."""
    root = cache_root()
    key = _stat_key(path)
    if root is None or key is None:
        return
    with contextlib.suppress(OSError):
        root.mkdir(parents=True, exist_ok=True)
        doc = _read_json(root / VERIFIED_FILE) or {}
        doc = {k: v for k, v in doc.items() if Path(k).exists()}  # uninstalled models go
        doc[str(path)] = {"sha256": sha256, "stat": key}
        _write_json(root / VERIFIED_FILE, doc)


def _folded_dir(model_id: str, sha256: str) -> Path | None:
    try:
        import onnxruntime as ort
    except ImportError:  # no runtime: the embedder reports why; nothing to fold or use
        return None
    root = cache_root()
    # Keyed by the source bytes and the onnxruntime that folded them (its file format).
    return None if root is None else root / "models" / f"{model_id}-{sha256[:16]}-ort{ort.__version__}"


def folded_model(model_id: str, sha256: str) -> Path | None:
    """The folded copy of the model with this sha256, when a complete one is cached."""
    folder = _folded_dir(model_id, sha256)
    if folder is None:
        return None
    stamp = _read_json(folder / _STAMP)
    if stamp is None or stamp.get("source_sha256") != sha256:
        return None
    for name in (_FOLDED_MODEL, _FOLDED_DATA):
        key = _stat_key(folder / name)
        if key is None or key[0] != stamp.get("sizes", {}).get(name):
            return None  # partial or replaced: not used (a later batch rebuilds it)
    return folder / _FOLDED_MODEL


def build_folded(model_path: Path, model_id: str, sha256: str) -> Path | None:
    """Fold the (verified) model's dequantisation into fp32 weights once and cache it; None
    when the cache cannot be written. The build runs in a child process: onnxruntime's
    optimiser holds both weight sets and the serialised model (~275 MB at its peak), which
    would otherwise add to the caller's own peak (an ingest's, with the work model in RAM)."""
    import subprocess
    import sys

    try:
        subprocess.run([sys.executable, "-c", "import sys; from looma_git.index.model_cache "
                        "import _build_main; _build_main(sys.argv[1:])", str(model_path),
                        model_id, sha256], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=_BUILD_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return folded_model(model_id, sha256)


def _build_main(argv: list[str]) -> None:
    model_path, model_id, sha256 = argv
    _build_here(Path(model_path), model_id, sha256)


def _build_here(model_path: Path, model_id: str, sha256: str) -> Path | None:
    """The build itself. Concurrent builders each write their own folder; the first rename
    wins."""
    import onnxruntime as ort

    folder = _folded_dir(model_id, sha256)
    if folder is None:
        return None
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(tmp / _FOLDED_MODEL)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", _FOLDED_DATA)
        # Every weight goes to the external file, which onnxruntime maps instead of copying.
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        ort.InferenceSession(str(model_path), sess_options=options,
                             providers=["CPUExecutionProvider"])
        sizes = {name: os.path.getsize(tmp / name) for name in (_FOLDED_MODEL, _FOLDED_DATA)}
        _write_json(tmp / _STAMP, {"source_sha256": sha256, "model_id": model_id,
                                   "onnxruntime": ort.__version__, "sizes": sizes})
        try:
            os.rename(tmp, folder)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another process got there first
    except Exception:  # onnxruntime's own errors, a full disk, a read-only home: not cached
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    return folded_model(model_id, sha256)
