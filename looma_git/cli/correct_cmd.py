"""`looma correct ...`, `looma blame`: human corrections as durable ledger ops."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from looma_git.cli.common import emit_json, repo_paths, say
from looma_git.cli.complete import workitems

if TYPE_CHECKING:
    from looma_git.wire.ledger import CorrectionOut

RATIONALE = click.option("--rationale", "-m", default=None, metavar="TEXT",
                         help="Why (kept in the ledger with the op).")
JSON = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _done(c: CorrectionOut, as_json: bool) -> None:
    if as_json:
        emit_json(c)
    else:
        say(f"{c.summary}  (op {c.op_id[:10]}; undo with `{c.undo}`)")


@click.group("correct")
def correct_group() -> None:
    """Correct the work model. Each correction is a user op in refs/looma/ledger that
    every later automated pass respects (constraints are applied before any score).

    WorkItems are named by id prefix, by exact title, or by a letter (A, B, ...) of
    the last `looma resume` listing shown in this terminal. A letter is refused, with
    the ids it meant, once another resume ran, the work model changed, or the listing
    was shown elsewhere (another terminal, an agent).
    """


@correct_group.command("merge")
@click.argument("a", shell_complete=workitems)
@click.argument("b", shell_complete=workitems)
@RATIONALE
@JSON
@click.pass_context
def merge_cmd(ctx: click.Context, a: str, b: str, rationale: str | None, as_json: bool) -> None:
    """Fuse WorkItem A into B (B stays; A's sessions, files and links move to it)."""
    from looma_git.api.correct import merge

    _done(merge(repo_paths(ctx), a, b, rationale=rationale), as_json)


@correct_group.command("split")
@click.argument("work", shell_complete=workitems)
@click.option("--into", "into", required=True, metavar='"T1","T2"',
              help="Titles of the parts, comma-separated.")
@click.option("--by", "by", type=click.Choice(["sessions", "files"]), default="sessions",
              show_default=True, help="Partition by sessions or by files.")
@click.option("--part", "parts", multiple=True, metavar="N=ITEMS",
              help="Members of part N (1-based): comma-separated session ids (prefixes) or "
                   "files. Required without a terminal; asked interactively on one.")
@RATIONALE
@JSON
@click.pass_context
def split_cmd(ctx: click.Context, work: str, into: str, by: str, parts: tuple[str, ...],
              rationale: str | None, as_json: bool) -> None:
    """Split WORK into parts that never merge again (CANNOT_LINK between them).

    \b
    Example without a terminal:
      looma correct split wi_5d1e --into "OAuth login","Token refresh" --by files \\
        --part 1=auth/oauth.py,auth/routes.py --part 2=auth/refresh.py
    """
    from looma_git.api.correct import split, split_options

    paths = repo_paths(ctx)
    titles = [t.strip().strip('"') for t in into.split(",") if t.strip()]
    members: list[list[str]] = [[] for _ in titles]
    if parts:
        for spec in parts:
            n, _, items = spec.partition("=")
            if not n.strip().isdigit() or not (1 <= int(n) <= len(titles)):
                raise click.BadParameter(f"{spec!r}: expected N=ITEMS with N in 1..{len(titles)}",
                                         param_hint="--part")
            members[int(n) - 1].extend(x.strip() for x in items.split(",") if x.strip())
    elif sys.stdin.isatty():
        item = split_options(paths, work)
        choices = [f"{a}:{s}" for a, s in item.sessions] if by == "sessions" else list(item.files)
        say(f"Splitting {item.title!r}; parts: " +
                   ", ".join(f"{i + 1}={t}" for i, t in enumerate(titles)))
        for c in choices:
            pick = int(click.prompt(f"  {c} -> part", type=click.IntRange(1, len(titles))))
            members[pick - 1].append(c.split(":", 1)[1] if by == "sessions" else c)
    else:
        raise click.UsageError("no terminal: give the partition with --part N=ITEMS")
    _done(split(paths, work, titles, members, by=by, rationale=rationale), as_json)


@correct_group.command("rename")
@click.argument("work", shell_complete=workitems)
@click.argument("title")
@RATIONALE
@JSON
@click.pass_context
def rename_cmd(ctx: click.Context, work: str, title: str, rationale: str | None,
               as_json: bool) -> None:
    """Rename WORK; the title is pinned and never changes automatically."""
    from looma_git.api.correct import rename

    _done(rename(repo_paths(ctx), work, title, rationale=rationale), as_json)


@correct_group.command("false-positive")
@click.argument("node")
@RATIONALE
@JSON
@click.pass_context
def false_positive_cmd(ctx: click.Context, node: str, rationale: str | None,
                       as_json: bool) -> None:
    """NODE (WorkItem, memory or candidate) is not real: remove it; it never comes back."""
    from looma_git.api.correct import false_positive

    _done(false_positive(repo_paths(ctx), node, rationale=rationale), as_json)


@correct_group.command("promote")
@click.argument("candidate")
@RATIONALE
@JSON
@click.pass_context
def promote_cmd(ctx: click.Context, candidate: str, rationale: str | None, as_json: bool) -> None:
    """Force-promote CANDIDATE into the shared graph (confidence pinned to 1.0)."""
    from looma_git.api.correct import promote

    _done(promote(repo_paths(ctx), candidate, rationale=rationale), as_json)


@correct_group.command("reject")
@click.argument("candidate")
@RATIONALE
@JSON
@click.pass_context
def reject_cmd(ctx: click.Context, candidate: str, rationale: str | None, as_json: bool) -> None:
    """Force-reject CANDIDATE (confidence pinned to 0.0)."""
    from looma_git.api.correct import reject

    _done(reject(repo_paths(ctx), candidate, rationale=rationale), as_json)


@correct_group.command("undo")
@click.argument("op")
@RATIONALE
@JSON
@click.pass_context
def undo_cmd(ctx: click.Context, op: str, rationale: str | None, as_json: bool) -> None:
    """Reverse OP (an id prefix from `looma log`) with an inverse op; undo an undo to restore."""
    from looma_git.api.correct import undo

    _done(undo(repo_paths(ctx), op, rationale=rationale), as_json)


@click.command("blame")
@click.argument("work", shell_complete=workitems)
@JSON
@click.pass_context
def blame_cmd(ctx: click.Context, work: str, as_json: bool) -> None:
    """Which ops shaped WORK: who, when and why."""
    from looma_git.api.correct import blame

    out = blame(repo_paths(ctx), work)
    if as_json:
        emit_json(out)
        return
    for r in out.ops:
        who = f"{r.actor.kind}:{r.actor.name}"
        why = f"  -- {r.rationale}" if r.rationale else ""
        say(f"{r.id[:10]}  L{r.lamport:<5} {r.ts}  {who:<24} {r.op}{why}")


def _linked(ctx: click.Context, commit: str, work: str, rationale: str | None, unlink: bool,
            as_json: bool) -> None:
    from looma_git.api.linking import user_link
    from looma_git.api.query import resolve_workitem
    from looma_git.wire.cli import LinkOut

    paths = repo_paths(ctx)
    op_id = user_link(paths, commit, work, rationale=rationale, unlink=unlink)
    from looma_git.api.ledger import resolve_op

    op = resolve_op(paths, op_id)
    sha = str(op.target.id)
    item = resolve_workitem(paths, str((op.payload or {}).get("workitem") or work))
    out = LinkOut(op_id=op_id, op="commit.unlink" if unlink else "commit.link", sha=sha, workitem=item.id, title=item.title,
                  undo=f"looma correct undo {op_id[:10]}")
    if as_json:
        emit_json(out)
        return
    arrow = "-x-" if unlink else "->"
    say(f"{'unlinked' if unlink else 'linked'} {sha[:10]} {arrow} {item.id} "
               f"({item.title!r})  (op {op_id[:10]}; undo with `{out.undo}`)")


@click.command("link")
@click.argument("commit")
@click.argument("work", shell_complete=workitems)
@RATIONALE
@JSON
@click.pass_context
def link_cmd(ctx: click.Context, commit: str, work: str, rationale: str | None,
             as_json: bool) -> None:
    """Record that COMMIT implements WORK (a user op; shows in `git log --notes=looma`)."""
    _linked(ctx, commit, work, rationale, False, as_json)


@click.command("unlink")
@click.argument("commit")
@click.argument("work", shell_complete=workitems)
@RATIONALE
@JSON
@click.pass_context
def unlink_cmd(ctx: click.Context, commit: str, work: str, rationale: str | None,
               as_json: bool) -> None:
    """Record that COMMIT does not implement WORK; no automated pass relinks it."""
    _linked(ctx, commit, work, rationale, True, as_json)
