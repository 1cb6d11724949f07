"""The appending pass: new sessions after everything stored, resolved from the kept resolver
state (pipeline/resolve_state.py) without reading or placing any stored window again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from looma_git.pipeline.clusters import window_order
from looma_git.pipeline.heuristics import MemoryCandidate
from looma_git.pipeline.link_content import GENERIC_FILES, WRITE_AFTER_S, Write
from looma_git.pipeline.refine import Segmented, _cands_of, own_authors
from looma_git.pipeline.resolve import Resolver
from looma_git.pipeline.resolve_derive import derive
from looma_git.pipeline.resolve_state import ResolverState
from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.views import RefineInput, RefineResult, StoredWindow
from looma_git.store.gitfacts import CommitInfo

TAIL_MAX = 64  # kept windows placed again at most (more: the pass replays)


def append_pass(inp: RefineInput, seg: Segmented) -> RefineResult | None:
    """The full pass's result when the new windows (`seg`) only append to the kept state,
    else None (the caller replays). The caller checked what needs no window: the kept
    state is this code's, for these commits, every kept session routes to its cluster
    (`routes_unchanged`) and the only changed sessions are new ones."""
    st: ResolverState = inp.state
    new, cands, _, extracted, changed = seg
    if inp.load is None:
        return None
    if inp.content is not None:
        writes = inp.content.writes
    elif inp.new_writes is not None:
        writes = inp.new_writes(changed)
        if writes is None:
            return None  # they wrote before anyone else: other commits have content evidence
    else:
        writes = None
    if writes is not None and not _authorship_unmoved(writes, changed, inp.commits):
        return None  # what the new sessions wrote changes what a stored window wrote
    # Kept windows placed after the first new one (a session started at the same moment):
    # the state is taken back to before them and they are placed again (routed, unscored).
    tail_keys = st.after(min(map(window_order, new))) if new else set()
    if len(tail_keys) > TAIL_MAX:
        return None
    loaded: list[StoredWindow] = []
    if tail_keys:
        tail = inp.load(None, tail_keys)
        around = {sw.cluster for sw in tail}
        loaded = inp.load(around, None)
        by: dict[str, list[WorkSignal]] = {}
        for sw in loaded:
            by.setdefault(sw.cluster, []).append(sw.signal)
        st.rewind([sw.signal for sw in tail], by)
    resolver = Resolver.restore(list(inp.seeds), st)
    nxt = st  # advanced in place: the caller loaded it for this pass
    placed: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = {}
    decided: dict[str, tuple[tuple[str, ...] | None, bool]] = {}
    joined: dict[str, list[WorkSignal]] = {}
    rescored = 0
    again = [sw.signal for sw in loaded if sw.signal.key in tail_keys]
    new = sorted(new + again, key=window_order)
    for w in new:
        founding = resolver.routed_to(w) is None
        n = len(resolver.clusters)
        cid, rel = resolver.add(w)
        placed[w.key] = (cid, tuple(sorted(rel.items())))
        decided[w.key] = (resolver.last_scored, len(resolver.clusters) > n)
        rescored += founding
        joined.setdefault(cid, []).append(w)
        nxt.place(w, cid)
        if rel or resolver.last_scored is not None or len(resolver.clusters) > n:
            nxt.decided.add(w.key)
    clusters = resolver.result()
    memo = inp.memo if inp.memo is not None else {}
    kept = {cid: tuple(agg.keys) for cid, agg in st.clusters.items()}
    keys = {c.id: (c.seed, kept.get(c.id, ()) + tuple(w.key for w in joined.get(c.id, ())),
                   tuple(sorted(c.related.items()))) for c in clusters}
    reuse = {c.id for c in clusters if c.id not in joined and c.id in memo
             and memo[c.id].key == keys[c.id]}
    # The clusters whose results are derived again need their stored windows; so do the
    # windows whose stored RELATED edges or decision a routed placement empties.
    have = {sw.cluster for sw in loaded}
    need = {c.id for c in clusters if c.id not in reuse and c.id in kept}
    if need - have or st.decided:
        got = {sw.signal.key for sw in loaded}
        loaded += [sw for sw in inp.load(need - have, st.decided) if sw.signal.key not in got]
    by_cluster: dict[str, list[StoredWindow]] = {}
    cands_by_window: dict[str, Sequence[MemoryCandidate]] = dict(cands)
    for sw in loaded:
        by_cluster.setdefault(sw.cluster, []).append(sw)
        cands_by_window[sw.signal.key] = sw.cands
    for c in clusters:
        if c.id in need:
            old = sorted((sw.signal for sw in by_cluster.get(c.id, ())
                          if sw.signal.key not in tail_keys), key=window_order)
            c.windows[:0] = old
    own = own_authors(new, inp.commits, inp.local_authors, st.named, st.branches)
    items, memories, links, targets, fresh_memo, recomputed, own, link_memo = derive(
        inp, clusters, keys, reuse, cands_by_window, own, founded=set(joined) - set(kept))
    stored = [StoredWindow(signal=w, cands=_cands_of(cands_by_window.get(w.key, ())),
                           cluster=placed[w.key][0], related=placed[w.key][1],
                           events=len(w.event_ids), scored=decided[w.key][0],
                           founded=decided[w.key][1]) for w in new]
    for sw in loaded:  # routed now: no edges, nothing scored
        if sw.signal.key in st.decided and sw.signal.key not in placed:
            # Its row changes only when it had edges: a decision alone is reset by the store
            # (index/workmodel.save_windows, partial), and rewriting a row serialises the
            # window's candidates (the settle pass re-stored every window of the history).
            if sw.related:
                stored.append(StoredWindow(signal=sw.signal, cands=sw.cands,
                                           cluster=sw.cluster, events=sw.events))
            nxt.decided.discard(sw.signal.key)
    return RefineResult(workitems=tuple(items), memories=memories, links=tuple(links),
                        windows=tuple(new), stored=tuple(stored), targets=tuple(targets),
                        rescored=rescored, extracted=extracted, own_authors=own,
                        memo=fresh_memo, recomputed=frozenset(recomputed), state=nxt,
                        state_changed=frozenset(joined), partial=True,
                        totals=(len(nxt.sessions), nxt.windows), links_memo=link_memo)


def _authorship_unmoved(writes: Mapping[int, Sequence[Write]], changed: set[str],
                        commits: Sequence[CommitInfo]) -> bool:
    """Whether what the `changed` sessions wrote leaves every commit's authors as they were
    (pipeline/authorship.py): a write counts for a commit only up to WRITE_AFTER_S after it,
    and a line written into more than GENERIC_FILES files counts for none. `writes`: every
    write of the lines commits add (at least of those a changed session wrote)."""
    latest = max((parse_ts(c.ts) for c in commits), default=float("-inf")) + WRITE_AFTER_S
    for ws in writes.values():
        new = [w for w in ws if w.session in changed]
        if not new:
            continue
        if any(w.ts and w.ts <= latest for w in new):
            return False
        old = {w.file for w in ws if w.file and w.session not in changed}
        every = old | {w.file for w in new if w.file}
        if (len(old) > GENERIC_FILES) != (len(every) > GENERIC_FILES):
            return False
    return True
