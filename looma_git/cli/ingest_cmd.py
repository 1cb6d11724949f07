"""`looma ingest`: read new agent transcript records into this clone's local store."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import click

from looma_git.cli.common import emit_json, repo_paths, say
from looma_git.ingest.registry import all_adapters, default_roots

# Environment variables adapters may consult for discovery (prefixes and exact names).
_ENV_PREFIXES = ("XDG_", "CLAUDE_", "CODEX_", "OPENCODE_", "GEMINI_", "CURSOR_", "WINDSURF_")
_ENV_NAMES = ("HOME", "APPDATA", "LOCALAPPDATA", "USERPROFILE")


def _discovery_env(sources: tuple[str, ...]):  # -> DiscoveryEnv (import kept lazy)
    from looma_git.errors import UsageError
    from looma_git.ingest.base import DiscoveryEnv

    overrides: dict[str, list[Path]] = {}
    for spec in sources:
        agent, sep, path = spec.partition("=")
        if not sep or not agent or not path:
            raise UsageError(f"--source expects AGENT=PATH, got {spec!r}")
        target = Path(path).expanduser().absolute()
        if not target.exists():
            raise UsageError(f"--source {agent}={path}: no such file or directory",
                             hint="point it at the agent's transcript directory or file")
        overrides.setdefault(agent.strip(), []).append(target)
    environ = {k: v for k, v in os.environ.items()
               if k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES}
    home = Path(os.path.normpath(os.environ.get("HOME") or os.environ.get("USERPROFILE")
                                 or str(Path.home())))
    return DiscoveryEnv(home=home, environ=environ,
                        overrides={a: tuple(p) for a, p in overrides.items()},
                        platform=sys.platform)


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) \
        or "-"


@click.command("ingest")
@click.option("--source", "sources", multiple=True, metavar="AGENT=PATH",
              help="Read AGENT's transcripts from PATH instead of discovering them (repeatable).")
@click.option("--agent", "agents", multiple=True, metavar="NAME",
              help="Only these agents (repeatable): " + ", ".join(all_adapters()) + ".")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.option("--once", is_flag=True, help="Accepted for scripts; ingest is always one pass.")
@click.option("--refine/--no-refine", "do_refine", default=True, show_default=True,
              help="Refresh WorkItems, memories and commit links after reading.")
@click.option("-v", "--verbose", is_flag=True,
              help="Say where each agent's transcripts were looked for, found or not.")
@click.pass_context
def ingest_cmd(ctx: click.Context, sources: tuple[str, ...], agents: tuple[str, ...],
               as_json: bool, once: bool, do_refine: bool, verbose: bool) -> None:
    """Read new records from your coding agents' transcripts into the local store.

    Only sessions whose working directory lies in this repository (or one of its worktrees),
    or whose recorded git remote is this repository's, are kept. Safe to rerun and to
    interrupt: a second run adds nothing, an interrupted run is completed by the next.

    \b
      looma ingest
      looma ingest --agent claude-code --json
      looma ingest --source claude-code=~/backup/.claude/projects
    """
    from looma_git.api.update import update
    from looma_git.cli.progress import Phases, fmt_elapsed, wanted
    from looma_git.settings import load_settings

    env = _discovery_env(sources)
    paths = repo_paths(ctx)
    with Phases(wanted(as_json)) as bar:
        result = update(paths, env, agents=list(agents) or None,
                        progress=bar if bar.enabled else None, phase=bar.phase,
                        settings=load_settings(paths, os.environ), refine=do_refine)
    elapsed = bar.elapsed
    report, refined = result.ingest, result.refine
    if as_json:
        from looma_git.wire.cli import IngestOut, RefineOut

        emit_json(IngestOut(**report.model_dump(mode="json"), elapsed_s=round(elapsed, 3),
                            refine=RefineOut.model_validate(dataclasses.asdict(refined)) if refined else None))
        return
    say(f"ingested {report.events_added} new event(s)"
               + (f", {report.events_updated} updated" if report.events_updated else "")
               + f" from {report.sources_scanned} source(s)"
               + (f" ({report.sources_unchanged} unchanged)" if report.sources_unchanged else "")
               + f" in {fmt_elapsed(elapsed)}"
               + (f" (reading {fmt_elapsed(report.duration_s)}, then the work model)"
                  if refined else ""))
    rows = [(name, a) for name, a in report.agents.items() if a.sources or a.skipped]
    if rows:
        click.echo(f"{'agent':<12} {'sources':>7} {'sessions':>8} {'events':>7}  skipped / noise")
        for name, a in rows:
            click.echo(f"{name:<12} {a.sources:>7} {a.sessions:>8} {a.events_added:>7}  "
                       f"skipped: {_fmt_counts(a.skipped)}; noise: {_fmt_counts(a.noise)}")
    if report.redactions:
        click.echo(f"redacted: {_fmt_counts(report.redactions)}")
    if report.unattributed_events:
        click.echo(f"{report.unattributed_events} event(s) belong to other repositories "
                   "(not stored)")
    for note in report.notes:
        say(f"note: {note}")
    if verbose or not any(a.sessions or a.unchanged for a in report.agents.values()):
        _where_looked(env, list(agents) or None, verbose)
    if refined:
        local = refined.workitems - refined.promoted
        say(f"work model: {refined.workitems} WorkItems ({refined.promoted} published"
            + (f"; {local} local candidates, shown by `looma work --candidates`" if local
               else "") + f"), {refined.memories} memories, {refined.links} commit links; "
            f"{refined.ops_written} ledger ops written")


def _where_looked(env, agents: list[str] | None, verbose: bool) -> None:  # env: DiscoveryEnv
    """Each agent's transcript locations under this HOME, and what was found there."""
    from looma_git.ingest.registry import get_adapter

    if not verbose:
        click.echo("no transcripts found for this repository; `looma ingest --verbose` shows "
                   "where each agent's were looked for")
        return
    click.echo(f"looked for transcripts under HOME={env.home}:")
    for name in all_adapters():
        if agents and name not in agents:
            continue
        found = get_adapter(name).discover(env)
        if env.overrides.get(name):
            where = [str(p) for p in env.overrides[name]]
        elif found:
            where = sorted({str(src.path.parent) for src in found})[:3]
        else:
            where = [str(env.home / r[2:]) for r in default_roots(name)]
        more = "" if len(where) < 3 or not found else " ..."
        click.echo(f"  {name:<12} {len(found):>4} source(s)  {', '.join(where)}{more}")
