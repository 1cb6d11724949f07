"""Library surface of the fact commands: ask (words and meaning), timeline, recall."""

from __future__ import annotations

from looma_git.api.query import (
    _git_commits,
    _items,
    _require_ledger,
    _session_rows,
    resolve_workitem,
)
from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.wire.plain import AskOut, RecallOut, TimelineOut


def ask(paths: RepoPaths, query: str, *, limit: int = 10) -> AskOut:
    """Facts answering a question, with provenance, confidence and band (retrieval/ask.py)."""
    from looma_git.retrieval.ask import ask as ask_in

    return ask_in(paths, query, _items(paths, _require_ledger(paths)), limit=limit)


def timeline(paths: RepoPaths, ref: str) -> TimelineOut:
    """Decisions, sessions, commits and ledger ops of one WorkItem, in time order."""
    from looma_git.api.ledger import log as ledger_log
    from looma_git.retrieval.timeline import timeline as timeline_of

    item = resolve_workitem(paths, ref)
    return timeline_of(item, ledger_log(paths), _session_rows(paths, item.sessions),
                       _git_commits(paths, [c.sha for c in item.commits]))


def recall(paths: RepoPaths, entity: str) -> RecallOut:
    """Everything that mentions a file, commit, branch, session or term; when nothing does
    and git knows the name (`HEAD~2`, a tag, a branch), the commits it names."""
    from looma_git.retrieval.recall import recall as recall_in
    from looma_git.store.gitfacts import rev_commits

    items = _items(paths)
    out = recall_in(items, entity)
    if not out.results:
        shas, via = rev_commits(require_worktree(paths), entity)
        if shas:
            out = recall_in(items, entity, commits=shas, via=via)
            out.resolved = sorted(shas)[:1] if via == "commit" else []
    return out
