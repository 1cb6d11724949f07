"""The drain's link step over store.db: whether sessions changed since the last pass, the
content evidence of commits, and linking new commits against the stored WorkItems."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from looma_git.gitrepo import RepoPaths, require_worktree

if TYPE_CHECKING:
    from looma_git.ledger.ops import Op, OpDraft
    from looma_git.ledger.state import LedgerState

# The ledger as the api reads and writes it (api/ledger.py: the fold, one batch of ops with
# the notes brought up to date); the step is handed it rather than reaching up for it.
LoadState = Callable[[RepoPaths], "LedgerState"]
Append = Callable[[RepoPaths, "list[OpDraft]", str], "list[Op]"]


# The ingest run the last pass saw (refine_meta): while store.db's `ingest_run` is still that
# one, no session can have changed, and the drain need not compare every session's version
# (a scan of every stored event).
PASS_INGEST_RUN = "pass_ingest_run"


def sessions_changed(paths: RepoPaths) -> bool:
    """Whether store.db holds sessions the last pass did not see (or saw shorter). The usual
    answer (no ingest ran since the last pass) costs two meta reads and imports nothing of
    the refinery."""
    from looma_git.index import link_targets, storedb

    if not paths.store_db.exists():
        return False
    conn = storedb.connect(paths)
    try:
        storedb.ensure_schema(conn)
        run = storedb.get_meta(conn, "ingest_run")
        if run and link_targets.pass_meta(conn, PASS_INGEST_RUN) == run:
            return False  # no ingest has run since the last pass read the sessions
        from looma_git.index import workmodel
        from looma_git.pipeline.inputs import session_versions

        return workmodel.sessions_changed(conn, session_versions(conn))
    finally:
        conn.close()


def link_content(conn: Any, worktree: Any, commits: Any, full: bool = False,
                 capable_among: Any = None) -> Any:
    """The linker's content evidence for these commits (index/written.py), the index of
    what sessions wrote brought up to date first (only events stored since the last update
    are looked at; `full`: every edit event, for a full pass). `capable_among`: which of
    these sessions show what they wrote (None: of all)."""
    from looma_git.index import written
    from looma_git.isotime import parse_ts

    written.update_written(conn, full=full)
    return written.content_for(conn, worktree, [(c.sha, parse_ts(c.ts)) for c in commits
                                                if len(c.parents) <= 1], capable_among)


def commit_subjects(commits: Any) -> dict[str, tuple[str, str]]:
    return {c.sha: (c.subject, c.ts) for c in commits}


def link_new_commits(paths: RepoPaths, shas: list[str], load_state: LoadState, append: Append,
                     *, by: str = "hook") -> dict[str, int]:
    """Link exactly these commits against the last pass's WorkItems, looking only at those
    that share a file or the branch with each commit or whose sessions wrote what it adds
    (`link_content`): no refinery pass, no WorkItem update
    (the fold derives titles, summaries and confidence from the link ops themselves), so the
    cost is flat in the size of the history. A commit whose best WorkItem is a local
    candidate publishes it (as a full pass would). Returns op counts. `load_state` and `append`
    read and write the ledger (api/ledger.py)."""
    from dataclasses import replace

    from looma_git.index import link_targets, storedb, written
    from looma_git.pipeline.linking import _branch_of, link_commits
    from looma_git.store import fold_cache, gitfacts

    worktree = require_worktree(paths)
    commits = gitfacts.list_commits(worktree, revs=tuple(shas), no_walk=True)
    if not commits or not paths.store_db.exists():
        return {}
    conn = storedb.connect(paths)
    try:
        files = {f for c in commits for f in c.files}
        branches = {b for c in commits if (b := _branch_of(c))}
        content = link_content(conn, worktree, commits, capable_among=())
        writers = {w.session for c in commits for _, k in content.added.get(c.sha, ())
                   for w in content.writes.get(k, ())}  # who wrote what the commits add
        near = link_targets.targets_near(conn, files, branches, writers)
        if not near:
            return {}
        # Which sessions show what they wrote: asked of these targets' sessions only (the
        # linker looks no further), not of every session of the history.
        content = replace(content, capable=written.writing_sessions(
            conn, {k for t, _, _ in near for k, _, _ in t.windows}))
        raw = link_targets.pass_meta(conn, "own_authors")
        own_list = json.loads(raw) if raw else None
        own = frozenset(own_list) if own_list is not None else None
        ledger_of = {t.id: lid for t, lid, _ in near if lid}
        # What the ledger says of these commits (user unlinks, links to a split by files):
        # from the fold cache's small first part when it is at the head, so a commit that
        # links to nothing never loads the fold (whose size grows with the history).
        facts = fold_cache.facts_at_head(paths.common_dir, paths.state_dir,
                                         [c.sha for c in commits])
        state = None
        if facts is None:
            state = load_state(paths)
            unlinked = state.constraints.unlinked
            parts = state.constraints.partitions
            settled = frozenset(sha for sha, wi in state.links
                                if (parts.get(wi) or {}).get("by") == "files")
        else:
            unlinked = {(sha, wi) for sha, f in facts.items() for wi in f.unlinked}
            settled = frozenset(sha for sha, f in facts.items() if f.settled)
        forbidden = frozenset((sha, local) for sha, wi in unlinked
                              for local, lid in ledger_of.items() if lid == wi)
        links = link_commits(commits, [t for t, _, _ in near], forbidden, own, content, settled)
        if not links:
            return {}
        # Only now what writes ops: the refinery's planner and the ledger's op envelopes.
        from looma_git.ledger.ops import OpDraft
        from looma_git.pipeline.link_ops import plan_links

        if state is None:
            state = load_state(paths)
        counts: dict[str, int] = {}
        creates = {t.id: c for t, lid, c in near if not lid and c}
        id_map = dict(ledger_of)
        drafts: list[dict[str, Any]] = [
            {"op": "workitem.create", "target": {"type": "workitem", "id": None},
             "payload": creates[ln.workitem]}
            for ln in {x.workitem: x for x in links}.values()
            if ln.workitem not in id_map and ln.workitem in creates]
        if drafts:
            ops = append(paths, [OpDraft(**d) for d in drafts], "system")
            counts["workitem.create"] = len(ops)
            with storedb.transaction(conn):
                for op in ops:
                    local, new_id = op.payload.get("local_id"), op.created_id()
                    if local and new_id:
                        id_map[local] = new_id
                        link_targets.set_target_ledger_id(conn, local, new_id)
            state = load_state(paths)
        live = set(state.links)
        titles = {wid: it.title for wid, it in state.workitems.items()}
        pids = gitfacts.patch_ids(worktree, sorted({ln.sha for ln in links}))
        link_drafts = plan_links(links, id_map, live, titles, pids, by, commit_subjects(commits))
        if link_drafts:
            append(paths, [OpDraft(**d) for d in link_drafts], "system")
            counts["commit.link"] = len(link_drafts)
        return counts
    finally:
        conn.close()
