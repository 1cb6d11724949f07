"""`looma relink`: move links off commits history lost (rebased, squashed) to their successors."""

from __future__ import annotations

import click

from looma_git.cli.common import emit_json, repo_paths


@click.command("relink")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.pass_context
def relink_cmd(ctx: click.Context, as_json: bool) -> None:
    """Re-attach links whose commit no branch or tag reaches any more.

    After a rebase, cherry-pick or squash-merge done elsewhere (a server-side squash, a
    teammate's rebase you fetched), each such commit is matched to a reachable one: the same
    patch-id first, then a squash that touches its files and names its subject or carries its
    added lines. Matches are recorded as `commit.rewrite` ops and the notes follow; commits
    nothing matches are listed and their links left as they are. Safe to run again.
    """
    from looma_git.api.linking import relink

    report = relink(repo_paths(ctx))
    if as_json:
        emit_json(report)
        return
    if not report.orphaned:
        click.echo(f"all {report.linked_commits} linked commits are in history; nothing to do")
        return
    click.echo(f"{report.orphaned} of {report.linked_commits} linked commits are no longer in "
               f"history: {len(report.matched)} relinked, {len(report.unmatched)} left as is")
    for m in report.matched:
        click.echo(f"  {m.old[:10]} -> {m.new[:10]}  ({m.how})  {', '.join(m.workitems)}")
    for u in report.unmatched:
        click.echo(f"  {u.sha[:10]} unmatched: {u.reason}  {', '.join(u.workitems)}")
