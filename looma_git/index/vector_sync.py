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
# Tokens (with [CLS] and [SEP]) a stored text is embedded from (queries keep the model's 256).
# The model's cost is linear in tokens (~0.35 ms of CPU a token on 2 cores), and a WorkItem's
# text is ~150 of them: at 1,500 sessions the 250 WorkItems cost 13.7 CPU-s at 256 and 4.9 at
# 64, the quality benchmarks' resume and ask scores unchanged with every stored kind cut to 64
# (the WorkItems alone cut to 64, 80 or 96 lost a paraphrase of holdout3 that ranks again with
# its windows and memories cut the same way; 48 and 32 lost more: docs/performance.md).
TOKENS_BY_KIND = {"workitem": 64, "window": 64, "memory": 64}
# A backlog this small is embedded whole by a budgeted run (~22 ms a text at 64 tokens: at most
# ~3 CPU-s, once): a small project's store is complete after its first ingest, so which of its
# texts have vectors, and so the meaning-ranked answers, do not depend on how far a CPU-time
# budget got on this machine (the teamwork benchmark's vague goal flipped with the 18-34 of its
# 95 texts a 1 s budget left pending, by run). Larger backlogs keep the budget.
WHOLE_BACKLOG = 128

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


def sync(paths: RepoPaths, texts: list[Text], memory_budget_s: float | None,
         embed_new: bool = False) -> SyncResult:
    """Vectors for every WorkItem text (always) and the other texts: with `embed_new`, those
    that are new or changed since the last top-up (new work, so the cost follows the work,
    not the history); then the backlog (texts never embedded: a cold store, a fresh clone,
    earlier runs' leftovers) within `memory_budget_s` CPU seconds (None: no limit). What is
    left is recorded as pending, reported, and topped up by later runs. Lexical-only when no
    model is installed."""
    from looma_git.index.embedder import (
        DEFAULT_MODEL_ID,
        for_batch,
        load_default_with_reason,
        prepare_batch,
    )

    wanted = {i: _text_hash(k, t) for i, k, t in texts}
    # How many texts this run will embed at least (WorkItems whose text changed; everything
    # without a budget), known before any model is loaded.
    record = _read_embedded(paths, DEFAULT_MODEL_ID)
    seen_before = record[0] if record is not None else {}
    prepare_batch(sum(1 for i, k, _ in texts if seen_before.get(i) != wanted[i]
                      and (k == "workitem" or memory_budget_s is None)))
    embedder, reason = load_default_with_reason()
    if embedder is None:
        return SyncResult(None, reason=reason)
    from looma_git.errors import LoomaError
    from looma_git.index.vectors import VectorStore

    try:
        with VectorStore(vectors_path(paths), embedder.dim, embedder.model_id) as vs:
            if embedder.model_id != DEFAULT_MODEL_ID:  # (else the record read above: one
                record = _read_embedded(paths, embedder.model_id)  # parse of ~10^4 hashes)
            known, before = record if record is not None else ({}, None)
            if record is None or vs.needs_reembed or vs.count() != len(known):
                known, before = {}, None
                vs.clear()
            _embedded_path(paths).unlink(missing_ok=True)  # vectors move; the record follows
            vs.delete_many([d for d in known if d not in wanted])
            todo = [(i, k, t) for i, k, t in texts if known.get(i) != wanted[i]]
            done = {i: h for i, h in known.items() if i in wanted}
            # New since the last top-up: not embedded then and not left pending then (a
            # store with no record of what was pending has no "new": all of it is backlog).
            judged = embed_new and before is not None
            prev = before or set()

            def first(x: Text) -> bool:
                return x[1] == "workitem" or (judged and (x[0] in known or x[0] not in prev))

            must = [x for x in todo if first(x)]
            rest = [x for x in todo if not first(x)]
            budget = None if memory_budget_s and len(rest) <= WHOLE_BACKLOG else memory_budget_s
            # A batch big enough runs the folded model (same vectors, index/model_cache).
            embedder = for_batch(embedder, len(must) + (len(rest) if budget is None else 0))
            # (cap, text) -> its vector: those embedded this run, and those stored under
            # another id (five memories with one text; a window that moved to another WorkItem).
            seen = _stored(vs, todo, wanted, done)
            for batch in _batches(must):
                _embed_into(vs, embedder, batch, seen)
                done.update((i, wanted[i]) for i, _, _ in batch)
            c0 = time.process_time()  # CPU, not wall: the same work whatever the load
            for batch in _batches(rest, 16):
                if budget is not None and time.process_time() - c0 >= budget:
                    break
                _embed_into(vs, embedder, batch, seen)
                done.update((i, wanted[i]) for i, _, _ in batch)
            # What the budget left whose text has a vector already costs no model run.
            free = [x for x in rest if x[0] not in done and _key(x[1], x[2]) in seen]
            vs.upsert_many((i, k, seen[_key(k, t)]) for i, k, t in free)
            done.update((i, wanted[i]) for i, _, _ in free)
            pending = sorted(i for i in wanted if i not in done)
            _write_embedded(paths, embedder.model_id, done, pending)
    except (LoomaError, OSError) as exc:
        return SyncResult(None, reason=exc.message if isinstance(exc, LoomaError) else str(exc))
    return SyncResult(embedder.model_id, vectors=len(done), pending=len(pending))


