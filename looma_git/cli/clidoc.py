"""docs/cli.md and the man pages, generated from the click command tree that `--help` prints.

`python -m looma_git.cli.clidoc` writes docs/cli.md and man/man1/*.1 (tests fail on drift).
"""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from looma_git import __version__
from looma_git.cli.main import cli
from looma_git.errors import EXIT_CODES

HEADER = """# CLI reference

Generated from the click command tree (the same text `--help` prints, and the same source as
the man pages in `man/man1/`) by `python -m looma_git.cli.clidoc`; `tests/test_cli_docs.py`
fails when it drifts. Every command also runs as `git looma ...`; `git looma --help` and
`man looma-<command>` open the man pages, `looma help <command>` works everywhere.

With `--json`, every outcome is one JSON document on stdout; a failure is
`{"error": {"code", "message", "hint", "exit_code"}}` with the exit code below.

## Exit codes

| code | meaning |
|---|---|
""" + "".join(f"| {c} | {m} |\n" for c, m in EXIT_CODES)


def walk(cmd: click.Command | None = None, parent: click.Context | None = None,
         name: str = "looma") -> Iterator[tuple[list[str], click.Command, click.Context]]:
    """Every visible command with its path and its context (as click builds it for --help)."""
    cmd = cmd or cli
    if parent is None:
        ctx = cmd.make_context(name, [], resilient_parsing=True, terminal_width=80,
                               max_content_width=80)
    else:
        ctx = cmd.make_context(name, [], parent=parent, resilient_parsing=True)
    path = ctx.command_path.split()
    if getattr(cmd, "hidden", False):
        return
    yield path, cmd, ctx
    if isinstance(cmd, click.Group):
        for child in cmd.list_commands(ctx):
            c = cmd.get_command(ctx, child)
            if c is not None:
                yield from walk(c, ctx, child)


def render() -> str:
    """The whole CLI reference as markdown."""
    out = [HEADER]
    for path, cmd, ctx in walk():
        out.append(f"\n## `{' '.join(path)}`\n")
        out.append("```text")
        out.append(cmd.get_help(ctx).rstrip())
        out.append("```")
    return "\n".join(out).rstrip() + "\n"


# --- man pages -------------------------------------------------------------------------------

def _roff(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def page_name(path: list[str]) -> str:
    """`looma`, `looma-correct`, `looma-correct-merge`."""
    return "-".join(path)


def render_man(path: list[str], cmd: click.Command, ctx: click.Context) -> str:
    """One man page (roff): NAME, SYNOPSIS, DESCRIPTION (the --help text), EXIT STATUS."""
    title = page_name(path).upper()
    short = cmd.get_short_help_str(limit=200)
    help_text = cmd.get_help(ctx).rstrip()
    date = _dt.date(2026, 1, 1).isoformat()  # fixed: pages are byte-stable across builds
    out = [f'.TH "{title}" "1" "{date}" "looma {__version__}" "looma manual"',
           ".SH NAME", f"{_roff(page_name(path))} \\- {_roff(short)}",
           ".SH SYNOPSIS", f".B {_roff(' '.join(path))}", _roff(" ".join(cmd.collect_usage_pieces(ctx))),
           ".SH DESCRIPTION", ".nf", _roff(help_text), ".fi"]
    if isinstance(cmd, click.Group):
        subs = [c for c in cmd.list_commands(ctx)]
        out += [".SH COMMANDS", "See " + ", ".join(
            f"\\fB{page_name([*path, s])}\\fR(1)" for s in subs) + "."]
    out += [".SH EXIT STATUS", ".TS", "l l.", *(f"{c}\t{_roff(m)}" for c, m in EXIT_CODES),
            ".TE", ".SH SEE ALSO",
            "\\fBlooma\\fR(1), \\fBgit\\-looma\\fR(1); "
            "the reference: docs/cli.md in the looma repository."]
    return "\n".join(out) + "\n"


def man_pages() -> dict[str, str]:
    """File name -> roff for every command, plus git-looma.1 (git's `--help` opens it)."""
    pages = {f"{page_name(path)}.1": render_man(path, cmd, ctx) for path, cmd, ctx in walk()}
    root = pages["looma.1"]
    pages["git-looma.1"] = root.replace('.TH "LOOMA"', '.TH "GIT-LOOMA"', 1).replace(
        ".SH NAME\nlooma \\-", ".SH NAME\ngit\\-looma \\-", 1).replace(
        ".SH SYNOPSIS\n.B looma", ".SH SYNOPSIS\n.B git looma", 1)
    return pages


def write_all(root: Path) -> None:
    """docs/cli.md and man/man1/*.1 under `root` (the repository); stale pages removed."""
    (root / "docs" / "cli.md").write_text(render())
    mandir = root / "man" / "man1"
    mandir.mkdir(parents=True, exist_ok=True)
    pages = man_pages()
    for old in mandir.glob("*.1"):
        if old.name not in pages:
            old.unlink()
    for name, text in pages.items():
        (mandir / name).write_text(text)


if __name__ == "__main__":
    if sys.argv[1:] == ["--stdout"]:
        print(render(), end="")
    else:
        write_all(Path(__file__).resolve().parents[2])
