"""Library surface of `looma ingest`: read new transcript records, then refresh the model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from looma_git.gitrepo import RepoPaths
from looma_git.ingest.base import DiscoveryEnv
from looma_git.settings import Settings

# New events from which the work model runs in a child process (a cold ingest, a large
# backlog): below it the child's start and the parent's reading the ledger again cost more
# than the memory it returns.
WORK_MODEL_CHILD_FROM = 20_000


@dataclass
class UpdateReport:
    """What ingest found and what the refinery then published."""

    ingest: Any  # api.ingest.IngestReport
    refine: Any | None  # api.refine.RefineReport, None when skipped or nothing new


def update(paths: RepoPaths, env: DiscoveryEnv, *, agents: list[str] | None = None,
           progress: Callable[[int, int, str], None] | None = None,
           settings: Settings | None = None, refine: bool = True,
           phase: Callable[[str], None] | None = None) -> UpdateReport:
    """Ingest; when anything new arrived (or nothing was refined yet), run the refinery.
    `phase(name)` is called as each named phase starts (for a progress display)."""
    from looma_git.store.locking import pass_lock

    # Reading and the work model are one critical section: no other pass (a drainer's,
    # another ingest's) reads the store while this one writes it, nor publishes what this one
    # publishes. The work model's forked child holds it through the parent's open lock file.
    def waiting() -> None:
        if phase is not None:
            phase("waiting for another looma ingest or the hooks' drainer")

    with pass_lock(paths.state_dir, on_wait=waiting):
        return _update(paths, env, agents, progress, settings, refine, phase)


def _update(paths: RepoPaths, env: DiscoveryEnv, agents: list[str] | None,
            progress: Callable[[int, int, str], None] | None, settings: Settings | None,
            refine: bool, phase: Callable[[str], None] | None) -> UpdateReport:
    from looma_git.api.ingest import ingest

    def _phase(name: str) -> None:
        if phase is not None:
            phase(name)

    _phase("reading transcripts")
    report = ingest(paths, env, agents=agents, progress=progress)
    changed = bool(report.events_added or report.events_updated)
    result = None
    if refine and (changed or not _refined_before(paths)):
        _phase("building the work model")
        from looma_git.api.refine import refine_and_publish  # not imported by --no-refine
        from looma_git.index.message_index import start_beside
        from looma_git.pipeline.refine import after_segmenting

        new = report.events_added + report.events_updated

        def work_model() -> Any:
            # Many new messages (a cold ingest): a child indexes them (index/message_index)
            # once the pass has segmented its sessions. Segmenting keeps both cores busy (its
            # workers); what follows runs on one, so the index is built on the other, not
            # taken from the workers (started with the pass, it shared their cores).
            joins: list[Callable[[], int | None]] = []
            with after_segmenting(lambda: joins.append(start_beside(paths, new))):
                try:
                    return refine_and_publish(paths, by="backfill", settings=settings,
                                              incremental=True)
                finally:
                    for join in joins:
                        join()

        from looma_git.index import vector_background

        # The process that embeds a cold ingest's vectors after the command starts now: a
        # thread of the lowest priority loads what it needs on the core the work model's last
        # steps leave idle, then it waits for its task (index/vector_background.Prewarmed).
        prewarmed = vector_background.prewarm(paths) \
            if new >= vector_background.BESIDE_FROM else None
        try:
            result = _model_and_index(paths, new, work_model, prewarmed, _phase)
        finally:
            if prewarmed is not None:
                prewarmed.cancel()  # (no task handed over: it exits)

    return UpdateReport(ingest=report, refine=result)


def _model_and_index(paths: RepoPaths, new: int, work_model: Callable[[], Any],
                     prewarmed: Any, phase: Callable[[str], None]) -> Any:
    """The work model (`work_model()`), then the index of what it published; returns the
    refinery's report."""
    from looma_git.api.index import INGEST_BACKLOG_BUDGET_S, reindex
    from looma_git.errors import LoomaError
    from looma_git.index.vector_background import BESIDE_FROM
    from looma_git.pipeline.child import in_child
    from looma_git.store import gcpause

    # A pass over many new events (a cold ingest) runs in a child: the heap its
    # work model grew is returned to the system before indexing, not kept under it.
    result = in_child(work_model) if new >= WORK_MODEL_CHILD_FROM else work_model()
    phase("indexing")
    # Keep the index fresh here, off the query path, so the next `resume` finds it ready:
    # vectors for what this run's new work added, and a bounded share of any backlog
    # (the rest is reported as pending by `looma status`).
    try:
        # After many new events (a cold ingest) a detached process embeds the vectors:
        # the command returns once words can answer (index/vector_background). After a
        # few (a new session) the records of every WorkItem are loaded and kept to the
        # command's end: no collection need walk them (store/gcpause.py).
        with gcpause.paused(new < BESIDE_FROM):
            reindex(paths, full=False, memory_budget_s=INGEST_BACKLOG_BUDGET_S,
                    embed_new=True,
                    last_use=True,  # the command reads the ledger no more: drop its fold
                    vectors_beside=new >= BESIDE_FROM, prewarmed=prewarmed)
    except LoomaError:
        pass  # the index is a cache: the next query refreshes it
    return result


def _refined_before(paths: RepoPaths) -> bool:
    from looma_git.index.reads import refined_before

    return refined_before(paths)
