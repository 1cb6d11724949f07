"""docs/cli.md generated from the click command tree (`python -m looma_git.cli.clidoc`)."""

from __future__ import annotations

import click

from looma_git.cli.main import cli

HEADER = """# CLI reference

Generated from the click command tree by `python -m looma_git.cli.clidoc > docs/cli.md`;
`tests/test_cli_docs.py` fails when it drifts. Every command also runs as `git looma ...`.
Exit codes: 0 ok, 1 error, 2 usage, 3 not a repository / not initialized, 4 locked or
conflict, 5 invalid data, 6 verify failed, 7 not found / ambiguous, 8 read-only, 9 remote,
70 internal error.
"""


def _walk(cmd: click.Command, path: list[str], ctx: click.Context, out: list[str]) -> None:
    if getattr(cmd, "hidden", False):
        return
    name = " ".join(path)
    sub = click.Context(cmd, info_name=path[-1], parent=ctx)
    out.append(f"\n## `{name}`\n")
    out.append("```text")
    out.append(cmd.get_help(sub).replace("Usage: looma ", "Usage: looma ", 1).rstrip())
    out.append("```")
    if isinstance(cmd, click.Group):
        for child in cmd.list_commands(sub):
            c = cmd.get_command(sub, child)
            if c is not None:
                _walk(c, [*path, child], sub, out)


def render() -> str:
    """The whole CLI reference as markdown."""
    root = click.Context(cli, info_name="looma", terminal_width=100, max_content_width=100)
    out = [HEADER]
    _walk(cli, ["looma"], root, out)
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
