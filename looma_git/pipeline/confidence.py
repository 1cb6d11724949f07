"""The one confidence formula (DESIGN §4): weights, k, bands and the promotion threshold."""

from __future__ import annotations

import math
from dataclasses import dataclass

WEIGHTS: dict[str, float] = {
    "file_overlap": 0.30,
    "commit_linkage": 0.25,
    "session_breadth": 0.20,
    "agent_breadth": 0.15,
    "temporal_persistence": 0.10,
}
K = 0.7  # breadth = 1 - exp(-K * (n - 1))
COMMIT_K = 0.8  # commit_linkage = 1 - exp(-COMMIT_K * linked_commits)
HIGH = 0.75
MEDIUM = 0.40
PROMOTE_AT = MEDIUM  # promote when confidence >= this (or when commit-linked)
READONLY_CAP = 0.35  # a read-only effort never reaches medium on its own


@dataclass(frozen=True)
class Confidence:
    """A confidence value, its band and the features behind it (the "why")."""

    value: float
    band: str
    features: tuple[tuple[str, float], ...]
    override: str | None = None  # "force-promote" | "merge-target" | "reject" | "false-positive"

    def as_dict(self) -> dict[str, float]:
        return dict(self.features)


def breadth(n: int, k: float = K) -> float:
    """Saturating breadth: 0 for one, ~0.5 for two, ~0.75 for three distinct things."""
    return 0.0 if n <= 1 else 1.0 - math.exp(-k * (n - 1))


def commit_linkage(n_commits: int) -> float:
    return 0.0 if n_commits <= 0 else 1.0 - math.exp(-COMMIT_K * n_commits)


def band(value: float) -> str:
    """high >= 0.75, medium 0.40-0.75, low < 0.40."""
    if value >= HIGH:
        return "high"
    if value >= MEDIUM:
        return "medium"
    return "low"


def score(features: dict[str, float], *, override: str | None = None) -> Confidence:
    """clamp01(weighted sum), then ledger overrides pin it to 1.0 or 0.0."""
    raw = sum(WEIGHTS[name] * float(features.get(name, 0.0)) for name in WEIGHTS)
    value = min(1.0, max(0.0, raw))
    if override in ("force-promote", "merge-target", "confirm"):
        value = 1.0
    elif override in ("reject", "false-positive"):
        value = 0.0
    value = round(value, 4)
    feats = tuple((name, round(float(features.get(name, 0.0)), 4)) for name in WEIGHTS)
    return Confidence(value=value, band=band(value), features=feats, override=override)
