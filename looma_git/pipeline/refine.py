"""The refinery pass: signals -> clusters -> links -> confidence -> memories. Pure: no I/O."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from looma_git.pipeline.authorship import with_authorship
from looma_git.pipeline.clusters import Cluster, window_order
from looma_git.pipeline.extractor import Extractor, HeuristicExtractor
from looma_git.pipeline.heuristics import MemoryCandidate
from looma_git.pipeline.replay import Replay
from looma_git.pipeline.resolve import Resolver
from looma_git.pipeline.resolve_derive import derive
from looma_git.pipeline.segment import SessionWindows, dropped_from, segment_session
from looma_git.pipeline.segment_pool import Stream
from looma_git.pipeline.signals import WorkSignal
from looma_git.pipeline.views import (
    ClusterMemo,
    RefineInput,
    RefineResult,
    StoredWindow,
    WorkItemView,
)
from looma_git.store.gitfacts import CommitInfo

# What the caller starts once a pass has segmented its sessions (`after_segmenting`).
_AFTER_SEGMENTING: ContextVar[Callable[[], None] | None] = ContextVar("after_segmenting",
                                                                      default=None)


@contextlib.contextmanager
def after_segmenting(start: Callable[[], None]) -> Iterator[None]:
    """Within it, the first pass to have segmented its sessions calls `start()` (once): a cold
    ingest starts its message indexing there, when the rest of the pass (resolution, derivation,
    publishing) runs on one core and segmentation no longer keeps both busy (api/update.py)."""
    fired = False

    def once() -> None:
        nonlocal fired
        if not fired:
            fired = True
            start()

    token = _AFTER_SEGMENTING.set(once)
    try:
        yield
    finally:
        _AFTER_SEGMENTING.reset(token)


def _segmentation_done() -> None:
    hook = _AFTER_SEGMENTING.get()
    if hook is not None:
        hook()


def _windows(inp: RefineInput, extractor: Extractor
             ) -> tuple[list[WorkSignal], dict[str, Sequence[MemoryCandidate]], float, int]:
    """Every window of the pass, its candidates, the replay point and how many were extracted.

    Sessions are segmented one at a time (events are dropped after each), here or, when the
    caller passes `segmented`, by workers (pipeline/segment_pool.py); a window whose signals
    equal a stored one reuses its candidates (extraction is the costly part)."""
    return _with_prior(inp, _segmented(inp, extractor))


Segmented = tuple[list[WorkSignal], dict[str, Sequence[MemoryCandidate]], float, int, set[str]]


def _segmented(inp: RefineInput, extractor: Extractor) -> Segmented:
    """The windows of the sessions this pass reads (`inp.segmented`, else `inp.sessions`
    segmented here), as `_windows`, and those sessions' keys."""
    prior = {sw.signal.key: sw for sw in inp.prior}
    by_session: dict[str, list[StoredWindow]] = {}
    for sw in inp.prior:
        by_session.setdefault(sw.signal.session_key, []).append(sw)
    windows: list[WorkSignal] = []
    cands: dict[str, Sequence[MemoryCandidate]] = {}
    changed: set[str] = set()
    first_change = float("inf")
    extracted = 0
    parts: Iterable[SessionWindows] = inp.segmented if inp.segmented is not None else (
        segment_session(s, inp.known_paths, inp.sha_lookup, prior, extractor)
        for s in inp.sessions)
    if isinstance(parts, Stream):  # earliest first: the pass's order is its keys'
        index = {k: i for i, k in enumerate(parts.keys)}
        parts = sorted(parts, key=lambda p: index[p.key])
    for part in parts:
        changed.add(part.key)
        windows.extend(part.windows)
        cands.update((k, list(c)) for k, c in part.cands)
        extracted += part.extracted
        first_change = min(first_change, part.first_change, dropped_from(
            by_session.get(part.key, ()), {w.key for w in part.windows}))
    return windows, cands, first_change, extracted, changed


def _with_prior(inp: RefineInput, seg: Segmented
                ) -> tuple[list[WorkSignal], dict[str, Sequence[MemoryCandidate]], float, int]:
    """The segmented windows plus the stored windows of every session not read again."""
    windows, cands, first_change, extracted, changed = seg
    for sw in inp.prior:
        if sw.signal.session_key not in changed:
            windows.append(sw.signal)
            cands[sw.signal.key] = sw.cands  # (read only for a cluster whose memo is stale)
    return windows, cands, first_change, extracted


