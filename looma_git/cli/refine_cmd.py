"""`looma reprocess`, `looma reindex`, `looma backfill`: rebuild the model and the index."""

from __future__ import annotations

import dataclasses
import os

import click

from looma_git.cli.common import emit_json, repo_paths, say


@click.command("reprocess")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.pass_context
def reprocess_cmd(ctx: click.Context, as_json: bool) -> None:
    """Rebuild the local work model from stored events plus the ledger.

    Deterministic: the same events and ledger give the same WorkItems. User corrections in
    the ledger are applied before any score. Promotions are published as system ops; running
    it again with nothing new publishes nothing.
    """
    from looma_git.api.index import reindex
    from looma_git.api.refine import refine_and_publish
    from looma_git.cli.progress import Phases, fmt_elapsed, wanted
    from looma_git.settings import load_settings

    paths = repo_paths(ctx)
    with Phases(wanted(as_json)) as bar:
        bar.phase("building the work model")
        report = refine_and_publish(paths, by="backfill",
                                    settings=load_settings(paths, os.environ))
        bar.phase("indexing")
        # The events did not change: refresh the WorkItem docs and add only messages not
        # yet indexed (a missing or damaged index is still rebuilt whole).
        reindex(paths, full=False)
    if as_json:
        from looma_git.wire.cli import RefineOut

        emit_json(RefineOut.model_validate(dataclasses.asdict(report)))
        return
    say(f"{report.sessions} sessions, {report.windows} windows -> {report.workitems} "
               f"WorkItems ({report.promoted} promoted, {report.candidates} local candidates), "
               f"{report.memories} memories, {report.links} commit links; "
               f"{report.ops_written} ledger ops written; {fmt_elapsed(bar.elapsed)}")
    if report.llm:
        click.echo(_llm_line(report.llm))


@click.command("backfill")
@click.option("--since", "since", default=None, metavar="REV",
              help="Only link commits after REV (default: all history).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.pass_context
def backfill_cmd(ctx: click.Context, since: str | None, as_json: bool) -> None:
    """Link existing history to WorkItems in one batched notes write."""
    from looma_git.api.linking import backfill
    from looma_git.cli.progress import Phases, fmt_elapsed, wanted
    from looma_git.settings import load_settings

    paths = repo_paths(ctx)
    with Phases(wanted(as_json)) as bar:
        bar.phase("linking commits to WorkItems")
        report = backfill(paths, since, settings=load_settings(paths, os.environ))
    if as_json:
        from looma_git.wire.cli import RefineOut

        emit_json(RefineOut.model_validate(dataclasses.asdict(report)))
        return
    say(f"linked: {report.ops.get('commit.link', 0)} new commit links "
               f"({report.links} links among the commits considered) in "
               f"{fmt_elapsed(bar.elapsed)}; see `git log --notes=looma`")
    if report.llm:
        click.echo(_llm_line(report.llm))


def _llm_line(stats: dict[str, int]) -> str:
    line = (f"LLM extractor: {stats.get('requests', 0)} requests, "
            f"{stats.get('cache_hits', 0)} cached, {stats.get('candidates', 0)} candidates, "
            f"{stats.get('dropped', 0)} quotes dropped, {stats.get('errors', 0)} errors")
    if stats.get("skipped"):
        line += f" ({stats['skipped']} messages skipped after repeated failures)"
    return line


@click.command("reindex")
@click.option("--all-vectors", is_flag=True,
              help="Embed every memory now (by default memory vectors are topped up within a "
                   "short time budget per reindex; WorkItem vectors are always complete).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.pass_context
def reindex_cmd(ctx: click.Context, all_vectors: bool, as_json: bool) -> None:
    """Rebuild the local search index and vectors from the ledger ref plus local events.

    On a fresh clone that has only the looma refs, this is all a teammate needs before
    `looma work` and `looma resume`.
    """
    from looma_git.api.index import MEMORY_EMBED_BUDGET_S, reindex_from_refs
    from looma_git.cli.progress import Phases, fmt_elapsed, wanted

    with Phases(wanted(as_json)) as bar:
        bar.phase("rebuilding the index")
        report = reindex_from_refs(repo_paths(ctx), memory_budget_s=None if all_vectors else
                                   MEMORY_EMBED_BUDGET_S)
    if as_json:
        from looma_git.wire.cli import ReindexOut

        emit_json(ReindexOut.model_validate(dataclasses.asdict(report)))
        return
    if report.repaired:
        click.echo(f"repaired: {report.repaired}")
    if report.merged_remotes:
        click.echo("merged looma refs fetched from: " + ", ".join(report.merged_remotes))
    mode = f"embeddings: {report.embedder}" if report.embedder else \
        f"lexical only ({report.embedder_reason})"
    say(f"indexed {report.workitems} WorkItems, {report.memories} memories, "
               f"{report.messages} messages; {report.vectors} vectors"
               + (f" ({report.vectors_pending} memory vectors pending: --all-vectors)"
                  if report.vectors_pending else "") + f"; {mode}; "
               f"{fmt_elapsed(bar.elapsed)}")
