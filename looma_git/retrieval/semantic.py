"""Ranking by meaning: WorkItems and memories by cosine with a goal, one embedder per process
and the query-vector cache (words decide first; see retrieval/match.py)."""

from __future__ import annotations

import contextlib
from typing import Any

from looma_git.gitrepo import RepoPaths
from looma_git.retrieval import match
from looma_git.retrieval.records import ItemRecord

# One embedder per process: loading the ONNX session costs ~0.4 s, and a long-lived
# process (the MCP server) answers many goals. Only a successful load is kept, so a model
# installed later is picked up (a failed load is cheap: an import or a hash check).
_EMBEDDER: Any = None


def _embedder() -> Any:
    global _EMBEDDER
    if _EMBEDDER is None:
        from looma_git.index.embedder import load_default

        _EMBEDDER = load_default()
    return _EMBEDDER


def _say(line: str) -> None:
    import sys

    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def rank_goal(paths: RepoPaths, goal: str, items: list[ItemRecord]) -> list[match.Match]:
    """Words first; meaning (cosines) only when the words do not already decide the goal
    (`match.lexical_decides`): then no model is loaded and no vector is read."""
    lexical = match.rank(goal, items)
    if not items or match.lexical_decides(lexical):
        return lexical
    semantic = item_cosines(paths, goal, {it.id for it in items})
    return match.rank(goal, items, semantic) if semantic else lexical


def item_cosines(paths: RepoPaths, text: str, ids: set[str]) -> dict[str, float]:
    """WorkItem id -> cosine of `text` with its summary or its closest session window."""
    near = query_cosines(paths, text, ("workitem", "window"), k=200)
    if not near:
        return {}
    owners: dict[str, str] = {}
    if any(doc.startswith("win:") for doc in near):
        from looma_git.index.vector_sync import window_owners

        owners = window_owners(paths)
    out: dict[str, float] = {}
    for doc, cos in near.items():
        wi = owners.get(doc, doc) if doc.startswith("win:") else doc
        if wi in ids and cos > out.get(wi, -1.0):
            out[wi] = cos
    return out


def query_cosines(paths: RepoPaths, text: str, kinds: tuple[str, ...], k: int = 50
                  ) -> dict[str, float] | None:
    """Vector doc id -> cosine with `text` for docs of these kinds; None without vectors.

    The query's vector comes from the query-vector cache when this text was asked before
    (no model loaded, no numpy); otherwise the model embeds it once and the cache keeps it.
    """
    from looma_git.index import vector_background, vectors
    from looma_git.index.vector_sync import vectors_path

    # Right after a cold ingest a detached process is still embedding: rank on the vectors
    # it writes, not on none or some of them (one flock when none runs); a wait is said on
    # stderr (stdout may be JSON or the MCP stream) and bounded (vector_background.WAIT_S).
    vector_background.wait(paths, say=_say)
    path = vectors_path(paths)
    found = vectors.stamp(path)
    if found is None:
        return None
    model_id, dim = found
    try:
        from looma_git.index.query_cache import QueryVectorCache

        cache = QueryVectorCache(paths.state_dir, model_id, dim)
        blob = cache.get(text)
        if blob is None:
            emb = _embedder()
            if emb is None or emb.model_id != model_id or emb.dim != dim:
                return None
            blob = bytes(emb.embed([text])[0].astype("<f4").tobytes())
            cache.put(text, blob)
        with vectors.VectorStore(path, dim, model_id) as vs:
            return {doc: 1.0 - dist for doc, dist in vs.knn(blob, k, kind=kinds)}
    except Exception:  # the vector path is an optional boost; lexical matching stands alone
        return None
