"""Wire models of `looma status [--health] --json`: state, ledger, ingestion, index, embedder,
hooks, and the health metrics with their warnings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from looma_git.wire.results import HooksStatus


class Unavailable(BaseModel):
    """A part that could not be read (a damaged store.db, unreadable hooks): why."""

    error: str


class StateOut(BaseModel):
    state: Literal["not initialized", "ingest running", "no transcripts read",
                   "work model stale", "up to date"]
    next: str | None


class LedgerCounts(BaseModel):
    """What the fold of refs/looma/ledger holds."""

    workitems: int  # live ones
    memories: int
    links: int
    lamport: int
    conflicts: int
    warnings: list[str]


class IngestionOut(BaseModel):
    """store.db: sessions per agent, events, the last ingest, the ingest counters."""

    sessions: dict[str, int]
    events: int
    last_ingest: int | None  # unix time of the newest event's ingest
    # kind (noise, redaction, skipped...) -> key (`agent:reason`) -> count, over every ingest
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)


class IndexOut(BaseModel):
    """The search index's stamp against the ledger head."""

    state: Literal["ok", "missing"]
    ledger_commit: str | None
    fresh: bool
    built_at: str | None = None
    built_from: str | None = None
    model_id: str | None = None
    vectors: int | None = None
    vectors_pending: int | None = None  # texts still without a vector (each ingest embeds some)
    embedding_now: bool = False  # a detached process embeds a large ingest's vectors right now


class EmbedderOut(BaseModel):
    """Whether semantic search is available (the model's files exist; nothing is loaded)."""

    available: bool
    model_id: str | None = None
    mode: str | None = None  # "lexical only" when not available
    reason: str | None = None


class HealthMetrics(BaseModel):
    """The DESIGN §7 metrics; None where there is nothing to measure (no hook samples)."""

    candidate_conversion: float
    merge_rate: float
    false_positive_rate: float
    avg_workitem_files: float
    avg_workitem_sessions: float
    orphan_candidates: float
    unresolved_related: float
    noise_ratio: float
    unlinked_commit_ratio: float
    redaction_hits: float
    index_fresh: float
    index_lag_ops: float
    hook_latency_p50_ms: float | None
    hook_latency_p95_ms: float | None
    hook_latency_p99_ms: float | None
    sync_conflicts: float


class HealthWarning(BaseModel):
    metric: str
    message: str


class StatusOut(BaseModel):
    """`looma status --json` (with --health: plus `health`, `previous`, `warnings`,
    `redaction_by_family`)."""

    state: StateOut
    repository: str
    ledger: LedgerCounts
    ingestion: IngestionOut | Unavailable
    index: IndexOut
    embedder: EmbedderOut
    hooks: HooksStatus | Unavailable
    health: HealthMetrics | None = None
    warnings: list[HealthWarning] | None = None
    # the last health snapshot as it was stored (older versions kept other metric names)
    previous: dict[str, float | None] | None = None
    # secrets redacted on ingest, by rule family (e.g. {"github": 2}), largest first
    redaction_by_family: dict[str, int] | None = None
