"""`looma status [--health]`: ingestion, index freshness, embedder, hooks and graph health."""

from __future__ import annotations

from typing import Any

import click

from looma_git.cli.common import emit_json, repo_paths, say


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
    st = d.get("state") or {}
    if st:
        say(f"state       {st['state']}" + (f" (next: {st['next']})" if st.get("next")
                                                     else ""))
    led = d["ledger"]
    say(f"repository  {d['repository']}")
    say(f"ledger      {led['workitems']} WorkItems, {led['memories']} memories, "
               f"{led['links']} commit links, lamport {led['lamport']}, "
               f"{led['conflicts']} conflicts")
    ing = d["ingestion"]
    if "error" in ing:
        say(f"ingestion   {ing['error']}")
    else:
        per = ", ".join(f"{a} {n}" for a, n in ing["sessions"].items()) or "none"
        say(f"ingestion   {ing['events']} events; sessions: {per}")
    idx = d["index"]
    fresh = "fresh" if idx.get("fresh") else "stale (rebuilt on next query, or `looma reindex`)"
    pending = idx.get("vectors_pending") or 0
    say(f"index       {idx['state']}, {fresh}" + (
        f"; {pending} vectors pending (each `looma ingest` embeds some, "
        "`looma reindex --all-vectors` all)" if pending else ""))
    emb = d["embedder"]
    say("embedder    " + (f"{emb['model_id']}" if emb.get("available")
                                 else f"none: looma runs lexically ({emb.get('reason')})"))
    hooks = d.get("hooks", {})
    if "error" in hooks:
        say(f"hooks       {hooks['error']}")
    else:
        installed = [h["name"] for h in hooks.get("hooks", []) if h["state"] == "installed"]
        say(f"hooks       {', '.join(installed) or 'not installed'}; queue "
                   f"{hooks.get('queue_length', 0)}"
                   + (f"; last error: {hooks['log_error']}" if hooks.get("log_error") else ""))
        for p in hooks.get("problems", []):
            say(f"            problem: {p}")
    if "health" in d:
        from looma_git.health import THRESHOLDS

        limits = {name: (cmp, limit) for name, cmp, limit, _ in THRESHOLDS}
        say("health                     value   warn when")
        for k, v in d["health"].items():
            if v is None:
                shown = "-"
            elif float(v).is_integer():
                shown = f"{int(v)}"
            else:
                shown = f"{v:.2f}"
            cmp, limit = limits.get(k, ("", None))
            when = f"{cmp} {limit:g}" if limit is not None else ""
            say(f"  {k:<24} {shown:>7}   {when}".rstrip())
        fams = d.get("redaction_by_family") or {}
        if fams:
            say("  redaction by family      "
                + ", ".join(f"{k} {v}" for k, v in fams.items()))
        for w in d["warnings"]:
            say(f"  warning: {w['message']}")
