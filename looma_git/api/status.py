"""Library surface of `looma status [--health]`: the clone's state, ledger, ingestion, index,
embedder and hooks (looma_git/status.py), with the health metrics on request."""

from __future__ import annotations

from looma_git.gitrepo import RepoPaths
from looma_git.wire.results import HooksStatus
from looma_git.wire.status import StatusOut, Unavailable


def _hooks(paths: RepoPaths, path_fallback: bool) -> HooksStatus | Unavailable:
    from looma_git.api.hooks import status as hooks_status

    try:
        return hooks_status(paths, path_fallback=path_fallback)
    except Exception as exc:  # status reports what it can: a broken hooks dir is one line
        return Unavailable(error=str(exc))


def status(paths: RepoPaths, *, path_fallback: bool = False) -> StatusOut:
    """Everything `looma status` shows. `path_fallback`: whether `looma` is on PATH (the
    edge looks it up; the hooks fall back to it when their interpreter is gone)."""
    from looma_git import status as core

    return core.status(paths, _hooks(paths, path_fallback))


def health_report(paths: RepoPaths, *, path_fallback: bool = False) -> StatusOut:
    """`status` plus the metrics now (kept as a time series), the previous snapshot and the
    warnings (thresholds and trends)."""
    from looma_git import status as core

    return core.with_health(paths, status(paths, path_fallback=path_fallback))