def _key(kind: str, text: str) -> tuple[int | None, str]:
    """What a vector is a function of: the text and the tokens it is cut to (None: the model's)."""
    return TOKENS_BY_KIND.get(kind), text


def _stored(vs: Any, todo: list[Text], wanted: dict[str, str], done: dict[str, str]
            ) -> dict[tuple[int | None, str], Any]:
    """(cap, text) -> the stored vector of another id with the same text, for the texts to embed
    (read before this run replaces any vector). A text's vector depends neither on its id
    nor on the batch it was embedded in (the default model gave the same bits alone and in
    batches of 1-32 for the scale history's texts), so a copy is what embedding would give."""
    holder: dict[str, str] = {}
    for i, h in done.items():
        holder.setdefault(h, i)
    out: dict[tuple[int | None, str], Any] = {}
    for i, k, t in todo:
        other = holder.get(wanted[i])
        if other is not None and _key(k, t) not in out and (vec := vs.vector(other)) is not None:
            out[_key(k, t)] = vec
    return out


def _embed_into(vs: Any, embedder: Any, batch: list[Text],
                seen: dict[tuple[int | None, str], Any]) -> None:
    """Embed each distinct text once per run (`seen`: 1,205 memories held 276 distinct texts
    on the scale benchmark), cut to its kind's tokens, and store its vector under every id
    that has it."""
    distinct = [x for x in dict.fromkeys(_key(k, t) for _, k, t in batch) if x not in seen]
    for cap in dict.fromkeys(c for c, _ in distinct):
        group = [t for c, t in distinct if c == cap]
        vecs = embedder.embed(group) if cap is None else embedder.embed(group, max_tokens=cap)
        seen.update(zip(((cap, t) for t in group), vecs, strict=True))
    vs.upsert_many([(i, k, seen[_key(k, t)]) for i, k, t in batch])


def _batches(items: list[Text], size: int = BATCH) -> list[list[Text]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _text_hash(kind: str, text: str) -> str:
    """What the stored vector of a text was computed from; a kind's token cap is part of it
    (WorkItem vectors written before the cap are embedded again, once)."""
    cap = TOKENS_BY_KIND.get(kind)
    key = f"{kind}\0{text}" if cap is None else f"{kind}\0{cap}\0{text}"
    return hashlib.sha1(key.encode()).hexdigest()


def _embedded_path(paths: RepoPaths) -> Path:
    return paths.state_dir / EMBEDDED_FILE


def _read_embedded(paths: RepoPaths, model_id: str
                   ) -> tuple[dict[str, str], set[str] | None] | None:
    """(doc id -> hash of the text its stored vector was computed from, ids left pending by
    the last top-up or None when not recorded); None: unknown."""
    try:
        doc = json.loads(_embedded_path(paths).read_bytes())
        if doc.get("model_id") != model_id or not isinstance(doc.get("docs"), dict):
            return None
        pending = doc.get("pending")
        return ({str(k): str(v) for k, v in doc["docs"].items()},
                {str(i) for i in pending} if isinstance(pending, list) else None)
    except (OSError, ValueError, AttributeError):
        return None


def _write_embedded(paths: RepoPaths, model_id: str, docs: dict[str, str],
                    pending: list[str]) -> None:
    tmp = paths.state_dir / f".{EMBEDDED_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"model_id": model_id, "docs": docs, "pending": pending},
                              sort_keys=True))
    os.replace(tmp, _embedded_path(paths))


def counts(paths: RepoPaths, texts: list[Text]) -> tuple[int, int]:
    """(texts with a vector of their current text, texts without) per the record of the last
    top-up, the model not loaded (what a deferred top-up starts from): the record of the
    model vectors.db is stamped with, which need not be the default one."""
    from looma_git.index.embedder import DEFAULT_MODEL_ID
    from looma_git.index.vectors import stamp

    stamped = stamp(vectors_path(paths))
    record = _read_embedded(paths, stamped[0] if stamped else DEFAULT_MODEL_ID)
    known = record[0] if record is not None else {}
    have = sum(1 for i, k, t in texts if known.get(i) == _text_hash(k, t))
    return have, len(texts) - have


def pending_count(paths: RepoPaths) -> int | None:
    """How many texts the last top-up left without a vector (None: not recorded)."""
    try:
        doc = json.loads(_embedded_path(paths).read_bytes())
        return len(doc["pending"]) if isinstance(doc.get("pending"), list) else None
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None
