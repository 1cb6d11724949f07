"""Library surface of ingestion: `ingest()` one pass over every agent's transcripts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from looma_git.errors import UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.ingest.base import DiscoveryEnv
from looma_git.ingest.registry import all_adapters

if TYPE_CHECKING:
    from looma_git.ingest.engine import RunResult
    from looma_git.wire.cli import IngestReport

# The wire models (pydantic) are imported only where `ingest()` builds one: the hook drain
# ingests after every commit and keeps only a one-line summary (`ingest_summary`).


def _merge(into: dict[str, int], add: dict[str, int]) -> None:
    for k, v in add.items():
        into[k] = into.get(k, 0) + v


def _run(paths: RepoPaths, env: DiscoveryEnv, agents: list[str] | None,
         progress: Callable[[int, int, str], None] | None, lock_wait_s: float) -> RunResult:
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

    return run_ingest(paths, env, agents=list(agents) if agents else None, progress=progress,
                      lock_wait_s=lock_wait_s)


def _fields(run: RunResult) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """IngestReport's fields (in its declaration order) and each agent's AgentSummary fields."""
    skipped: dict[str, int] = {}
    noise: dict[str, int] = {}
    per_agent: dict[str, dict[str, Any]] = {}
    for name, st in run.agents.items():
        _merge(skipped, st.skipped)
        _merge(noise, st.noise)
        per_agent[name] = {
            "sources": st.sources, "unchanged": st.unchanged, "sessions": st.sessions,
            "events_added": st.events_added, "events_updated": st.events_updated,
            "skipped": dict(st.skipped), "noise": dict(st.noise)}
    top: dict[str, Any] = {
        "events_added": sum(s.events_added for s in run.agents.values()),
        "events_updated": sum(s.events_updated for s in run.agents.values()),
        "sessions": {n: s.sessions for n, s in run.agents.items() if s.sessions},
        "skipped": skipped, "noise": noise, "notes": list(run.notes),
        "sources_scanned": sum(s.sources for s in run.agents.values()),
        "sources_unchanged": sum(s.unchanged for s in run.agents.values()),
        "redactions": dict(run.redactions), "unattributed_events": run.unattributed_events,
        "skip_samples": dict(run.skip_samples), "agents": per_agent,
        "duration_s": round(run.duration_s, 3)}
    return top, per_agent


def ingest(paths: RepoPaths, env: DiscoveryEnv, *, agents: list[str] | None = None,
           progress: Callable[[int, int, str], None] | None = None,
           lock_wait_s: float = 0.0) -> IngestReport:
    """Read new transcript records of `agents` (default: all) into this clone's store.db.

    Idempotent and resumable: a second call with nothing new adds nothing; a crash at any
    point leaves the store consistent. Raises LockError when another ingest holds the lock
    longer than `lock_wait_s`, UsageError for an unknown agent name.
    """
    from looma_git.wire.cli import AgentSummary, IngestReport

    top, per_agent = _fields(_run(paths, env, agents, progress, lock_wait_s))
    top["agents"] = {n: AgentSummary(**f) for n, f in per_agent.items()}
    return IngestReport(**top)


class _Shown:
    """Prints as `Name(field=value, ...)`: the repr a wire model of these fields would have."""

    def __init__(self, name: str, fields: dict[str, Any]) -> None:
        self.name, self.fields = name, fields

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"


def ingest_summary(paths: RepoPaths, env: DiscoveryEnv) -> str:
    """`ingest(paths, env)` for the hook drain: the same run, returned as the repr of the
    IngestReport it would build (what the drain logs), without loading the wire models."""
    top, per_agent = _fields(_run(paths, env, None, None, 0.0))
    top["agents"] = {n: _Shown("AgentSummary", f) for n, f in per_agent.items()}
    return repr(_Shown("IngestReport", top))