class _Placer:
    """Windows placed one at a time in `window_order`: replaying a stored decision where the
    replay allows it (pipeline/replay.py), else resolving it."""

    def __init__(self, inp: RefineInput, first_change: float) -> None:
        self.prior = {sw.signal.key: sw for sw in inp.prior}
        self.resolver = Resolver(list(inp.seeds))
        self.replay = Replay(inp.seeds if inp.prior_seeds is None else inp.prior_seeds,
                             inp.seeds, first_change, enabled=inp.replay)
        self.placed: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = {}
        self.decided: dict[str, tuple[tuple[str, ...] | None, bool]] = {}  # (scored, founded)
        self.same: set[str] = set()  # windows equal to their stored selves
        self.rescored = 0

    def place(self, w: WorkSignal) -> None:
        resolver, replay = self.resolver, self.replay
        old = self.prior.get(w.key)
        if old is not None and old.signal == w:
            self.same.add(w.key)
        founding = resolver.routed_to(w) is None
        if founding and replay.may_replay(w, old, resolver):
            assert old is not None
            founded = old.cluster not in resolver.by_id
            resolver.assign(w, old.cluster, dict(old.related))
            cid, related, scored = old.cluster, old.related, old.scored
        else:
            n = len(resolver.clusters)
            cid, rel = resolver.add(w)
            founded = len(resolver.clusters) > n
            related, scored = tuple(sorted(rel.items())), resolver.last_scored
            self.rescored += founding
        self.placed[w.key] = (cid, related)
        self.decided[w.key] = (scored, founded)
        replay.placed(w, old, cid, resolver)


def _streamed(inp: RefineInput, extractor: Extractor
              ) -> tuple[_Placer, list[WorkSignal], Segmented] | RefineInput:
    """A full pass over sessions segmented by workers: resolved as they arrive
    (pipeline/refine_stream.py); or `inp` with the parts it got, to resolve all at once."""
    from looma_git.pipeline.refine_stream import Streamed, resolve_streaming

    assert isinstance(inp.segmented, Stream)
    placer = _Placer(inp, float("inf"))  # (no replay: its point does not matter)
    got = resolve_streaming(inp, inp.segmented, placer.place, _segmentation_done)
    if not isinstance(got, Streamed):
        return replace(inp, segmented=got)
    seg = _segmented(replace(inp, segmented=got.parts), extractor)
    return placer, [got.authored[w.key] for w in seg[0]], seg


def _placed(inp: RefineInput, extractor: Extractor
            ) -> tuple[_Placer, list[WorkSignal], dict[str, Sequence[MemoryCandidate]], int,
                       RefineInput] | RefineResult:
    """Every window of the pass placed (and its candidates, how many were extracted and the
    input as the pass ended up using it); or the appending pass's result."""
    if (isinstance(inp.segmented, Stream) and inp.state is None and not inp.prior
            and not inp.replay and inp.dirty_from == float("inf")):
        got = _streamed(inp, extractor)
        if not isinstance(got, RefineInput):
            placer, windows, (_, cands, _, extracted, _) = got
            return placer, windows, cands, extracted, inp
        inp = got  # (a session started before its bound: all of them at once)
    if inp.state is not None and inp.load is not None:
        from looma_git.pipeline.resolve_append import append_pass

        seg = _segmented(inp, extractor)
        _segmentation_done()
        fast = append_pass(inp, seg)
        if fast is not None:
            return fast
        inp = replace(inp, prior=tuple(inp.load(None, None)), state=None,
                      content=inp.content if inp.content is not None or inp.content_of is None
                      else inp.content_of(None))
        windows, cands, first_change, extracted = _with_prior(inp, seg)
    else:
        windows, cands, first_change, extracted = _windows(inp, extractor)
        _segmentation_done()
    first_change = min(first_change, inp.dirty_from)
    prior = {sw.signal.key: sw for sw in inp.prior}
    # Which commits each window wrote, and where they landed: a new commit (or a moved
    # branch) changes an old window's evidence, and resolution is replayed only up to it.
    windows = with_authorship(windows, inp.commits, inp.content)
    for w in windows:
        old = prior.get(w.key)
        if old is not None and (old.signal.wrote, old.signal.landed) != (w.wrote, w.landed):
            first_change = min(first_change, window_order(w)[0])
    placer = _Placer(inp, first_change)
    for w in sorted(windows, key=window_order):
        placer.place(w)
    return placer, windows, cands, extracted, inp


