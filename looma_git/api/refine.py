"""Library surface of the refinery: run a pass over store.db + git + ledger and publish."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.ledger.ops import Op
from looma_git.ledger.state import LedgerState, WorkItemState
from looma_git.pipeline.inputs import load_sessions
from looma_git.pipeline.promote import (
    eligible,
    plan_links,
    plan_memories,
    plan_workitems,
)
from looma_git.pipeline.refine import RefineInput, RefineResult, refine
from looma_git.pipeline.resolve import Seed
from looma_git.pipeline.signals import sha_candidates
from looma_git.store import gitfacts

if TYPE_CHECKING:
    from looma_git.pipeline.extractor import Extractor
    from looma_git.settings import Settings

LOCAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS refine_workitems(id TEXT PRIMARY KEY, ledger_id TEXT, promoted INTEGER,
  json TEXT);
CREATE TABLE IF NOT EXISTS refine_memories(id TEXT PRIMARY KEY, ledger_id TEXT, workitem TEXT,
  promoted INTEGER, json TEXT);
CREATE TABLE IF NOT EXISTS refine_meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS refine_windows(key TEXT PRIMARY KEY, workitem TEXT, text TEXT);
CREATE TABLE IF NOT EXISTS refine_window_events(key TEXT PRIMARY KEY, agent TEXT, session_id TEXT,
  workitem TEXT, event_ids TEXT);
"""


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


def _session_keys(item: WorkItemState) -> frozenset[str]:
    return frozenset(f"{s['agent']}:{s['id']}" for s in item.sessions
                     if s.get("agent") and s.get("id"))


def seeds_from_state(state: LedgerState) -> tuple[list[Seed], dict[str, str],
                                                  frozenset[tuple[str, str]],
                                                  frozenset[tuple[str, str]]]:
    """Ledger WorkItems as resolution seeds, user overrides, forbidden and live links."""
    seeds: list[Seed] = []
    overrides: dict[str, str] = {}
    merge_targets = {it.merged_into for it in state.workitems.values() if it.merged_into}
    for wid, item in sorted(state.workitems.items()):
        if item.merged_into or item.split_into:
            continue  # its sessions now route to the merge target / the split parts
        part = state.constraints.partitions.get(wid) or {}
        by_files = part.get("by") == "files" and item.split_from in state.workitems
        sessions = _session_keys(item)
        if by_files:  # the split WorkItem's sessions route to its parts, divided by file
            sessions |= _session_keys(state.workitems[str(item.split_from)])
        seeds.append(Seed(
            id=wid, title=item.title, files=frozenset(item.files), aliases=item.aliases,
            sessions=sessions, branch=item.branch, quarantined=item.false_positive,
            owns=frozenset(item.files) if by_files else frozenset(),
            group=item.split_from if by_files else None))
        if item.forced == "promote":
            overrides[wid] = "force-promote"
        elif item.forced == "reject":
            overrides[wid] = "reject"
        elif item.false_positive:
            overrides[wid] = "false-positive"
        elif wid in merge_targets:
            overrides[wid] = "merge-target"
    return (seeds, overrides, frozenset(state.constraints.unlinked),
            frozenset(state.links))


def run_pass(paths: RepoPaths, state: LedgerState, conn: sqlite3.Connection,
             commits_revs: tuple[str, ...] = ("--all",), no_walk: bool = False,
             extractor: Extractor | None = None) -> RefineResult:
    """One pure refinery pass over what is stored locally and in git."""
    worktree = require_worktree(paths)
    sessions = load_sessions(conn)
    commits = gitfacts.list_commits(worktree, revs=commits_revs, no_walk=no_walk)
    known = gitfacts.known_paths(worktree)
    sha_lookup = gitfacts.existing_objects(worktree, sha_candidates(sessions))
    seeds, overrides, forbidden, live = seeds_from_state(state)
    return refine(RefineInput(
        sessions=tuple(sessions), commits=tuple(commits), known_paths=known,
        sha_lookup=sha_lookup, seeds=tuple(seeds), forbidden_links=forbidden,
        ledger_links=live, overrides=tuple(sorted(overrides.items())), extractor=extractor))


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
                       offline: bool = False) -> RefineReport:
    """Run a pass and publish promotions, links and memories as system ops.

    `settings.llm` (read by the edge) adds the LLM extractor; None keeps the heuristic one.
    `offline` uses only cached LLM answers (the hook path must never wait on a model).
    """
    from looma_git.api import ledger
    from looma_git.index import storedb
    from looma_git.ledger.ops import OpDraft
    from looma_git.pipeline.extractor import build_extractor, extractor_stats
    from looma_git.redact import redact_text

    conn = storedb.connect(paths)
    try:
        storedb.ensure_schema(conn)
        conn.executescript(LOCAL_SCHEMA)
        state = ledger.load_state(paths)
        extractor = build_extractor(settings.llm if settings else None, conn, offline=offline)
        result = run_pass(paths, state, conn, commits_revs, no_walk, extractor)
        report = RefineReport(sessions=len({w.session_key for w in result.windows}),
                              windows=len(result.windows), workitems=len(result.workitems),
                              llm=extractor_stats(extractor))

        def write(drafts: list[dict[str, Any]]) -> list[Op]:
            if not drafts:
                return []
            ops = ledger.append(paths, [OpDraft(**d) for d in drafts], actor="system")
            report.ops_written += len(ops)
            for d in drafts:
                report.ops[d["op"]] = report.ops.get(d["op"], 0) + 1
            return list(ops)

        created = write(plan_workitems(result, state.workitems, redact_text))
        id_map = _id_map(result, [op for op in created if op.op == "workitem.create"])
        state = ledger.load_state(paths) if created else state
        live = set(state.links)
        titles = {wid: it.title for wid, it in state.workitems.items()}
        new_links = [ln for ln in result.links if ln.workitem in id_map
                     and (ln.sha, id_map[ln.workitem]) not in live]
        pids = gitfacts.patch_ids(require_worktree(paths), sorted({ln.sha for ln in new_links}))
        write(plan_links(result.links, id_map, live, titles, pids, by))
        promoted = write(plan_memories(result.memories, id_map, state.memories, redact_text))
        if promoted:
            state = ledger.load_state(paths)
            # Supersessions need both memories in the ledger: a second, usually empty, plan.
            write([d for d in plan_memories(result.memories, id_map,
                                            state.memories, redact_text)
                   if d["op"] == "memory.update"])
        _save_local(conn, result, id_map)
        report.promoted = len(id_map)
        report.candidates = sum(1 for w in result.workitems if w.id not in id_map
                                and not w.quarantined)
        report.memories = len(result.memories)
        report.links = len(result.links)
        return report
    finally:
        conn.close()


