"""`looma help [COMMAND...]`: the man page on a terminal (rendered from the click tree), else --help."""

from __future__ import annotations

import shutil
import subprocess
import sys

import click


@click.command("help")
@click.argument("command", nargs=-1)
@click.option("--no-pager", "no_pager", is_flag=True, help="Print the help text, never man.")
@click.pass_context
def help_cmd(ctx: click.Context, command: tuple[str, ...], no_pager: bool) -> None:
    """Show a command's manual, like `git help`: `looma help correct split`."""
    from looma_git.cli import clidoc

    root = ctx.find_root()
    target = [root.info_name or "looma", *command]
    found = next(((p, c, s) for p, c, s in clidoc.walk() if p == target), None)
    if found is None:
        from looma_git.errors import NotFoundError

        raise NotFoundError(f"no such command: looma {' '.join(command)}",
                            hint="`looma --help` lists the commands")
    path, cmd, sub = found
    man = shutil.which("man")
    if sys.stdout.isatty() and man and not no_pager:
        page = clidoc.render_man(path, cmd, sub)
        proc = subprocess.run([man, "-l", "-"], input=page, text=True)
        if proc.returncode == 0:
            return
    click.echo(cmd.get_help(sub))
