"""`looma share enable|disable|status`, `looma sync` and `looma conflicts`."""

from __future__ import annotations

import click

from looma_git.cli.common import emit_json, repo_paths
from looma_git.cli.complete import remotes


@click.group("share")
def share_group() -> None:
    """Opt a remote into sharing looma's refs (refs/looma/ledger, refs/notes/looma).

    Sharing is per remote and off by default. For a public repository, keep curation
    off the public host with `looma share enable --curation-remote URL`.
    """


@share_group.command("enable")
@click.argument("remote", required=False, default="origin", shell_complete=remotes)
@click.option("--curation-remote", "curation_url", metavar="URL", default=None,
              help="Send looma's refs to this URL instead of REMOTE (for public repositories).")
@click.option("--curation-name", metavar="NAME", default=None,
              help="Name of the curation remote to create (default: looma-curation).")
@click.option("--git-push", is_flag=True,
              help="Also make plain `git push REMOTE` push looma's refs (adds push refspecs, "
                   "plus HEAD if REMOTE had none). Off by default: a diverged ledger would "
                   "then fail your pushes; `looma sync` and the pre-push hook push instead.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def enable_cmd(ctx: click.Context, remote: str, curation_url: str | None,
               curation_name: str | None, git_push: bool, as_json: bool) -> None:
    """Configure REMOTE (default origin) to carry looma's refs.

    \b
    Adds non-forced fetch refspecs into refs/looma/remotes/REMOTE/ (never into
    refs/notes/*, never `+`), and looma.share.REMOTE=true. `share disable` removes
    exactly what this added. Then run `looma sync`.
    """
    from looma_git.api.sync import share_enable

    out = share_enable(repo_paths(ctx), remote, curation_url=curation_url,
                       curation_name=curation_name, git_push=git_push)
    if as_json:
        emit_json(out)
        return
    for line in out.added:
        click.echo(f"added   {line}")
    click.echo(f"looma: sharing enabled with {out.remote} ({out.url}); run `looma sync`")


@share_group.command("disable")
@click.argument("remote", required=False, default="origin", shell_complete=remotes)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def disable_cmd(ctx: click.Context, remote: str, as_json: bool) -> None:
    """Remove the config `share enable REMOTE` added (refs already fetched are kept)."""
    from looma_git.api.sync import share_disable

    out = share_disable(repo_paths(ctx), remote)
    if as_json:
        emit_json(out)
        return
    for line in out.removed:
        click.echo(f"removed {line}")
    click.echo(f"looma: sharing disabled for {remote}")


@share_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Which remotes carry looma's refs."""
    from looma_git.api.sync import share_status

    out = share_status(repo_paths(ctx))
    if as_json:
        emit_json(out)
        return
    if not out.enabled:
        click.echo("looma: sharing is not enabled (looma share enable [REMOTE])")
    for e in out.enabled:
        click.echo(f"{e.remote}  {e.url or '(no url)'}")
    for src, dst in sorted(out.curation.items()):
        click.echo(f"{src} -> {dst}  (curation remote)")


def _render_conflict(c: object) -> list[str]:
    lines = [f"{c.target}  [{c.kind}]  winner {c.winner[:10]}"]  # type: ignore[attr-defined]
    for op in c.ops:  # type: ignore[attr-defined]
        mark = "*" if op.id == c.winner else " "  # type: ignore[attr-defined]
        detail = op.payload.get("title") or op.payload.get("from") or \
            [p.get("title") for p in op.payload.get("parts", []) if isinstance(p, dict)] or ""
        lines.append(f"  {mark} {op.id[:10]} {op.op:<16} lamport {op.lamport:<6} "
                     f"{op.actor}  {detail}")
    return lines


@click.command("sync")
@click.argument("remote", required=False, shell_complete=remotes)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable contract).")
@click.option("--no-fetch", "no_fetch", is_flag=True,
              help="Merge what `git fetch` already put in refs/looma/remotes/REMOTE/.")
@click.option("--no-push", "no_push", is_flag=True,
              help="Merge the remote's ops here but push nothing (e.g. a read-only remote).")
@click.pass_context
def sync_cmd(ctx: click.Context, remote: str | None, as_json: bool, no_fetch: bool,
             no_push: bool) -> None:
    """Fetch, union-merge and push looma's refs with REMOTE.

    \b
    1. fetch refs/looma/ledger and refs/notes/looma into refs/looma/remotes/REMOTE/;
    2. merge: the union of op files, projections and notes regenerated, a merge commit
       with both heads as parents;
    3. push by compare-and-swap; if the remote moved meanwhile, fetch and merge again.
    Nothing is ever forced, and local refs move only once the push has succeeded.
    """
    from looma_git.api.sync import sync

    out = sync(repo_paths(ctx), remote, fetch=not no_fetch, push=not no_push)
    if as_json:
        emit_json(out)
        return
    for w in out.warnings:
        click.echo(f"warning: {w}", err=True)
    state = "pushed" if out.pushed else ("up to date" if not no_push else "not pushed")
    click.echo(f"looma: synced with {out.remote}: {out.ops_in} op(s) in, {out.ops_out} op(s) "
               f"out, {state}" + (f", {out.retries} retr{'y' if out.retries == 1 else 'ies'}"
                                  if out.retries else ""))
    if out.conflicts:
        click.echo(f"{len(out.conflicts)} concurrent conflict(s) ({out.new_conflicts} new), "
                   "resolved by (lamport, id):")
        for c in out.conflicts:
            for line in _render_conflict(c):
                click.echo(f"  {line}")


@click.command("conflicts")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable contract).")
@click.pass_context
def conflicts_cmd(ctx: click.Context, as_json: bool) -> None:
    """Concurrent, conflicting user intents (two renames of one WorkItem, a merge against a
    split...), each resolved deterministically by (lamport, id); the winner is marked *."""
    from looma_git.api.sync import conflicts

    out = conflicts(repo_paths(ctx))
    if as_json:
        emit_json(out)
        return
    if not out.conflicts:
        click.echo("looma: no concurrent conflicts")
        return
    for c in out.conflicts:
        for line in _render_conflict(c):
            click.echo(line)