def window_text(w: Any) -> str:
    """What a window was about, in a sentence or two."""
    terms = " ".join(t for t, _ in w.terms[:12])
    return f"{w.first_prompt[:400]} {terms}".strip()


def _save_local(conn: sqlite3.Connection, result: RefineResult, id_map: dict[str, str]) -> None:
    """The local graph (candidates included) for `work --all`, `ask` and health."""
    with conn:
        conn.execute("DELETE FROM refine_workitems")
        conn.execute("DELETE FROM refine_memories")
        conn.execute("DELETE FROM refine_windows")
        # Window summaries (opening request + topic terms) for the vector index: a goal that
        # reads like what someone once asked an agent finds the WorkItem that window joined.
        owner = {key: id_map.get(w.id, w.id) for w in result.workitems for key in w.windows}
        conn.executemany(
            "INSERT OR REPLACE INTO refine_windows(key, workitem, text) VALUES (?,?,?)",
            [(w.key, owner[w.key], window_text(w)) for w in result.windows
             if w.key in owner and (w.first_prompt or w.terms)])
        # Every window's events and owner (None: in no WorkItem), for the quality benchmark's
        # segment-level scoring (tests/bench/quality.py) and for debugging a resolution.
        conn.execute("DELETE FROM refine_window_events")
        conn.executemany(
            "INSERT OR REPLACE INTO refine_window_events(key, agent, session_id, workitem, "
            "event_ids) VALUES (?,?,?,?,?)",
            [(w.key, w.agent, w.session_id, owner.get(w.key), json.dumps(list(w.event_ids)))
             for w in result.windows])
        conn.executemany(
            "INSERT INTO refine_workitems(id, ledger_id, promoted, json) VALUES (?,?,?,?)",
            [(w.id, id_map.get(w.id), int(w.id in id_map),
              json.dumps(asdict(w), sort_keys=True, default=str)) for w in result.workitems])
        conn.executemany(
            "INSERT OR REPLACE INTO refine_memories(id, ledger_id, workitem, promoted, json) "
            "VALUES (?,?,?,?,?)",
            [(m.id, None, id_map.get(m.workitem or "", m.workitem), int(m.workitem in id_map),
              json.dumps(asdict(m), sort_keys=True, default=str)) for m in result.memories])
        # What this model was built from, so `looma status` can say "work model stale".
        conn.execute("INSERT OR REPLACE INTO refine_meta(key, value) SELECT "
                     "'events_ingested_at', COALESCE(MAX(ingested_at), '') FROM events")


LOCAL_TABLES = ("refine_workitems", "refine_memories")


def local_graph(paths: RepoPaths, table: str = "refine_workitems"
                ) -> list[tuple[str, dict[str, Any], bool]]:
    """The last pass's local WorkItems (or memories): (id, data, promoted), ordered by id;
    [] before any pass or on a clone without transcripts."""
    if table not in LOCAL_TABLES or not paths.store_db.exists():
        return []
    from looma_git.index import storedb

    conn = storedb.connect(paths, readonly=True)
    try:
        rows = conn.execute(f"SELECT id, json, promoted FROM {table} ORDER BY id").fetchall()
    except sqlite3.Error:
        return []  # no pass yet: the table does not exist
    finally:
        conn.close()
    return [(r[0], json.loads(r[1]), bool(r[2])) for r in rows]
