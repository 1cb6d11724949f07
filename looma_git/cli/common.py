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
    """Print a pydantic model or plain data as stable, sorted JSON."""
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json")
    click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))


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
