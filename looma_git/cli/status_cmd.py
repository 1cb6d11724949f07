"""`looma status [--health]`: ingestion, index freshness, embedder, hooks and graph health."""

from __future__ import annotations

from typing import Any

import click

from looma_git.cli.common import emit_json, repo_paths


@click.command("status")
@click.option("--health", "with_health", is_flag=True,
              help="Graph health metrics, kept as a time series, with trend warnings.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def status_cmd(ctx: click.Context, with_health: bool, as_json: bool) -> None:
    """What looma knows here and whether it is up to date."""
    from looma_git.api.status import health_report, status

    paths = repo_paths(ctx)
    data = health_report(paths) if with_health else status(paths)
    if as_json:
        emit_json(data)
        return
    _render(data)


def _render(d: dict[str, Any]) -> None:
    led = d["ledger"]
    click.echo(f"repository  {d['repository']}")
    click.echo(f"ledger      {led['workitems']} WorkItems, {led['memories']} memories, "
               f"{led['links']} commit links, lamport {led['lamport']}, "
               f"{led['conflicts']} conflicts")
    ing = d["ingestion"]
    if "error" in ing:
        click.echo(f"ingestion   {ing['error']}")
    else:
        per = ", ".join(f"{a} {n}" for a, n in ing["sessions"].items()) or "none"
        click.echo(f"ingestion   {ing['events']} events; sessions: {per}")
    idx = d["index"]
    fresh = "fresh" if idx.get("fresh") else "stale (rebuilt on next query, or `looma reindex`)"
    click.echo(f"index       {idx['state']}, {fresh}")
    emb = d["embedder"]
    click.echo("embedder    " + (f"{emb['model_id']}" if emb.get("available")
                                 else f"none: looma runs lexically ({emb.get('reason')})"))
    hooks = d.get("hooks", {})
    if "error" in hooks:
        click.echo(f"hooks       {hooks['error']}")
    else:
        installed = [h["name"] for h in hooks.get("hooks", []) if h["state"] == "installed"]
        click.echo(f"hooks       {', '.join(installed) or 'not installed'}; queue "
                   f"{hooks.get('queue_length', 0)}"
                   + (f"; last error: {hooks['log_error']}" if hooks.get("log_error") else ""))
        for p in hooks.get("problems", []):
            click.echo(f"            problem: {p}")
    if "health" in d:
        click.echo("health")
        for k, v in d["health"].items():
            click.echo(f"  {k:<24} {'-' if v is None else v}")
        fams = d.get("redaction_by_family") or {}
        if fams:
            click.echo("  redaction by family     "
                       + ", ".join(f"{k} {v}" for k, v in fams.items()))
        for w in d["warnings"]:
            click.echo(f"  warning: {w['message']}")
