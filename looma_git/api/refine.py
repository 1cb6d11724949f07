"""Library surface of the refinery: run a pass over store.db + git + ledger and publish."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from looma_git.api import refine_save

# The drain's link step needs these without the refinery: they live with it (api/linking.py).
from looma_git.api.linking import (  # noqa: F401
    PASS_INGEST_RUN,
    commit_subjects,
    link_content,
    sessions_changed,
)
from looma_git.api.refine_save import LEDGER_AFTER
from looma_git.api.seeds import seeds_from_state
from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.ledger.state import LedgerState
from looma_git.pipeline.clusters import Seed
from looma_git.pipeline.converge import observed_by_survivor, plan_merges
from looma_git.pipeline.link_ops import plan_links
from looma_git.pipeline.packed import MemoryList
from looma_git.pipeline.promote import (
    eligible,
    plan_memories,
    plan_workitems,
)
from looma_git.pipeline.refine import RefineInput, RefineResult, StoredWindow, refine
from looma_git.pipeline.signals import sha_candidates
from looma_git.store import gitfacts

if TYPE_CHECKING:
    from looma_git.index.workmodel_state import Connection
    from looma_git.ledger.ops import Op  # pydantic envelopes: loaded only to write an op
    from looma_git.pipeline.extractor import Extractor
    from looma_git.settings import Settings

@dataclass
class RefineReport:
    """What a pass did."""

    sessions: int = 0
    windows: int = 0
    workitems: int = 0
    promoted: int = 0
    candidates: int = 0
    memories: int = 0
    links: int = 0
    ops_written: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    llm: dict[str, int] = field(default_factory=dict)  # LLM extractor counters ({} when off)
    mode: str = "full"  # full | incremental
    resegmented: int = 0  # sessions read and segmented in this pass
    rescored: int = 0  # windows scored (the others kept their stored assignment)


SESSION_BATCH = 50  # sessions whose sha mentions are validated in one git call


def _stream(conn: Connection, worktree: Any, keys: list[str],
            sha_lookup: dict[str, str]) -> Iterator[Any]:
    """The named sessions one at a time; `sha_lookup` learns each batch's commit mentions
    before its sessions are yielded (existence is a fact, so batching changes nothing)."""
    from looma_git.pipeline.inputs import load_session

    for i in range(0, len(keys), SESSION_BATCH):
        batch = [load_session(conn, *k.split(":", 1)) for k in keys[i:i + SESSION_BATCH]]
        sha_lookup.update(gitfacts.existing_objects(worktree, sha_candidates(batch)))
        yield from batch
        del batch


def run_pass(paths: RepoPaths, state: LedgerState, conn: Connection,
             commits_revs: tuple[str, ...] = ("--all",), no_walk: bool = False,
             extractor: Extractor | None = None, incremental: bool = False
             ) -> tuple[RefineResult, dict[str, str], frozenset[str], tuple[Seed, ...], int,
                        str, tuple[Any, ...], dict[str, Any]]:
    """One pure refinery pass over what is stored locally and in git.

    Full: every session is read (one at a time) and segmented. Incremental: only sessions
    that are new, grew, or touch a path the repository gained or lost since the last pass;
    the others' windows come from store.db. Returns (result, session versions, known paths,
    seeds resolved against, sessions read, mode, the stored windows and the memo it loaded)."""
    from looma_git.index import refine_memo, workmodel, workmodel_state
    from looma_git.pipeline.clusters import window_order
    from looma_git.pipeline.extractor import HeuristicExtractor
    from looma_git.pipeline.inputs import session_versions
    from looma_git.pipeline.segment_pool import segment_all
    from looma_git.store.clone import user_actor

    worktree = require_worktree(paths)
    versions = (workmodel_state.versions_since(conn) if incremental else None
                ) or session_versions(conn)
    commits = gitfacts.list_commits(worktree, revs=commits_revs, no_walk=no_walk)
    known = gitfacts.known_paths(worktree)
    seeds, overrides, forbidden, live = seeds_from_state(state)
    prior: list[StoredWindow] = []
    dirty_from = float("inf")
    mode = "full"
    keys = sorted(versions)
    kept = None
    if incremental and workmodel.get_meta(conn, "pass") is not None:
        mode = "incremental"
        before = workmodel.stored_sessions(conn)
        changed = {k for k, v in versions.items() if before.get(k) != v}
        moved = workmodel.known_paths(conn) ^ set(known)
        if moved:
            changed |= workmodel.sessions_touching(conn, moved) & set(versions)
        gone = set(before) - set(versions)
        kept = workmodel_state.appendable(conn, seeds, commits, changed, before,
                                            bool(gone), memo_code())
        if kept is None:
            same_code = workmodel.get_meta(conn, "memo_code") == memo_code()
            for sw in workmodel.stored_windows(conn, skip=set(), titles=same_code):
                key = sw.signal.session_key
                if key in gone:
                    dirty_from = min(dirty_from, window_order(sw.signal)[0])
                else:  # a changed session's new segmentation is compared with it window by
                    prior.append(sw)  # window
        keys = sorted(changed)
    # The seeds the stored decisions were made against and the per-cluster memo: what this
    # pass compares its own with to replay decisions and reuse results (pipeline/replay.py).
    # A full pass (`looma reprocess`) uses neither.
    prior_seeds = workmodel_state.load_seeds(conn) if mode == "incremental" else None
    memo = refine_memo.load_memo(conn, memo_code()) if mode == "incremental" else {}
    actor = user_actor(paths)
    sha_lookup: dict[str, str] = {}
    chosen = extractor if extractor is not None else HeuristicExtractor()
    # Many sessions (a cold ingest, reprocess): segmented by worker processes, earliest first;
    # started before the content evidence is read (it needs none), so they run beside it.
    segmented = segment_all(
        keys, connect=workmodel_state.reader(paths),
        lookup=lambda shas: gitfacts.existing_objects(worktree, shas),
        known_paths=frozenset(known), prior=prior,
        extractor=chosen)
    # An appending pass reads content evidence only for the commits it links again (and its
    # new sessions' writes), not every commit's lines: pipeline/resolve_links.py.
    content = None if kept is not None else link_content(conn, worktree, commits,
                                                         full=mode == "full")

    def content_of(shas: list[str] | None) -> Any:
        want = None if shas is None else set(shas)
        return link_content(conn, worktree, [c for c in commits
                                             if want is None or c.sha in want])

    def load(clusters: set[str] | None, windows: set[str] | None) -> list[StoredWindow]:
        got = workmodel.windows_in(conn, clusters, windows)
        if clusters is None and windows is None:
            prior.extend(got)  # (what the store holds: save_windows keeps equal rows)
        return got

    result = refine(RefineInput(
        sessions=_stream(conn, worktree, keys, sha_lookup) if segmented is None else (),
        segmented=segmented, commits=tuple(commits),
        known_paths=known, sha_lookup=sha_lookup, seeds=tuple(seeds),
        forbidden_links=forbidden, ledger_links=live,
        overrides=tuple(sorted(overrides.items())), extractor=extractor,
        prior=tuple(prior), replay=prior_seeds is not None, dirty_from=dirty_from,
        local_authors=frozenset({actor.name} if actor.name else set()), content=content,
        prior_seeds=prior_seeds, memo=memo, state=kept,
        load=load if kept is not None else None, state_code=memo_code(),
        content_of=content_of if kept is not None else None,
        new_writes=(lambda sessions: workmodel_state.new_writes(conn, sessions))
        if kept is not None else None,
        links_memo=workmodel_state.load_links(conn, memo_code()) if kept is not None else None))
    return result, versions, known, tuple(seeds), len(keys), mode, tuple(prior), memo


def memo_code() -> str:
    """The code the memo was derived with (looma's source files): other code recomputes."""
    from looma_git.store import fold_cache

    return fold_cache.fingerprint().decode()


def _id_map(result: RefineResult, created: list[Op]) -> dict[str, str]:
    """Local cluster id -> ledger WorkItem id (seed, or derived from its create op)."""
    id_map = {w.id: w.seed_id for w in result.workitems if w.seed_id and eligible(w)}
    for op in created:
        local = op.payload.get("local_id")
        new_id = op.created_id()
        if local and new_id:
            id_map[local] = new_id
    return id_map


def refine_and_publish(paths: RepoPaths, *, by: str = "backfill",
                       commits_revs: tuple[str, ...] = ("--all",),
                       no_walk: bool = False, settings: Settings | None = None,
                       offline: bool = False, incremental: bool = False) -> RefineReport:
    """Run a pass and publish promotions, links and memories as system ops.

    `incremental` re-reads only new or grown sessions (the result is the full pass's; see
    `run_pass`); `looma reprocess` is the full rebuild. `settings.llm` (read by the edge)
    adds the LLM extractor; None keeps the heuristic one. `offline` uses only cached LLM
    answers (the hook path must never wait on a model).

    A full pass that created WorkItems settles: one incremental pass follows, resolving
    against them as seeds (what every later pass does), so the work model it stores is the
    ledger's and the next new session re-derives only what it changes, not every WorkItem
    the full pass published (that cost grew with the history: issue 14).
    """
    from looma_git.store.locking import pass_lock

    with pass_lock(paths.state_dir):
        return _publish_and_settle(paths, by, commits_revs, no_walk, settings, offline,
                                   incremental)


def _publish_and_settle(paths: RepoPaths, by: str, commits_revs: tuple[str, ...],
                        no_walk: bool, settings: Settings | None, offline: bool,
                        incremental: bool) -> RefineReport:
    report = _publish_pass(paths, by, commits_revs, no_walk, settings, offline, incremental)
    if report.mode != "full" or not report.ops.get("workitem.create"):
        return report
    settled = _publish_pass(paths, by, commits_revs, no_walk, settings, offline, True)
    ops = dict(report.ops)
    for k, n in settled.ops.items():
        ops[k] = ops.get(k, 0) + n
    return replace(settled, mode=report.mode, resegmented=report.resegmented,
                   rescored=report.rescored + settled.rescored, llm=report.llm, ops=ops,
                   ops_written=report.ops_written + settled.ops_written)


def _publish_pass(paths: RepoPaths, by: str, commits_revs: tuple[str, ...], no_walk: bool,
                  settings: Settings | None, offline: bool, incremental: bool
                  ) -> RefineReport:
    """One pass and what it publishes (`refine_and_publish`)."""
    from looma_git.api import ledger
    from looma_git.index import storedb, workmodel, workmodel_state
    from looma_git.ledger.ops import OpDraft
    from looma_git.pipeline.extractor import build_extractor, extractor_stats
    from looma_git.redact import redact_text as _redact_text
    from looma_git.store import gcpause

    # One pass redacts each text once: the planners see every memory and observation of the
    # history each pass, and most of their texts recur (redaction is a pure function).
    redact_text = functools.lru_cache(maxsize=None)(_redact_text)

    with workmodel_state.opened(paths) as conn, gcpause.paused(
            incremental and workmodel.get_meta(conn, "pass") is not None):
        # An incremental pass loads the last pass's memo, resolver state and the ledger fold
        # (what grows with the history) and keeps them to its end: with the cyclic collector
        # on, each quarter of growth walked all of them again (store/gcpause.py).
        state = ledger.load_state(paths)
        # One effort seen by two clones becomes one WorkItem before the pass resolves
        # against them (pipeline/converge.py; nothing on a clone whose WorkItems are all its own).
        joins = plan_merges(state)
        if joins:
            ledger.append(paths, [OpDraft(**d) for d in joins], actor="system")
            state = ledger.load_state(paths)
        extractor = build_extractor(settings.llm if settings else None, conn, offline=offline)
        run_seen = _ingest_run_idle(paths, conn)  # before the pass reads the sessions
        result, versions, known, seeds, read, mode, prior, memo = run_pass(
            paths, state, conn, commits_revs, no_walk, extractor, incremental)
        counts = result.totals or (len({w.session_key for w in result.windows}),
                                   len(result.windows))
        report = RefineReport(sessions=counts[0], windows=counts[1],
                              workitems=len(result.workitems),
                              llm=extractor_stats(extractor), mode=mode, resegmented=read,
                              rescored=result.rescored)
        if joins:
            report.ops_written, report.ops["workitem.merge"] = len(joins), len(joins)

        def write(drafts: list[dict[str, Any]]) -> list[Op]:
            if not drafts:
                return []
            ops = ledger.append(paths, [OpDraft(**d) for d in drafts], actor="system")
            report.ops_written += len(ops)
            for d in drafts:
                report.ops[d["op"]] = report.ops.get(d["op"], 0) + 1
            return list(ops)

        # The ledger as the last pass left it: what that pass derived and published is in
        # it, so a WorkItem whose view the memo gave again plans nothing; only the ones derived
        # anew are planned (else every WorkItem and memory of the history, each pass).
        planned = (_recomputed(result) if mode == "incremental" and result.memo is not None
                   and workmodel.get_meta(conn, LEDGER_AFTER) == _ledger_head(paths)
                   else result)
        created = write(plan_workitems(planned, state.workitems, redact_text,
                                       observed_by_survivor(state)))
        id_map = _id_map(result, [op for op in created if op.op == "workitem.create"])
        # The rows need only the published ids: a big pass stores them beside the appends.
        saved = refine_save.start_saving(paths, conn, result, id_map, memo, versions,
                                         frozenset(known), prior, seeds, redact_text,
                                         memo_code())
        state = ledger.load_state(paths) if created else state
        live = set(state.links)
        titles = {wid: it.title for wid, it in state.workitems.items()}
        new_links = [ln for ln in result.links if ln.workitem in id_map
                     and (ln.sha, id_map[ln.workitem]) not in live]
        worktree = require_worktree(paths)
        pids = gitfacts.patch_ids(worktree, sorted({ln.sha for ln in new_links}))
        subjects = commit_subjects(gitfacts.list_commits(
            worktree, revs=tuple(sorted({ln.sha for ln in new_links})), no_walk=True)
        ) if new_links else {}
        write(plan_links(result.links, id_map, live, titles, pids, by, subjects))
        promoted = write(plan_memories(planned.memories, id_map, state.memories, redact_text))
        if promoted:
            state = ledger.load_state(paths)
            # Supersessions need both memories in the ledger: a second, usually empty, plan.
            write([d for d in plan_memories(planned.memories, id_map,
                                            state.memories, redact_text)
                   if d["op"] == "memory.update"])
        # After every append: the ledger is the pass's. A child's rows are committed first
        # (the transaction below holds the write lock it would wait for); inline rows go in
        # one transaction with the meta.
        saved.wait()
        with storedb.transaction(conn):
            saved.store()
            refine_save.save_meta(conn, mode, run_seen, _ledger_head(paths), result.own_authors)
        report.promoted = len(id_map)
        report.candidates = sum(1 for w in result.workitems if w.id not in id_map
                                and not w.quarantined)
        report.memories = len(result.memories)
        report.links = len(result.links)
        return report


def _ledger_head(paths: RepoPaths) -> str | None:
    from looma_git.store.heads import ledger_head

    return ledger_head(paths)


def _recomputed(result: RefineResult) -> RefineResult:
    """`result` with only the WorkItems (and their memories) derived anew in this pass."""
    fresh = result.recomputed
    mems = result.memories
    return replace(result, workitems=tuple(w for w in result.workitems if w.id in fresh),
                   memories=mems.of(fresh) if isinstance(mems, MemoryList)
                   else tuple(m for m in mems if m.workitem in fresh))


def _ingest_run_idle(paths: RepoPaths, conn: Connection) -> str | None:
    """store.db's `ingest_run`, or None while an ingest runs (its events are still arriving:
    a pass that reads now must not claim to have seen that run)."""
    from looma_git.errors import LockError
    from looma_git.index.workmodel_state import ingest_run
    from looma_git.ingest.engine import writer_lock

    try:
        with writer_lock(paths, 0.0):
            return ingest_run(conn)
    except LockError:
        return None
