"""What `looma status` reports about a clone: where it stands, ledger counts, store.db,
index freshness, the embedder, and (with --health) the DESIGN §7 metrics as a time series.

The hooks' part is read by the hooks layer and handed in (the core never imports it).
"""

from __future__ import annotations

import os
from pathlib import Path

from looma_git import health
from looma_git.gitrepo import RepoPaths
from looma_git.index import reads
from looma_git.ledger.state import LedgerState
from looma_git.wire.results import HooksStatus
from looma_git.wire.status import (
    EmbedderOut,
    HealthMetrics,
    HealthWarning,
    IndexOut,
    IngestionOut,
    LedgerCounts,
    StateOut,
    StatusOut,
    Unavailable,
)


def _ingest_running(paths: RepoPaths) -> bool:
    """Another process holds `ingest.lock` or `pass.lock` (an ingest reading or building its
    work model, or the hooks' drainer, is running)."""
    return any(_held(paths.state_dir / name) for name in ("ingest.lock", "pass.lock"))


def _held(lock: Path) -> bool:
    import fcntl

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


def clone_state(paths: RepoPaths) -> StateOut:
    """One word for where this clone stands, with what to run next."""
    from looma_git.store.heads import ledger_head

    if not (paths.state_dir / "clone-id").exists() and ledger_head(paths) is None:
        return StateOut(state="not initialized", next="looma init")
    if _ingest_running(paths):
        return StateOut(state="ingest running", next="wait for it, or `looma hooks status`")
    if ledger_head(paths) is None:
        return StateOut(state="not initialized", next="looma init")
    if events_state(paths) == "none":
        return StateOut(state="no transcripts read", next="looma ingest (or looma reindex)")
    if reads.model_stale(paths):
        return StateOut(state="work model stale", next="looma reprocess")
    return StateOut(state="up to date", next=None)


def events_state(paths: RepoPaths) -> str:
    """Whether transcripts were read here: "none" (no store.db, or no ingest run yet: a health
    snapshot alone creates the file), "empty" (read, nothing kept), "some", or
    "unreadable" (a damaged store.db)."""
    if not paths.store_db.exists():
        return "none"
    from looma_git.errors import LoomaError
    from looma_git.index import storedb

    try:
        conn = storedb.connect(paths, readonly=True)
    except LoomaError:
        return "unreadable"
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='events'"
                        ).fetchone() is None:
            return "none"
        if conn.execute("SELECT 1 FROM events LIMIT 1").fetchone():
            return "some"
        # Every table exists once store.db is opened for writing (its migrations): an ingest
        # run is told by the run counter it leaves in meta.
        ran = conn.execute("SELECT 1 FROM meta WHERE key='ingest_run'").fetchone()
        return "empty" if ran else "none"
    except Exception:  # a damaged file: reported by the ingestion line, not hidden
        return "unreadable"
    finally:
        conn.close()


def has_events(paths: RepoPaths) -> bool:
    """Any transcript event was ingested here."""
    return events_state(paths) == "some"


def _index(paths: RepoPaths) -> IndexOut:
    from looma_git.index import vector_background
    from looma_git.index.meta import read_meta
    from looma_git.store.heads import ledger_head

    meta = read_meta(paths.state_dir)
    head = ledger_head(paths)
    if meta is None:
        return IndexOut(state="missing", ledger_commit=head, fresh=False)
    return IndexOut(state="ok", built_at=meta.built_at, built_from=meta.ledger_commit,
                    ledger_commit=head, fresh=not meta.is_stale(head), model_id=meta.model_id,
                    vectors=meta.vectors, vectors_pending=meta.vectors_pending,
                    embedding_now=vector_background.running(paths))


def _embedder() -> EmbedderOut:
    """Whether semantic search is available, without loading the model (cheap)."""
    from looma_git.errors import LoomaError
    from looma_git.index.embedder import DEFAULT_MODEL_ID, default_model_files

    try:
        default_model_files()
        return EmbedderOut(available=True, model_id=DEFAULT_MODEL_ID)
    except LoomaError as exc:
        return EmbedderOut(available=False, mode="lexical only", reason=exc.message)


def _ingestion(paths: RepoPaths) -> IngestionOut | Unavailable:
    if events_state(paths) == "none":
        return IngestionOut(sessions={}, events=0, last_ingest=None)
    data = reads.ingestion(paths)
    if "error" in data:
        return Unavailable(error=str(data["error"]))
    return IngestionOut.model_validate(data)


