"""Library surface of the local index: reindex from the ledger + local events, keep it fresh."""

from __future__ import annotations

from looma_git.gitrepo import RepoPaths
from looma_git.index.rebuild import (  # noqa: F401  (the api surface: cli, mcp, tests)
    BACKGROUND_MEMORY_BUDGET_S,
    INGEST_BACKLOG_BUDGET_S,
    MEMORY_EMBED_BUDGET_S,
    QUERY_MEMORY_BUDGET_S,
    ReindexReport,
    ensure_fresh,
    fresh_head,
    fulltext_dir,
    reindex,
    window_owners,
)
from looma_git.index.vector_sync import vectors_path  # noqa: F401  (api surface: tests, status)
from looma_git.retrieval.head_records import (  # noqa: F401  (the api surface)
    _RECORDS,
    REFRESH_LOCK,
    load_items,
    load_records,
    refresh_in_background,
)
from looma_git.store.heads import ledger_head  # noqa: F401  (the api surface)


def reindex_from_refs(paths: RepoPaths, *, memory_budget_s: float | None = MEMORY_EMBED_BUDGET_S
                      ) -> ReindexReport:
    """`looma reindex`: first merge looma refs a plain `git fetch` brought for sharing remotes,
    then rebuild the whole local index from the ledger plus local events."""
    from looma_git.api.sync import merge_fetched
    from looma_git.index.storedb import check_integrity

    merged = merge_fetched(paths)
    damaged = check_integrity(paths)  # a damaged cache is set aside and rebuilt from the refs
    report = reindex(paths, full=True, memory_budget_s=memory_budget_s)
    if damaged:
        report.repaired = (f"{damaged}: set aside and rebuilt from the refs (transcripts are "
                           "re-read by the next `looma ingest`)")
    report.merged_remotes = [m.remote for m in merged]
    return report
