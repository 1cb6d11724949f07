"""`looma work`: list WorkItems with their confidence on every line."""

from __future__ import annotations

import click

from looma_git.cli.common import (
    clip,
    conf_tag,
    emit_json,
    files_tag,
    is_tty,
    page,
    repo_paths,
    term_width,
)


@click.command("work")
@click.option("--status", "status", default=None,
              type=click.Choice(["active", "done", "abandoned", "candidate"]),
              help="Only WorkItems with this status.")
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
        if status:
            total = len(work(repo_paths(ctx), candidates=candidates).workitems)
            click.echo(f"No WorkItems with status {status!r} ({total} WorkItem"
                       f"{'' if total == 1 else 's'} in all; `looma work` lists them).")
        else:
            click.echo("No WorkItems yet. Run `looma ingest` to read your agents' sessions"
                       " (a teammate's are shared once they are published and fetched).")
        return
    width = term_width() if is_tty() else 0
    lines = []
    for w in out.workitems:
        commits = f" commits: {len(w.commits)}" if w.commits else ""
        tail = (f"  [{w.kind}] [{w.status}] {conf_tag(w.confidence, w.band)}"
                f" {files_tag(w.files)}{commits}").rstrip()
        title = w.title
        if width:  # on a terminal: one line each, the title cut to fit, then the files
            room = width - len(w.id) - 2 - len(tail)
            if room < 20:
                tail = f"  {conf_tag(w.confidence, w.band)}"
                room = width - len(w.id) - 2 - len(tail)
            title = clip(title, max(10, room))
        lines.append(clip(f"{w.id}  {title}{tail}", width) if width else f"{w.id}  {title}{tail}")
    page(lines, ctx)
