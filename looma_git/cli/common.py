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
