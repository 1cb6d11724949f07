"""What a refinery pass stores in store.db: the work model it derived (WorkItems, memories,
windows under their published names), the resolver's state, memo and link targets it starts
the next pass from, and the meta naming what it saw. A big pass (a cold ingest, reprocess)
stores the rows in a forked child while the parent appends its links and memories to the
ledger: they need only the published ids, and the single-core tail of the pass shrinks."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from looma_git.api.linking import PASS_INGEST_RUN
from looma_git.gitrepo import RepoPaths
from looma_git.pipeline.promote import plan_workitems
from looma_git.pipeline.refine import RefineResult, StoredWindow

# Windows from which a pass's rows are stored by a child beside the ledger appends (a cold
# pass at 1,500 sessions stores ~1,500 in ~0.5 CPU-s; a hook's pass stores a few, inline).
BESIDE_FROM = 1000

LEDGER_AFTER = "ledger_after"  # refine_meta: the ledger head once the last pass published


@dataclass(frozen=True)
class Saving:
    """The rows of a pass being stored: `wait()` before the caller opens the transaction that
    writes the pass's meta, `store()` inside it."""

    wait: Callable[[], None]
    store: Callable[[], None]


def start_saving(paths: RepoPaths, conn: Any, result: RefineResult, id_map: dict[str, str],
                 memo: dict[str, Any], versions: dict[str, str], known: frozenset[str],
                 prior: tuple[StoredWindow, ...], seeds: tuple[Any, ...], redact: Any,
                 code: str) -> Saving:
    """Store the pass's rows (`save_rows`). A big pass's rows go in a forked child started now,
    committed on its own (`wait()` joins it: before the caller's transaction, which takes the
    write lock the child needs); else `store()` writes them on `conn`, inside the caller's
    transaction."""
    from looma_git.index import storedb
    from looma_git.ingest import parallel

    def save(c: Any) -> None:
        with storedb.transaction(c):
            save_rows(c, result, id_map, memo, versions, known, prior, seeds, redact, code)

    if (len(result.stored) < BESIDE_FROM or not parallel.fork_available()
            or parallel.default_workers() < 2):
        return Saving(lambda: None, lambda: save(conn))

    def in_child() -> None:
        c = storedb.connect(paths)  # (a connection must not cross a fork)
        try:
            save(c)
        finally:
            c.close()

    from looma_git.pipeline import child

    return Saving(child.start(in_child), lambda: None)


def save_rows(conn: Any, result: RefineResult, id_map: dict[str, str], memo: dict[str, Any],
              versions: dict[str, str], known: frozenset[str], prior: tuple[StoredWindow, ...],
              seeds: tuple[Any, ...], redact: Any, code: str) -> None:
    """The work model, resolver state, link targets, seeds and memo of the pass."""
    from looma_git.index import link_targets, refine_memo, workmodel, workmodel_state

    reused = frozenset(k for k, v in (result.memo or {}).items() if memo.get(k) is v)
    workmodel.save_graph(conn, result.workitems, result.memories, result.windows,
                         id_map, window_text, reused, partial=result.partial)
    stored, _ = _published_names(result.stored, id_map)
    workmodel.save_windows(conn, stored, versions, known, prior, partial=result.partial)
    workmodel_state.save_kept(conn, result.state, result.state_changed, id_map)
    workmodel_state.save_links(conn, result.links_memo, code)
    link_targets.save_targets(conn, result.targets, id_map,
                              _creates(result, id_map, redact, reused), keep=reused)
    # Windows stored under their published names: the next pass has those WorkItems
    # as seeds (new ones, so whatever was compared with them is scored again).
    workmodel_state.save_seeds(conn, seeds)
    refine_memo.save_memo(conn, result.memo or {}, memo, code)


def save_meta(conn: Any, mode: str, run_seen: str | None, ledger_head: str | None,
              own_authors: frozenset[str] | None) -> None:
    """What the pass saw: its mode, the ingest run, the ledger head once it published (set
    after every append: a pass that stopped before has none, and the next plans all again)."""
    from looma_git.index import workmodel

    workmodel.set_meta(conn, "pass", mode)
    workmodel.set_meta(conn, PASS_INGEST_RUN, run_seen or "")
    workmodel.set_meta(conn, LEDGER_AFTER, ledger_head or "")
    workmodel.set_meta(conn, "own_authors", json.dumps(
        sorted(own_authors) if own_authors is not None else None))


def _published_names(stored: tuple[StoredWindow, ...], id_map: dict[str, str]
                     ) -> tuple[tuple[StoredWindow, ...], bool]:
    """The windows with each cluster this pass published named by its new ledger id (and
    whether any was renamed). The next pass resolves against those WorkItems as seeds, which
    places their windows under those ids: stored so, its rows are unchanged and not rewritten
    (a pass after one that published WorkItems otherwise rewrote every window it placed)."""
    fresh = {k: v for k, v in id_map.items() if k != v}
    if not fresh:
        return stored, False
    out = []
    for sw in stored:
        related = tuple((fresh.get(c, c), s) for c, s in sw.related)
        cluster = fresh.get(sw.cluster, sw.cluster)
        scored = None if sw.scored is None else tuple(sorted(fresh.get(c, c)
                                                             for c in sw.scored))
        out.append(sw if (cluster, related, scored) == (sw.cluster, sw.related, sw.scored)
                   else replace(sw, cluster=cluster, related=related, scored=scored))
    return tuple(out), True


def _creates(result: RefineResult, id_map: dict[str, str], redact: Any,
             skip: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """For unpublished clusters (but those in `skip`): the create op a commit link would
    publish them with."""
    out = {}
    for w in result.workitems:
        if w.id in id_map or w.quarantined or w.readonly or w.id in skip:
            continue
        drafts = plan_workitems(RefineResult(workitems=(w,), memories=(), links=(), windows=()),
                                {}, redact)
        if drafts:
            out[w.id] = drafts[0]["payload"]
        else:  # not eligible on its own: a commit link is what publishes it
            forced = RefineResult(workitems=(replace(w, commits=("pending",)),), memories=(),
                                  links=(), windows=())
            drafts = plan_workitems(forced, {}, redact)
            if drafts:
                out[w.id] = drafts[0]["payload"]
    return out




def window_text(w: Any) -> str:
    """What a window was about, in a sentence or two."""
    terms = " ".join(t for t, _ in w.terms[:12])
    return f"{w.first_prompt[:400]} {terms}".strip()
