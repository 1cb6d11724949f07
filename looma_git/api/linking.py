"""Library surface of commit linking: the drainer's step, `link`/`unlink`, `relink`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from looma_git.errors import NotFoundError, UsageError
from looma_git.gitrepo import RepoPaths, require_worktree

# The step itself is the index layer's (it reads store.db); api/refine.py takes these from here.
from looma_git.index.link_step import (  # noqa: F401
    PASS_INGEST_RUN,
    commit_subjects,
    link_content,
    sessions_changed,
)
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
    from looma_git.store.locking import pass_lock

    # Behind a pass that is running (a cold ingest's work model): then the stored targets and
    # WorkItems are the ones it published, and it linked these commits if it listed them.
    with pass_lock(paths.state_dir):
        return _link(paths, shas, by, settings)


def _link(paths: RepoPaths, shas: list[str], by: str, settings: Settings | None) -> LinkReport:
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


def link_new_commits(paths: RepoPaths, shas: list[str], *, by: str = "hook") -> dict[str, int]:
    """Link exactly these commits against the last pass's WorkItems (index/link_step.py), the
    ledger read and written through api/ledger.py; returns op counts."""
    from looma_git.api import ledger
    from looma_git.index import link_step

    def append(p: RepoPaths, drafts: list[Any], actor: str) -> list[Any]:
        return ledger.append(p, drafts, actor=actor)

    return link_step.link_new_commits(paths, shas, ledger.load_state, append, by=by)


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
