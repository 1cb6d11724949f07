"""Which texts have vectors in sqlite-vec, and topping them up within a time budget.

Embedding is most of a reindex (~100 texts/s on 2 cores) and every ledger write triggers one,
so only texts that changed since their vectors were written are embedded again; a record of
the text hash behind each stored vector (`vectors-texts.json`) says which.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looma_git.gitrepo import RepoPaths

EMBEDDED_FILE = "vectors-texts.json"
BATCH = 64

Text = tuple[str, str, str]  # (doc id, kind, text)


@dataclass(frozen=True)
class SyncResult:
    """What a top-up did: the model (None: lexical only, `reason` says why) and the counts."""

    model_id: str | None
    vectors: int = 0
    pending: int = 0  # texts left for a later refresh (time budget)
    reason: str | None = None


def vectors_path(paths: RepoPaths) -> Path:
    return paths.state_dir / "vectors.db"


def item_texts(items: list[Any]) -> list[Text]:
    """WorkItem summaries (with title and aliases) and active memories."""
    texts: list[Text] = [(it.id, "workitem", f"{it.title}. {' '.join(it.aliases)}. {it.summary}")
                         for it in items]
    for it in items:
        texts.extend((m.id, "memory", m.text) for m in it.memories if m.lifecycle == "active")
    return texts


def window_texts(paths: RepoPaths) -> list[Text]:
    """Session-window summaries from the last refinery pass (local only: none on a clone that
    never saw the transcripts)."""
    if not paths.store_db.exists():
        return []
    from looma_git.index import storedb

    conn = storedb.connect(paths, readonly=True)
    try:
        rows = conn.execute("SELECT key, text FROM refine_windows ORDER BY key").fetchall()
    except Exception:
        return []
    finally:
        conn.close()
    return [(f"win:{key}", "window", text) for key, text in rows if text]


def window_owners(paths: RepoPaths) -> dict[str, str]:
    """Vector doc id of each window -> the WorkItem it belongs to."""
    if not paths.store_db.exists():
        return {}
    from looma_git.index import storedb

    conn = storedb.connect(paths, readonly=True)
    try:
        return {f"win:{k}": wi for k, wi in conn.execute(
            "SELECT key, workitem FROM refine_windows")}
    except Exception:
        return {}
    finally:
        conn.close()


def sync(paths: RepoPaths, texts: list[Text], memory_budget_s: float | None) -> SyncResult:
    """Vectors for every WorkItem text (always) and the other texts (within
    `memory_budget_s`, None: no limit); lexical-only when no model is installed."""
    from looma_git.index.embedder import load_default_with_reason

    embedder, reason = load_default_with_reason()
    if embedder is None:
        return SyncResult(None, reason=reason)
    from looma_git.errors import LoomaError
    from looma_git.index.vectors import VectorStore

    wanted = {i: _text_hash(k, t) for i, k, t in texts}
    try:
        with VectorStore(vectors_path(paths), embedder.dim, embedder.model_id) as vs:
            known = _read_embedded(paths, embedder.model_id)
            if known is None or vs.needs_reembed or vs.count() != len(known):
                known = {}
                vs.clear()
            _embedded_path(paths).unlink(missing_ok=True)  # vectors move; the record follows
            vs.delete_many([d for d in known if d not in wanted])
            todo = [(i, k, t) for i, k, t in texts if known.get(i) != wanted[i]]
            done = {i: h for i, h in known.items() if i in wanted}
            must = [x for x in todo if x[1] == "workitem"]
            rest = [x for x in todo if x[1] != "workitem"]
            t0 = time.perf_counter()
            for batch in _batches(must) + _batches(rest):
                if batch[0][1] != "workitem" and memory_budget_s is not None and (
                        time.perf_counter() - t0 >= memory_budget_s):
                    break
                vecs = embedder.embed([t for _, _, t in batch])
                vs.upsert_many([(i, k, v) for (i, k, _), v in zip(batch, vecs, strict=True)])
                done.update((i, wanted[i]) for i, _, _ in batch)
            _write_embedded(paths, embedder.model_id, done)
    except (LoomaError, OSError) as exc:
        return SyncResult(None, reason=exc.message if isinstance(exc, LoomaError) else str(exc))
    return SyncResult(embedder.model_id, vectors=len(done), pending=len(wanted) - len(done))


def _batches(items: list[Text], size: int = BATCH) -> list[list[Text]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _text_hash(kind: str, text: str) -> str:
    return hashlib.sha1(f"{kind}\0{text}".encode()).hexdigest()


def _embedded_path(paths: RepoPaths) -> Path:
    return paths.state_dir / EMBEDDED_FILE


def _read_embedded(paths: RepoPaths, model_id: str) -> dict[str, str] | None:
    """doc id -> hash of the text its stored vector was computed from (None: unknown)."""
    try:
        doc = json.loads(_embedded_path(paths).read_bytes())
        if doc.get("model_id") != model_id or not isinstance(doc.get("docs"), dict):
            return None
        return {str(k): str(v) for k, v in doc["docs"].items()}
    except (OSError, ValueError, AttributeError):
        return None


def _write_embedded(paths: RepoPaths, model_id: str, docs: dict[str, str]) -> None:
    tmp = paths.state_dir / f".{EMBEDDED_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"model_id": model_id, "docs": docs}, sort_keys=True))
    os.replace(tmp, _embedded_path(paths))
