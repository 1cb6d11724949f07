"""`looma work`: list WorkItems with their confidence on every line."""

from __future__ import annotations

import click

from looma_git.cli.common import conf_tag, emit_json, files_tag, repo_paths


@click.command("work")
@click.option("--status", "status", default=None, metavar="S",
              help="Only WorkItems with this status (active, done, abandoned).")
@click.option("--candidates", is_flag=True,
              help="Also list local candidates not (yet) promoted; promote one with "
                   "`looma correct promote ID`.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable contract).")
@click.pass_context
def work_cmd(ctx: click.Context, status: str | None, candidates: bool, as_json: bool) -> None:
    """List WorkItems, most confident first.

    Each line shows the kind, status, confidence and band, and the main files:

    \b
      wi_5d1e0c9a2b  Implement OAuth Login  [feature] [active] [conf 0.82 high] files: auth/oauth.py +3
    """
    from looma_git.api.query import work

    out = work(repo_paths(ctx), status=status, candidates=candidates)
    if as_json:
        emit_json(out)
        return
    if not out.workitems:
        click.echo("No WorkItems yet. Run `looma ingest` to read your agents' sessions.")
        return
    for w in out.workitems:
        commits = f" commits: {len(w.commits)}" if w.commits else ""
        click.echo(f"{w.id}  {w.title}  [{w.kind}] [{w.status}] {conf_tag(w.confidence, w.band)}"
                   f" {files_tag(w.files)}{commits}".rstrip())
