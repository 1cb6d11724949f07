"""`looma status [--health]`: ingestion, index freshness, embedder, hooks and graph health."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from looma_git.cli.common import emit_json, repo_paths, say

if TYPE_CHECKING:
    from looma_git.wire.status import StatusOut


@click.command("status")
@click.option("--health", "with_health", is_flag=True,
              help="Graph health metrics, kept as a time series, with trend warnings.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def status_cmd(ctx: click.Context, with_health: bool, as_json: bool) -> None:
    """What looma knows here and whether it is up to date."""
    import shutil

    from looma_git.api.status import health_report, status

    paths = repo_paths(ctx)
    fallback = bool(shutil.which("looma"))
    data = (health_report if with_health else status)(paths, path_fallback=fallback)
    if as_json:
        emit_json(data)
        return
    _render(data)


def _render(d: StatusOut) -> None:
    from looma_git.wire.status import IngestionOut, Unavailable

    st = d.state
    say(f"state       {st.state}" + (f" (next: {st.next})" if st.next else ""))
    led = d.ledger
    say(f"repository  {d.repository}")
    say(f"ledger      {led.workitems} WorkItems, {led.memories} memories, "
        f"{led.links} commit links, lamport {led.lamport}, {led.conflicts} conflicts")
    ing = d.ingestion
    if isinstance(ing, IngestionOut):
        per = ", ".join(f"{a} {n}" for a, n in ing.sessions.items()) or "none"
        say(f"ingestion   {ing.events} events; sessions: {per}")
    else:
        say(f"ingestion   {ing.error}")
    idx = d.index
    fresh = "fresh" if idx.fresh else "stale (rebuilt on next query, or `looma reindex`)"
    pending = idx.vectors_pending or 0
    if idx.embedding_now:  # the stamp's count is from before the detached top-up
        vectors = "; vectors being embedded in the background (queries that need them wait)"
    elif pending:
        vectors = (f"; {pending} vectors pending (each `looma ingest` embeds some, "
                   "`looma reindex --all-vectors` all)")
    else:
        vectors = ""
    say(f"index       {idx.state}, {fresh}{vectors}")
    emb = d.embedder
    say("embedder    " + (f"{emb.model_id}" if emb.available
                          else f"none: looma runs lexically ({emb.reason})"))
    hooks = d.hooks
    if isinstance(hooks, Unavailable):
        say(f"hooks       {hooks.error}")
    else:
        installed = [h.name for h in hooks.hooks if h.state == "installed"]
        say(f"hooks       {', '.join(installed) or 'not installed'}; queue "
            f"{hooks.queue_length}" + (f"; last error: {hooks.log_error}" if hooks.log_error
                                       else ""))
        for p in hooks.problems:
            say(f"            problem: {p}")
    if d.health is not None:
        _render_health(d)


def _render_health(d: StatusOut) -> None:
    from looma_git.health import THRESHOLDS

    limits = {name: (cmp, limit) for name, cmp, limit, _ in THRESHOLDS}
    say("health                     value   warn when")
    for k, v in (d.health.model_dump() if d.health else {}).items():
        if v is None:
            shown = "-"
        elif float(v).is_integer():
            shown = f"{int(v)}"
        else:
            shown = f"{v:.2f}"
        cmp, limit = limits.get(k, ("", None))
        when = f"{cmp} {limit:g}" if limit is not None else ""
        say(f"  {k:<24} {shown:>7}   {when}".rstrip())
    fams = d.redaction_by_family or {}
    if fams:
        say("  redaction by family      " + ", ".join(f"{k} {v}" for k, v in fams.items()))
    for w in d.warnings or []:
        say(f"  warning: {w.message}")
