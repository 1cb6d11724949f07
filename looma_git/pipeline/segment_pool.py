"""Segmenting a pass's sessions in forked worker processes, in order (a cold ingest, reprocess)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from looma_git.pipeline.extractor import Extractor
from looma_git.pipeline.inputs import Session, load_session
from looma_git.pipeline.segment import SessionWindows, segment_session
from looma_git.pipeline.signals import sha_candidates
from looma_git.pipeline.views import StoredWindow

# Below this many sessions forking costs more than it saves (a hook's pass reads a few).
MIN_SESSIONS = 64
BATCH = 50  # sessions a worker loads, validates shas for (one git call) and segments at once


def segment_all(keys: list[str], *, connect: Callable[[], Any],
                lookup: Callable[[list[str]], dict[str, str]], known_paths: frozenset[str],
                prior: Sequence[StoredWindow], extractor: Extractor,
                workers: int | None = None, min_sessions: int | None = None
                ) -> Iterator[SessionWindows] | None:
    """The sessions `keys` ("agent:id", in pass order) segmented by forked workers, yielded in
    order; None when workers would not pay (few sessions, one CPU, no fork, or an extractor
    with state of its own, such as the LLM's cache): the caller segments them itself.

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
    batches = [keys[i:i + BATCH] for i in range(0, len(keys), BATCH)]
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

    return run()
