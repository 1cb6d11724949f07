"""Shared CLI helpers: repository lookup from -C, JSON output, confidence tags."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from looma_git.gitrepo import RepoPaths, find_repo


def repo_paths(ctx: click.Context) -> RepoPaths:
    """The repository named by `-C` (or the cwd)."""
    obj = ctx.find_root().obj or {}
    return find_repo(obj.get("repo_dir"))


def emit_json(data: Any) -> None:
    """Print a wire model (`looma_git.wire`, or a `wire/plain.py` twin dumped through one) as
    stable, sorted JSON; a bare dict is refused: every `--json` shape is declared."""
    if not hasattr(data, "model_dump"):
        raise TypeError(f"--json output must be a wire model, not {type(data).__name__}")
    click.echo(json.dumps(data.model_dump(mode="json"), indent=2, sort_keys=True,
                          ensure_ascii=False))


def conf_tag(confidence: float | None, band: str | None) -> str:
    """`[conf 0.82 high]`: shown on every line that states something."""
    if confidence is None:
        return "[unconfirmed]"
    return f"[conf {confidence:.2f} {band}]"


def files_tag(files: list[str], shown: int = 1) -> str:
    if not files:
        return ""
    more = f" +{len(files) - shown}" if len(files) > shown else ""
    return f"files: {', '.join(files[:shown])}{more}"


def is_tty() -> bool:
    return sys.stdout.isatty()


def term_width() -> int:
    """Columns of the terminal on stdout (COLUMNS wins), 80 when unknown."""
    import os
    import shutil

    if os.environ.get("COLUMNS", "").isdigit() and int(os.environ["COLUMNS"]) > 0:
        return int(os.environ["COLUMNS"])
    try:
        cols = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        cols = shutil.get_terminal_size((80, 24)).columns
    return cols or 80


def say(text: str = "", *, indent: int = 2) -> None:
    """Echo `text`; on a terminal each line is word-wrapped to its width, continuation lines
    indented by `indent` more than the line's own indent (in a pipe lines stay whole)."""
    if not is_tty():
        click.echo(text)
        return
    import textwrap

    width = term_width()
    for line in text.split("\n"):
        if len(line) <= width:
            click.echo(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        click.echo("\n".join(textwrap.wrap(line, width, subsequent_indent=" " * (lead + indent),
                                            break_on_hyphens=False)))


def clip(text: str, width: int) -> str:
    """`text` cut to `width` columns with an ellipsis."""
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _pager_command() -> str | None:
    """git's choice: GIT_PAGER, core.pager, PAGER, then `less` (with LESS=FRX as git sets)."""
    import os
    import shutil
    import subprocess

    for value in (os.environ.get("GIT_PAGER"),):
        if value is not None:
            return value or None
    try:
        proc = subprocess.run(["git", "config", "core.pager"], capture_output=True, text=True,
                              timeout=5)
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    if os.environ.get("PAGER") is not None:
        return os.environ["PAGER"] or None
    return "less" if shutil.which("less") else None


def page(lines: list[str], ctx: click.Context | None = None) -> None:
    """Print a long listing through the pager on a terminal, as git does (`--no-pager`,
    core.pager, PAGER; `cat` or an empty value turn it off); straight out in a pipe."""
    import os
    import subprocess

    text = "\n".join(lines)
    root = ctx.find_root() if ctx is not None else None
    no_pager = bool(root and (root.obj or {}).get("no_pager"))
    height = 24
    try:
        height = os.get_terminal_size(sys.stdout.fileno()).lines or 24
    except (OSError, ValueError, AttributeError):
        pass
    cmd = None if no_pager or not is_tty() or len(lines) < height else _pager_command()
    if cmd in (None, "cat"):
        if text:
            click.echo(text)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        proc = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        click.echo(text)
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write((text + "\n").encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the user quit the pager early
    proc.wait()
