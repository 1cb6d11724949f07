"""Segmenting a pass's sessions in forked worker processes, in order (a cold ingest, reprocess)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from looma_git.isotime import parse_ts
from looma_git.pipeline.extractor import Extractor
from looma_git.pipeline.inputs import Session, load_session
from looma_git.pipeline.segment import SessionWindows, segment_session
from looma_git.pipeline.signals import sha_candidates
from looma_git.pipeline.views import StoredWindow

# Below this many sessions forking costs more than it saves (a hook's pass reads a few).
MIN_SESSIONS = 64
BATCH = 50  # sessions a worker loads, validates shas for (one git call) and segments at once
# The first task's sessions: the workers are forked when its result is asked for, and the
# caller asks at once (`segment_all`), so that they segment while it reads content evidence.
FIRST = 2


class Stream:
    """The segmented sessions as the workers give them: earliest first (by `bounds`), so that a
    pass may resolve a window while later sessions are still being segmented, once no session
    still to come can have a window before it (pipeline/refine_stream.py). `keys`: the pass's
    own order, which a caller that waits for them all restores."""

    def __init__(self, keys: list[str], order: list[str], bounds: dict[str, float],
                 parts: Iterator[SessionWindows]) -> None:
        self.keys, self.order, self.bounds = keys, order, bounds
        self._parts = parts
        self._given = 0
        # The earliest a window of a session not given yet can start (inf: none is left).
        self.next_bound = bounds[order[0]] if order else float("inf")

    def __iter__(self) -> Stream:
        return self

    def __next__(self) -> SessionWindows:
        part = next(self._parts)
        self._given += 1
        self.next_bound = (self.bounds[self.order[self._given]]
                           if self._given < len(self.order) else float("inf"))
        return part


def start_bounds(conn: Any, keys: list[str]) -> dict[str, float]:
    """Key -> the earliest start a window of that session can have: the earliest of its events'
    timestamps (0 when one has none; `window_order`'s 0 for a window without any). A session's
    earliest timestamp as text is its earliest time when the agent writes them alike; one that
    does not is caught by the pass, which then waits for every session (refine_stream)."""
    want = set(keys)
    out = {k: 0.0 for k in keys}
    for agent, sid, first in conn.execute(
            "SELECT agent, session_id, MIN(COALESCE(ts, '')) FROM events "
            "GROUP BY agent, session_id"):
        key = f"{agent}:{sid}"
        if key in want:
            out[key] = parse_ts(first or "")
    return out


def segment_all(keys: list[str], *, connect: Callable[[], Any],
                lookup: Callable[[list[str]], dict[str, str]], known_paths: frozenset[str],
                prior: Sequence[StoredWindow], extractor: Extractor,
                workers: int | None = None, min_sessions: int | None = None
                ) -> Stream | None:
    """The sessions `keys` ("agent:id", in pass order) segmented by forked workers, yielded
    earliest first (`Stream`); None when workers would not pay (few sessions, one CPU, no fork,
    or an extractor with state of its own, such as the LLM's cache): the caller segments them
    itself.

    Each worker opens its own store.db connection (`connect`, read-only: a connection must not
    cross a fork) and validates its batch's sha mentions (`lookup`: sha -> full sha of those
    that exist). What a session gives depends on that session alone (pipeline/segment.py), so
    the result is the single-process pass's, window for window."""
    from looma_git.ingest import parallel

    n = parallel.default_workers() if workers is None else workers
    least = MIN_SESSIONS if min_sessions is None else min_sessions
    if (n < 2 or len(keys) < least or not parallel.fork_available()
            or extractor.name != "heuristic"):
        return None
    stored = {sw.signal.key: sw for sw in prior}  # (only here: a small pass never needs it)
    first = connect()
    try:
        bounds = start_bounds(first, keys)
    finally:
        first.close()
    order = sorted(keys, key=lambda k: (bounds[k], k))
    batches = [order[:FIRST]] + [order[i:i + BATCH] for i in range(FIRST, len(order), BATCH)]
    conns: dict[int, Any] = {}  # pid -> this worker's connection (opened on first use)

    def task(i: int) -> list[SessionWindows]:
        conn = conns.get(os.getpid())
        if conn is None:
            conn = conns[os.getpid()] = connect()
        sessions: list[Session] = [load_session(conn, *k.split(":", 1)) for k in batches[i]]
        shas = lookup(sha_candidates(sessions))
        return [segment_session(s, known_paths, shas, stored, extractor) for s in sessions]

    def run() -> Iterator[SessionWindows]:
        for _, part in parallel.ordered_map(task, range(len(batches)), n):
            yield from part

    # The workers start now (a generator forks them when first asked), not when the pass
    # first reads a part: they segment ahead while the pass reads its commits' content
    # evidence (api/refine.run_pass), which the segmentation does not need.
    parts = run()
    first = next(parts)
    return Stream(keys, order, bounds, itertools.chain([first], parts))