def refine(inp: RefineInput) -> RefineResult:
    """One deterministic pass over all sessions, commits and ledger seeds."""
    extractor = inp.extractor if inp.extractor is not None else HeuristicExtractor()
    got = _placed(inp, extractor)
    if isinstance(got, RefineResult):
        return got
    placer, windows, cands_by_window, extracted, inp = got
    resolver, placed, decided, same = placer.resolver, placer.placed, placer.decided, placer.same
    rescored = placer.rescored
    clusters = resolver.result()
    keys = {c.id: _memo_key(c) for c in clusters}
    memo: Mapping[str, ClusterMemo] = inp.memo if inp.memo is not None else {}
    # A cluster's derived results are reused when its inputs are the last pass's: the same
    # seed, windows (each equal to its stored self) and related edges, and for the view the
    # same commits linked the same way and the same override.
    reuse = {c.id for c in clusters if c.id in memo and memo[c.id].key == keys[c.id]
             and all(w.key in same for w in c.windows)}
    own = own_authors(windows, inp.commits, inp.local_authors)
    items, memories, links, targets, fresh_memo, recomputed, own, link_memo = derive(
        inp, clusters, keys, reuse, cands_by_window, own)
    stored = tuple(
        StoredWindow(signal=w, cands=_cands_of(cands_by_window.get(w.key, ())),
                     cluster=placed[w.key][0], related=placed[w.key][1],
                     events=len(w.event_ids), scored=decided[w.key][0],
                     founded=decided[w.key][1])
        for w in sorted(windows, key=window_order))
    state = None
    if inp.state_code:
        from looma_git.pipeline.resolve_state import commits_fingerprint, state_of

        state = state_of(clusters, [sw.signal for sw in stored],
                         [sw.signal.key for sw in stored
                          if sw.related or sw.scored is not None or sw.founded],
                         inp.state_code, commits_fingerprint(inp.commits))
    return RefineResult(workitems=tuple(items), memories=memories,
                        links=tuple(links), windows=tuple(windows), stored=stored,
                        targets=tuple(targets), rescored=rescored, extracted=extracted,
                        own_authors=own, memo=fresh_memo, recomputed=frozenset(recomputed),
                        state=state, links_memo=link_memo)


def own_authors(windows: list[WorkSignal], commits: Iterable[CommitInfo],
                local: frozenset[str], named: Iterable[str] = (),
                branches: Iterable[str] = ()) -> frozenset[str] | None:
    """Commit authors with session evidence: of commits a session named, or committed on a
    branch a session worked on, plus this clone's identity; None when no commit can be tied
    to a session at all (then nobody counts as foreign). `named`, `branches`: what windows
    not in `windows` named and worked on."""
    named = {sha for w in windows for sha in w.commits} | set(named)
    branches = ({w.branch for w in windows if w.branch} | set(branches)) - {
        "main", "master", "trunk", "develop", "HEAD"}
    evidence = set()
    for c in commits:
        ref = c.ref.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")
        if c.sha in named or (ref in branches and len(c.parents) <= 1):
            evidence.add(c.author)
    return frozenset(evidence | set(local)) if evidence else None


def _cands_of(found: Sequence[MemoryCandidate]) -> Sequence[MemoryCandidate]:
    """A window's candidates as stored: a list found in this pass as a tuple, a stored
    sequence as it is (unread: a store's candidates are decoded only when used)."""
    return tuple(found) if isinstance(found, list) else found


def _memo_key(c: Cluster) -> tuple[Any, ...]:
    """A cluster's resolution inputs: its seed, its windows (by key: their content is
    checked against the stored windows) and its related edges."""
    return (c.seed, tuple(w.key for w in c.windows), tuple(sorted(c.related.items())))


def term_counter(view: WorkItemView) -> Counter[str]:
    return Counter(dict(view.terms))
