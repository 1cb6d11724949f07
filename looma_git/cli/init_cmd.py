"""`looma init`: set up this clone (state dir, clone id, notes config, ledger ref)."""

from __future__ import annotations

import click


@click.command("init")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def init_cmd(ctx: click.Context, as_json: bool) -> None:
    """Set up looma in this clone. Safe to run again: it only adds what is missing.

    \b
    It creates <git-common-dir>/looma/ (local cache, never shared) with this
    clone's random id, creates refs/looma/ledger (format.yaml only), and sets
      notes.rewriteRef  = refs/notes/looma
      notes.rewriteMode = cat_sort_uniq
    so git carries looma's commit notes across amend and rebase.
    Nothing is written to your work tree, index or branches.
    """
    from looma_git.api.ledger import init_repo
    from looma_git.gitrepo import find_repo

    report = init_repo(find_repo(ctx.obj.get("repo_dir") if ctx.obj else None))
    if as_json:
        from looma_git.cli.common import emit_json
        from looma_git.wire.cli import InitOut

        emit_json(InitOut(state_dir=report.state_dir, clone_id=report.clone_id,
                          created=report.created_clone_id,
                          config_changed=list(report.config_changed),
                          ledger_created=report.ledger_created))
        return
    click.echo(f"looma: {'initialized' if report.created_clone_id else 'already initialized'}"
               f" (clone {report.clone_id})")
    click.echo(f"  state: {report.state_dir}")
    for change in report.config_changed:
        click.echo(f"  set {change}")
    if report.ledger_created:
        click.echo("  created refs/looma/ledger")