def _ledger_state(paths: RepoPaths) -> LedgerState:
    from looma_git.store.ledger_ref import LedgerStore

    return LedgerStore(paths).state()


def status(paths: RepoPaths, hooks: HooksStatus | Unavailable) -> StatusOut:
    """Everything `looma status` shows; `hooks` is what the hooks layer read."""
    state = _ledger_state(paths)
    return StatusOut(
        state=clone_state(paths),
        repository=str(paths.worktree or paths.common_dir),
        ledger=LedgerCounts(workitems=sum(1 for w in state.workitems.values() if w.live),
                            memories=len(state.memories), links=len(state.links),
                            lamport=state.head_lamport, conflicts=len(state.conflicts),
                            warnings=list(state.warnings)),
        ingestion=_ingestion(paths), index=_index(paths), embedder=_embedder(), hooks=hooks)


def _counted(ing: IngestionOut | Unavailable, kind: str) -> dict[str, int]:
    return ing.counts.get(kind, {}) if isinstance(ing, IngestionOut) else {}


def health_metrics(paths: RepoPaths, base: StatusOut) -> HealthMetrics:
    """The DESIGN §7 metrics from the ledger, the local graph, ingestion and hooks."""
    from looma_git.gitrepo import require_worktree
    from looma_git.store.gitfacts import list_commits
    from looma_git.store.ledger_ref import LedgerStore

    store = LedgerStore(paths)
    state = store.state()
    wis = list(state.workitems.values())
    live = [w for w in wis if w.live]
    merges = sum(1 for o in store.read().ops if o.op == "workitem.merge")
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
    noise = sum(_counted(base.ingestion, "noise").values())
    redactions = sum(_counted(base.ingestion, "redaction").values())
    events = base.ingestion.events if isinstance(base.ingestion, IngestionOut) else 0
    commits = [c for c in list_commits(require_worktree(paths)) if len(c.parents) <= 1]
    linked = {sha for sha, _ in state.links}
    unlinked = sum(1 for c in commits if c.sha not in linked)
    latency = base.hooks.latency if isinstance(base.hooks, HooksStatus) else {}

    def pct(key: str) -> float | None:
        """The worst series' percentile (drain time, queue wait...); None without samples."""
        vals = [float(v[key]) for v in latency.values() if key in v]
        return max(vals) if vals else None
    fresh = base.index.fresh
    return HealthMetrics(
        candidate_conversion=health.ratio(local_promoted, local_total),
        merge_rate=health.ratio(merges, len(live) + merges),
        false_positive_rate=health.ratio(fps, len(wis)),
        avg_workitem_files=health.ratio(sum(len(w.files) for w in live), len(live)),
        avg_workitem_sessions=health.ratio(sum(len(w.sessions) for w in live), len(live)),
        orphan_candidates=float(orphans),
        unresolved_related=float(related),
        noise_ratio=health.ratio(noise, noise + events),
        unlinked_commit_ratio=health.ratio(unlinked, len(commits)),
        redaction_hits=float(redactions),
        index_fresh=1.0 if fresh else 0.0,
        index_lag_ops=0.0 if fresh else 1.0,
        hook_latency_p50_ms=pct("p50"),
        hook_latency_p95_ms=pct("p95"),
        hook_latency_p99_ms=pct("p99"),
        sync_conflicts=float(len(state.conflicts)),
    )


def with_health(paths: RepoPaths, base: StatusOut) -> StatusOut:
    """`base` plus the metrics now, the previous snapshot (this one is kept as the next
    run's), the warnings (thresholds and trends) and redactions by rule family."""
    metrics = health_metrics(paths, base)
    now = metrics.model_dump()
    previous = reads.save_health(paths, now)
    warns = health.warnings(now, previous)
    return base.model_copy(update={
        "health": metrics, "previous": previous,
        "redaction_by_family": redaction_by_family(_counted(base.ingestion, "redaction")),
        "warnings": [HealthWarning(metric=w.metric, message=w.message) for w in warns]})


def redaction_by_family(counts: dict[str, int]) -> dict[str, int]:
    """Redaction hits (kept per `agent:kind`) summed per rule family (`github`,
    `credential`, `high_entropy`...), largest first."""
    from looma_git.redact import family_of

    fams: dict[str, int] = {}
    for key, n in counts.items():
        fam = family_of(str(key).rpartition(":")[2])
        fams[fam] = fams.get(fam, 0) + int(n)
    return dict(sorted(fams.items(), key=lambda kv: (-kv[1], kv[0])))
