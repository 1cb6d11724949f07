"""Library surface of commit linking: the drainer's step, `link`/`unlink`, `relink`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from looma_git.errors import NotFoundError, UsageError
from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.settings import Settings

if TYPE_CHECKING:  # built only by `relink`: the drain's link step loads no wire model
    from looma_git.wire.cli import RelinkReport


@dataclass
class LinkReport:
    """What a linking step did."""

    commits: int = 0
    linked: int = 0
    ops: dict[str, int] = field(default_factory=dict)


def link_commits(paths: RepoPaths, shas: list[str], *, by: str = "hook",
                 settings: Settings | None = None) -> LinkReport:
    """The drainer's link step: link exactly these commits against the WorkItems that share a
    file or the branch with them (`link_new_commits`: flat in history size; a
    commit that matches no WorkItem gets no link rather than a weak one). Then, only when
    transcripts changed since the last pass, an incremental pass over the new or grown
    sessions (with an LLM configured, only its cached answers: the hook never waits)."""
    if not shas:
        return LinkReport()
    if sessions_changed(paths):
        from looma_git.api.refine import refine_and_publish

        # New transcript lines first (an incremental pass links every commit, these too), so
        # a commit is always scored against the WorkItems a full rebuild would see.
        more = refine_and_publish(paths, by=by, settings=settings, offline=True,
                                  incremental=True)
        return LinkReport(commits=len(shas), linked=more.ops.get("commit.link", 0),
                          ops=dict(more.ops))
    ops = link_new_commits(paths, shas, by=by)
    return LinkReport(commits=len(shas), linked=ops.get("commit.link", 0), ops=dict(ops))


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


def _full_sha(paths: RepoPaths, rev: str) -> str:
    from looma_git.store import git
    from looma_git.store.gitfacts import existing_objects

    worktree = require_worktree(paths)
    sha = git.rev_parse_commit(rev, cwd=worktree) or ""
    if not sha or not existing_objects(worktree, [sha]):
        raise NotFoundError(f"no commit {rev!r} in this repository")
    return sha


def user_link(paths: RepoPaths, rev: str, work_ref: str, *, rationale: str | None = None,
              unlink: bool = False) -> str:
    """A user `commit.link` / `commit.unlink` op; returns the op id."""
    from looma_git.api import ledger
    from looma_git.api.correct import require_identity
    from looma_git.api.query import resolve_workitem
    from looma_git.ledger.ops import OpDraft
    from looma_git.store.gitfacts import list_commits, patch_ids

    sha = _full_sha(paths, rev)
    item = resolve_workitem(paths, work_ref)
    require_identity(paths)
    state = ledger.load_state(paths)
    live = (sha, item.id) in state.links
    if unlink and not live:
        raise UsageError(f"{sha[:10]} is not linked to {item.id}")
    if not unlink and live and state.links[(sha, item.id)].user:
        raise UsageError(f"{sha[:10]} is already linked to {item.id}")
    if unlink:
        draft = OpDraft(op="commit.unlink", target={"type": "commit", "id": sha},
                        payload={"workitem": item.id}, rationale=rationale)
    else:
        info = list_commits(require_worktree(paths), revs=(sha,), no_walk=True)
        files = sorted(set(info[0].files) & set(item.files)) if info else []
        draft = OpDraft(op="commit.link", target={"type": "commit", "id": sha},
                        payload={"workitem": item.id, "title": item.title, "confidence": 1.0,
                                 "by": "user", "files": files,
                                 "patch_id": patch_ids(require_worktree(paths), [sha]).get(sha),
                                 "branch": None, "why": {"user": 1.0}},
                        rationale=rationale)
    ops = ledger.append(paths, [draft], actor="user")
    return str(ops[0].id)


# Clocks of the clone that rebased or squashed may run behind ours.
_CLOCK_SLACK_S = 86400
_MAX_PATHS = 1000


def relink(paths: RepoPaths) -> RelinkReport:
    """Re-attach links whose commit no branch/tag reaches any more (rebased, cherry-picked or
    squashed elsewhere) to its replacement: same patch-id first, then a squash that touches
    the link's files and names the original subject or carries its added lines. Writes one
    `commit.rewrite` op per matched commit (the fold moves the links, notes follow);
    idempotent: a second run finds no orphan it has not already reported."""
    from datetime import UTC, datetime

    from looma_git.api import ledger
    from looma_git.ledger.ops import OpDraft
    from looma_git.pipeline.relink import Orphan, RewriteCandidate, match_orphans
    from looma_git.pipeline.signals import parse_ts
    from looma_git.store import gitfacts
    from looma_git.wire.cli import RelinkMatchOut, RelinkMissOut, RelinkReport

    worktree = require_worktree(paths)
    state = ledger.load_state(paths)
    by_sha: dict[str, list[Any]] = {}
    for link in state.live_links():  # links of merged-away or removed WorkItems stay put
        by_sha.setdefault(link.sha, []).append(link)
    report = RelinkReport(linked_commits=len(by_sha))
    lost = sorted(gitfacts.unreachable(worktree, sorted(by_sha)))
    report.orphaned = len(lost)
    if not lost:
        return report
    have = set(gitfacts.existing_objects(worktree, lost).values())
    present = {c.sha: c for c in gitfacts.list_commits(
        worktree, revs=tuple(s for s in lost if s in have), no_walk=True)} if have else {}
    facts = gitfacts.patch_facts(worktree, sorted(present))
    orphans = []
    for sha in lost:
        links = by_sha[sha]
        stored_pid = next((ln.patch_id for ln in links if ln.patch_id), None)
        link_files = frozenset(f for ln in links for f in ln.files)
        info = present.get(sha)
        if info is None:
            orphans.append(Orphan(sha=sha, patch_id=stored_pid, files=link_files))
            continue
        fact = facts.get(sha)
        orphans.append(Orphan(
            sha=sha, patch_id=(fact.patch_id if fact else None) or stored_pid,
            files=link_files or frozenset(info.files), subject=info.subject,
            ts=parse_ts(info.ts), added=fact.added if fact else frozenset()))
    # Candidates: reachable, non-merge, committed after the oldest orphan (less clock slack),
    # touching one of the orphans' files (all history if some orphan's files are unknown).
    times = [o.ts for o in orphans if o.ts is not None]
    after = None
    if times and len(times) == len(orphans):
        after = datetime.fromtimestamp(max(0.0, min(times) - _CLOCK_SLACK_S),
                                       UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    want = () if any(not o.files for o in orphans) else tuple(
        sorted({f for o in orphans for f in o.files}))
    if len(want) > _MAX_PATHS:
        want = ()  # a pathspec that long costs more than it saves (and may not fit argv)
    reachable = [c for c in gitfacts.list_commits(
        worktree, revs=gitfacts.history_refs(worktree), after=after, paths=want) if len(c.parents) <= 1]
    cfacts = gitfacts.patch_facts(worktree, [c.sha for c in reachable])
    cands = [RewriteCandidate(sha=c.sha, ts=parse_ts(c.ts), message=f"{c.subject}\n{c.body}",
                              files=frozenset(c.files), patch_id=cfacts[c.sha].patch_id,
                              added=cfacts[c.sha].added) for c in reachable]
    matches, misses = match_orphans(orphans, cands)
    wis = {sha: sorted({ln.workitem for ln in links}) for sha, links in by_sha.items()}
    report.matched = [RelinkMatchOut(old=m.old, new=m.new, how=m.how, workitems=wis[m.old])
                      for m in matches]
    report.unmatched = [RelinkMissOut(sha=m.sha, workitems=wis[m.sha], reason=m.reason)
                        for m in misses]
    if matches:
        drafts = [OpDraft(op="commit.rewrite", target={"type": "commit", "id": m.old},
                          payload={"old": m.old, "new": m.new, "by": "relink", "how": m.how})
                  for m in matches]
        report.ops_written = len(ledger.append(paths, drafts, actor="system"))
    return report


def backfill(paths: RepoPaths, since: str | None = None, *, settings: Settings | None = None
             ) -> Any:
    """Link existing history (all of it, or after `since`) in one batched notes write."""
    from looma_git.api.refine import refine_and_publish

    revs: tuple[str, ...] = ("--all",)
    if since:
        revs = (f"{_full_sha(paths, since)}..HEAD",)  # an unknown revision is an error
    return refine_and_publish(paths, by="backfill", commits_revs=revs, settings=settings)


def link_new_commits(paths: RepoPaths, shas: list[str], *, by: str = "hook") -> dict[str, int]:
    """Link exactly these commits against the last pass's WorkItems, looking only at those
    that share a file or the branch with each commit or whose sessions wrote what it adds
    (`link_content`): no refinery pass, no WorkItem update
    (the fold derives titles, summaries and confidence from the link ops themselves), so the
    cost is flat in the size of the history. A commit whose best WorkItem is a local
    candidate publishes it (as a full pass would). Returns op counts."""
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
            from looma_git.api import ledger

            state = ledger.load_state(paths)
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
        # Only now what writes ops: the refinery's planner, the ledger and its op envelopes.
        from looma_git.api import ledger
        from looma_git.ledger.ops import OpDraft
        from looma_git.pipeline.promote import plan_links

        if state is None:
            state = ledger.load_state(paths)
        counts: dict[str, int] = {}
        creates = {t.id: c for t, lid, c in near if not lid and c}
        id_map = dict(ledger_of)
        drafts: list[dict[str, Any]] = [
            {"op": "workitem.create", "target": {"type": "workitem", "id": None},
             "payload": creates[ln.workitem]}
            for ln in {x.workitem: x for x in links}.values()
            if ln.workitem not in id_map and ln.workitem in creates]
        if drafts:
            ops = ledger.append(paths, [OpDraft(**d) for d in drafts], actor="system")
            counts["workitem.create"] = len(ops)
            with conn:
                for op in ops:
                    local, new_id = op.payload.get("local_id"), op.created_id()
                    if local and new_id:
                        id_map[local] = new_id
                        link_targets.set_target_ledger_id(conn, local, new_id)
            state = ledger.load_state(paths)
        live = set(state.links)
        titles = {wid: it.title for wid, it in state.workitems.items()}
        pids = gitfacts.patch_ids(worktree, sorted({ln.sha for ln in links}))
        link_drafts = plan_links(links, id_map, live, titles, pids, by, commit_subjects(commits))
        if link_drafts:
            ledger.append(paths, [OpDraft(**d) for d in link_drafts], actor="system")
            counts["commit.link"] = len(link_drafts)
        return counts
    finally:
        conn.close()
