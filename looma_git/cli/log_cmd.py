"""`looma log`: the ledger's ops, newest first."""

from __future__ import annotations

from typing import Any

import click


def _value(v: Any) -> str:
    """A payload value as a person reads it: no Python reprs (None, dicts, lists)."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, str | int | float):
        return str(v)
    if isinstance(v, dict):
        return "(" + ",".join(f"{k}:{_value(x)}" for k, x in sorted(v.items())
                              if isinstance(x, str | int | float)) + ")"
    if isinstance(v, list | tuple):
        if all(isinstance(x, str | int | float) for x in v):
            return ",".join(str(x) for x in v) or "-"
        return f"<{len(v)}>"
    return str(v)


def _short(payload: dict[str, Any], width: int = 60) -> str:
    items = [f"{k}={_value(v)}" for k, v in sorted(payload.items()) if k != "prev"]
    text = " ".join(items).replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


@click.command("log")
@click.option("--json", "as_json", is_flag=True, help="Print ops as a JSON list (format v1).")
@click.option("--user", "user_only", is_flag=True, help="Only ops written by people.")
@click.option("-n", "limit", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show at most N ops.")
@click.pass_context
def log_cmd(ctx: click.Context, as_json: bool, user_only: bool, limit: int | None) -> None:
    """Show ledger ops newest first, ordered by (lamport, id) as every clone folds them.

    \b
    Each line: <id[:10]> L<lamport> <time> <actor> <op> <target> <payload>
      looma log --user -n 20     the last 20 corrections people made
      looma log --json           the ops exactly as stored
    Undo one with `looma correct undo <id-prefix>`.
    """
    from looma_git.api.ledger import log
    from looma_git.gitrepo import find_repo

    ops = log(find_repo(ctx.obj.get("repo_dir") if ctx.obj else None),
              user_only=user_only, limit=limit)
    if as_json:
        from looma_git.cli.common import emit_json
        from looma_git.wire.ledger import LogOut, OpOut

        emit_json(LogOut(ops=[OpOut.model_validate(o.fields()) for o in ops]))
        return
    if not ops:
        click.echo("no ledger ops" + (" by users" if user_only else "") + " yet")
        return
    from looma_git.cli.common import clip, is_tty, page, term_width

    width = term_width() if is_tty() else 0
    lines = []
    for o in ops:
        who = o.actor.name if o.is_user else "system"
        target = f"{o.target.type}:{o.target.id}" if o.target.id else o.target.type
        extra = f" undo={o.inverse_of[:10]}" if o.inverse_of else ""
        line = (f"{o.id[:10]} L{o.lamport} {o.ts} {who} {o.op} {target} "
                f"{_short(o.payload)}{extra}").rstrip()
        lines.append(clip(line, width) if width else line)
    page(lines, ctx)
