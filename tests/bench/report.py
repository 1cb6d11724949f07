"""The machine-readable last line every benchmark prints (`BENCH-JSON {...}`) for run_all."""

from __future__ import annotations

import json
import resource
from typing import Any

PREFIX = "BENCH-JSON "


def peak_rss_mb() -> float:
    """Peak RSS of this process or any child it waited for, in MiB."""
    return max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024


def metric(name: str, value: float, unit: str, target: float | None = None,
           better: str = "lower", note: str = "") -> dict[str, Any]:
    """One measured value; `better` is "lower" (a ceiling) or "higher" (a floor)."""
    return {"name": name, "value": round(float(value), 4), "unit": unit, "target": target,
            "better": better, "note": note}


def emit(bench: str, metrics: list[dict[str, Any]], **extra: Any) -> None:
    """Print the BENCH-JSON line; call it last, after every human-readable line."""
    print(PREFIX + json.dumps({"bench": bench, "metrics": metrics,
                               "rss_mb": round(peak_rss_mb()), **extra}, sort_keys=True),
          flush=True)
