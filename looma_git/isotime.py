"""ISO-8601 timestamps as epoch seconds: one light parser the pipeline and the read path share."""

from __future__ import annotations

from datetime import datetime


def parse_ts(ts: str) -> float:
    """Seconds since the epoch for an ISO timestamp; 0 when unknown."""
    if not ts:
        return 0.0
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0
