"""Shell completion: `looma completion bash|zsh|fish`, and values for WorkItems and remotes."""

from __future__ import annotations

import os
import subprocess

import click
from click.shell_completion import CompletionItem


def _repo_dir(ctx: click.Context) -> str | None:
    root = ctx.find_root()
    return (root.params or {}).get("repo_dir")


def workitems(ctx: click.Context, param: click.Parameter, incomplete: str
              ) -> list[CompletionItem]:
    """WorkItem ids (with titles), and the letters of the last resume listing."""
    try:
        from looma_git.api import letters
        from looma_git.api.query import _items
        from looma_git.gitrepo import find_repo

        paths = find_repo(_repo_dir(ctx))
        out = []
        data = letters._read(paths) or {}
        if data.get("viewer") == letters.viewer():
            for letter, v in sorted((data.get("letters") or {}).items()):
                if letter.startswith(incomplete.upper()):
                    out.append(CompletionItem(letter, help=f"{v.get('id')} {v.get('title')}"))
        for it in _items(paths):
            if it.id.startswith(incomplete):
                out.append(CompletionItem(it.id, help=it.title))
        return out
    except Exception:  # completion never fails loudly
        return []


def remotes(ctx: click.Context, param: click.Parameter, incomplete: str
            ) -> list[CompletionItem]:
    """This repository's git remotes."""
    try:
        proc = subprocess.run(["git", "remote"], capture_output=True, text=True, timeout=5,
                              cwd=_repo_dir(ctx) or os.getcwd())
    except (OSError, subprocess.SubprocessError):
        return []
    return [CompletionItem(r) for r in proc.stdout.split() if r.startswith(incomplete)]


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the completion script for SHELL (commands, options, WorkItem ids, resume
    letters and remotes).

    \b
      bash:  echo 'eval "$(looma completion bash)"' >> ~/.bashrc
      zsh:   echo 'eval "$(looma completion zsh)"' >> ~/.zshrc
      fish:  looma completion fish > ~/.config/fish/completions/looma.fish
    """
    from click.shell_completion import get_completion_class

    from looma_git.cli.main import cli

    cls = get_completion_class(shell)
    assert cls is not None
    click.echo(cls(cli, {}, "looma", "_LOOMA_COMPLETE").source())
