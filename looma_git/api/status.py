"""Library surface of `looma status`: ingestion, index freshness, embedder, hooks, health."""

from __future__ import annotations

import os
from typing import Any

from looma_git import health
from looma_git.gitrepo import RepoPaths
from looma_git.index import reads


def _ingest_running(paths: RepoPaths) -> bool:
    """Another process holds `ingest.lock` (an ingest, or the hooks' drainer, is running)."""
    import fcntl

    lock = paths.state_dir / "ingest.lock"
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _state(paths: RepoPaths) -> dict[str, Any]:
    """One word for where this clone stands, with what to run next."""
    from looma_git.store.heads import ledger_head

    if not (paths.state_dir / "clone-id").exists() and ledger_head(paths) is None:
        return {"state": "not initialized", "next": "looma init"}
    if _ingest_running(paths):
        return {"state": "ingest running", "next": "wait for it, or `looma hooks status`"}
    if ledger_head(paths) is None:
        return {"state": "not initialized", "next": "looma init"}
    if not paths.store_db.exists():
        return {"state": "no transcripts read", "next": "looma ingest (or looma reindex)"}
    if reads.model_stale(paths):
        return {"state": "work model stale", "next": "looma reprocess"}
    return {"state": "up to date", "next": None}


def _index(paths: RepoPaths) -> dict[str, Any]:
    from looma_git.index.meta import read_meta
    from looma_git.store.heads import ledger_head

    meta = read_meta(paths.state_dir)
    head = ledger_head(paths)
    if meta is None:
        return {"state": "missing", "ledger_commit": head, "fresh": False}
    return {"state": "ok", "built_at": meta.built_at, "built_from": meta.ledger_commit,
            "ledger_commit": head, "fresh": not meta.is_stale(head), "model_id": meta.model_id,
            "vectors": meta.vectors, "vectors_pending": meta.vectors_pending}


def _embedder() -> dict[str, Any]:
    """Whether semantic search is available, without loading the model (cheap)."""
    from looma_git.errors import LoomaError
    from looma_git.index.embedder import DEFAULT_MODEL_ID, default_model_files

    try:
        default_model_files()
        return {"available": True, "model_id": DEFAULT_MODEL_ID}
    except LoomaError as exc:
        return {"available": False, "mode": "lexical only", "reason": exc.message}


def _hooks(paths: RepoPaths) -> dict[str, Any]:
    import shutil

    from looma_git.api.hooks import status as hooks_status

    try:
        st = hooks_status(paths, path_fallback=bool(shutil.which("looma")))
        return st.model_dump(mode="json")
    except Exception as exc:
        return {"error": str(exc)}


def status(paths: RepoPaths) -> dict[str, Any]:
    """Everything `looma status` shows."""
    from looma_git.api import ledger

    state = ledger.load_state(paths)
    return {
        "state": _state(paths),
        "repository": str(paths.worktree or paths.common_dir),
        "ledger": {"workitems": sum(1 for w in state.workitems.values() if w.live),
                   "memories": len(state.memories), "links": len(state.links),
                   "lamport": state.head_lamport, "conflicts": len(state.conflicts),
                   "warnings": list(state.warnings)},
        "ingestion": reads.ingestion(paths),
        "index": _index(paths),
        "embedder": _embedder(),
        "hooks": _hooks(paths),
    }


def health_metrics(paths: RepoPaths, base: dict[str, Any]) -> dict[str, float | None]:
    """The DESIGN §7 metrics from the ledger, the local graph, ingestion and hooks."""
    from looma_git.api import ledger
    from looma_git.gitrepo import require_worktree
    from looma_git.store.gitfacts import list_commits

    state = ledger.load_state(paths)
    wis = list(state.workitems.values())
    live = [w for w in wis if w.live]
    ops = ledger.log(paths)
    merges = sum(1 for o in ops if o.op == "workitem.merge")
    fps = sum(1 for w in wis if w.false_positive)
    local_total = local_promoted = orphans = related = 0
    for _, w, promoted in reads.local_rows(paths, "refine_workitems"):
        if w.get("quarantined") or w.get("readonly"):
            continue
        local_total += 1
        local_promoted += int(promoted)
        if not promoted:
            if w.get("related"):
                related += 1
            else:
                orphans += 1
    ing = base.get("ingestion", {})
    noise = sum((ing.get("counts") or {}).get("noise", {}).values())
    redactions = sum((ing.get("counts") or {}).get("redaction", {}).values())
    events = int(ing.get("events") or 0)
    commits = [c for c in list_commits(require_worktree(paths)) if len(c.parents) <= 1]
    linked = {sha for sha, _ in state.links}
    unlinked = sum(1 for c in commits if c.sha not in linked)
    latency = ((base.get("hooks") or {}).get("latency") or {})

    def pct(key: str) -> float | None:
        """The worst series' percentile (drain time, queue wait...); None without samples."""
        vals = [float(v[key]) for v in latency.values() if isinstance(v, dict) and key in v]
        return max(vals) if vals else None
    idx = base.get("index", {})
    return {
        "candidate_conversion": health.ratio(local_promoted, local_total),
        "merge_rate": health.ratio(merges, len(live) + merges),
        "false_positive_rate": health.ratio(fps, len(wis)),
        "avg_workitem_files": health.ratio(sum(len(w.files) for w in live), len(live)),
        "avg_workitem_sessions": health.ratio(sum(len(w.sessions) for w in live), len(live)),
        "orphan_candidates": float(orphans),
        "unresolved_related": float(related),
        "noise_ratio": health.ratio(noise, noise + events),
        "unlinked_commit_ratio": health.ratio(unlinked, len(commits)),
        "redaction_hits": float(redactions),
        "index_fresh": 1.0 if idx.get("fresh") else 0.0,
        "index_lag_ops": 0.0 if idx.get("fresh") else 1.0,
        "hook_latency_p50_ms": pct("p50"),
        "hook_latency_p95_ms": pct("p95"),
        "hook_latency_p99_ms": pct("p99"),
        "sync_conflicts": float(len(state.conflicts)),
    }


def health_report(paths: RepoPaths) -> dict[str, Any]:
    """Metrics now, a snapshot kept as a time series, and warnings (thresholds and trends)."""
    base = status(paths)
    metrics = health_metrics(paths, base)
    previous = reads.save_health(paths, metrics)
    warns = health.warnings(metrics, previous)
    return {**base, "health": metrics, "previous": previous,
            "redaction_by_family": redaction_by_family(base),
            "warnings": [{"metric": w.metric, "message": w.message} for w in warns]}


def redaction_by_family(base: dict[str, Any]) -> dict[str, int]:
    """Redaction hits of every ingest so far, summed per rule family (`github`, `credential`,
    `high_entropy`...), largest first; the counts are kept per `agent:kind`."""
    from looma_git.redact import family_of

    counts = ((base.get("ingestion") or {}).get("counts") or {}).get("redaction", {})
    fams: dict[str, int] = {}
    for key, n in counts.items():
        fam = family_of(str(key).rpartition(":")[2])
        fams[fam] = fams.get(fam, 0) + int(n)
    return dict(sorted(fams.items(), key=lambda kv: (-kv[1], kv[0])))
