"""`looma mcp` (serve over stdio) and `looma mcp config --client X [--write]`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from looma_git.cli.common import repo_paths
from looma_git.gitrepo import require_worktree

CLIENT_CHOICES = ("claude-code", "codex", "cursor", "gemini-cli", "opencode", "vscode",
                  "windsurf")


def _serve(ctx: click.Context) -> None:
    obj = ctx.find_root().obj or {}
    repo_dir = obj.get("repo_dir")
    if repo_dir is not None:
        # -C names the repository: fail fast, before a client waits on a server that cannot
        # work. Without -C the repository may come from the client's MCP roots, per call.
        repo_dir = require_worktree(repo_paths(ctx))
    from looma_git.mcp.server import serve_stdio

    serve_stdio(repo_dir)


@click.group("mcp", invoke_without_command=True)
@click.pass_context
def mcp_group(ctx: click.Context) -> None:
    """Serve looma to coding agents over MCP (stdio). Without a subcommand: serve.

    \b
    Tools: resume_work, ask, list_work, timeline, recall (read-only) and correct
    (the only one that writes: an undoable user op naming the MCP client).
    Set it up for a client with `looma mcp config --client claude-code --write`.
    """
    if ctx.invoked_subcommand is None:
        _serve(ctx)


@mcp_group.command("serve")
@click.pass_context
def serve_cmd(ctx: click.Context) -> None:
    """Serve over stdio (what the client configuration runs)."""
    _serve(ctx)


@mcp_group.command("config")
@click.option("--client", "client", type=click.Choice(CLIENT_CHOICES), required=True,
              help="The MCP client to configure.")
@click.option("--scope", type=click.Choice(("project", "user")), default=None,
              help="project: a file in this repository, pinned to it (the default where the "
                   "client reads project files); user: the client's own file, for every "
                   "repository (found from MCP roots or the working directory).")
@click.option("--write", is_flag=True,
              help="Install it where the client reads it (merged: other settings are kept).")
@click.pass_context
def config_cmd(ctx: click.Context, client: str, scope: str | None, write: bool) -> None:
    """Print (or --write) the client configuration that starts this server, with this exact
    Python interpreter.

    \b
    project scope: claude-code .mcp.json, cursor .cursor/mcp.json, gemini-cli
      .gemini/settings.json, opencode opencode.json, codex .codex/config.toml (trusted
      projects), vscode .vscode/mcp.json
    user scope: cursor, gemini-cli, opencode, codex ($CODEX_HOME), windsurf
      (~/.codeium/windsurf/mcp_config.json)
    """
    from looma_git.mcp import config

    repo = require_worktree(repo_paths(ctx))
    codex_home = os.environ.get("CODEX_HOME")
    t = config.target(client, python=sys.executable, repo=Path(repo),
                      home=Path(os.path.expanduser("~")),
                      codex_home=Path(codex_home) if codex_home else None, scope=scope)
    if not write:
        click.echo(f"# {client}: {t.scope} configuration, in {t.path}")
        cmd = config.cli_command(t)
        if cmd:
            click.echo(f"# or run: {cmd}")
        for note in config.notes(t):
            click.echo(f"# {note}")
        click.echo(config.snippet(t), nl=False)
        return
    plan = config.plan(t)
    if not plan.changed:
        click.echo(f"{t.path}: already configured, unchanged")
        return
    click.echo(plan.diff(), nl=False)
    config.apply(plan)
    click.echo(f"{'created' if plan.before is None else 'updated'} {t.path} "
               f"(server {config.SERVER_NAME!r} for {repo if t.scope.startswith('project') else 'every repository'}); "
               f"restart {client} to load it")
    for note in config.notes(t):
        click.echo(note)
