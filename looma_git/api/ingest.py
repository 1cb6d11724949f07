"""Library surface of ingestion: `ingest()` one pass over every agent's transcripts."""

from __future__ import annotations

from collections.abc import Callable

from looma_git.errors import UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.ingest.base import DiscoveryEnv
from looma_git.ingest.registry import all_adapters
from looma_git.wire.cli import AgentSummary, IngestReport


def _merge(into: dict[str, int], add: dict[str, int]) -> None:
    for k, v in add.items():
        into[k] = into.get(k, 0) + v


def ingest(paths: RepoPaths, env: DiscoveryEnv, *, agents: list[str] | None = None,
           progress: Callable[[int, int, str], None] | None = None,
           lock_wait_s: float = 0.0) -> IngestReport:
    """Read new transcript records of `agents` (default: all) into this clone's store.db.

    Idempotent and resumable: a second call with nothing new adds nothing; a crash at any
    point leaves the store consistent. Raises LockError when another ingest holds the lock
    longer than `lock_wait_s`, UsageError for an unknown agent name.
    """
    known = all_adapters()
    if agents:
        bad = [a for a in agents if a not in known]
        if bad:
            raise UsageError(f"unknown agent(s): {', '.join(bad)}", hint="agents: "
                             + ", ".join(known))
    unknown_overrides = [a for a in env.overrides if a not in known]
    if unknown_overrides:
        raise UsageError(f"--source for unknown agent(s): {', '.join(unknown_overrides)}",
                         hint="agents: " + ", ".join(known))
    from looma_git.ingest.engine import run_ingest

    run = run_ingest(paths, env, agents=list(agents) if agents else None, progress=progress,
                     lock_wait_s=lock_wait_s)
    skipped: dict[str, int] = {}
    noise: dict[str, int] = {}
    per_agent: dict[str, AgentSummary] = {}
    for name, st in run.agents.items():
        _merge(skipped, st.skipped)
        _merge(noise, st.noise)
        per_agent[name] = AgentSummary(
            sources=st.sources, unchanged=st.unchanged, sessions=st.sessions,
            events_added=st.events_added, events_updated=st.events_updated,
            skipped=dict(st.skipped), noise=dict(st.noise))
    return IngestReport(
        events_added=sum(s.events_added for s in run.agents.values()),
        events_updated=sum(s.events_updated for s in run.agents.values()),
        sessions={n: s.sessions for n, s in run.agents.items() if s.sessions},
        skipped=skipped, noise=noise, notes=list(run.notes),
        sources_scanned=sum(s.sources for s in run.agents.values()),
        sources_unchanged=sum(s.unchanged for s in run.agents.values()),
        redactions=dict(run.redactions), unattributed_events=run.unattributed_events,
        skip_samples=dict(run.skip_samples), agents=per_agent,
        duration_s=round(run.duration_s, 3))
