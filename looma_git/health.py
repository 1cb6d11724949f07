"""Graph health metrics and their warning thresholds (DESIGN §7); pure over given numbers."""

from __future__ import annotations

from dataclasses import dataclass

# Warning thresholds, in one place: (metric, comparison, limit, message).
THRESHOLDS: tuple[tuple[str, str, float, str], ...] = (
    ("false_positive_rate", ">", 0.20, "many WorkItems are marked false positives"),
    ("merge_rate", ">", 0.30, "many WorkItems needed a manual merge: resolution splits efforts"),
    ("noise_ratio", ">", 0.60, "most ingested records are noise"),
    ("unlinked_commit_ratio", ">", 0.80, "most commits link to no WorkItem"),
    ("orphan_candidates", ">", 50, "many candidates never corroborated"),
    ("index_lag_ops", ">", 0, "the index is behind the ledger (run `looma reindex`)"),
    ("hook_latency_p95_ms", ">", 5000, "the hook drainer is slow"),
    ("sync_conflicts", ">", 0, "concurrent conflicting corrections were resolved by order"),
)
# A metric that worsens by more than this between snapshots raises a trend warning.
TREND_DELTA = 0.15
WORSE_WHEN_HIGHER = frozenset({"false_positive_rate", "merge_rate", "noise_ratio",
                               "unlinked_commit_ratio", "orphan_candidates",
                               "unresolved_related", "sync_conflicts"})


@dataclass(frozen=True)
class Warning:
    metric: str
    message: str


def ratio(n: float, d: float) -> float:
    return round(n / d, 4) if d else 0.0


def warnings(metrics: dict[str, float | None],
             previous: dict[str, float | None] | None) -> list[Warning]:
    """Absolute thresholds, then trends against the previous snapshot."""
    out: list[Warning] = []
    for name, cmp, limit, message in THRESHOLDS:
        value = metrics.get(name)
        if value is None:
            continue
        if (cmp == ">" and value > limit) or (cmp == "<" and value < limit):
            out.append(Warning(name, f"{message} ({name} = {value})"))
    if previous:
        for name in sorted(WORSE_WHEN_HIGHER):
            now, before = metrics.get(name), previous.get(name)
            if now is None or before is None:
                continue
            if now - before > TREND_DELTA * max(1.0, abs(before)):
                out.append(Warning(name, f"{name} rose from {before} to {now} since the last "
                                         "snapshot"))
    return out
