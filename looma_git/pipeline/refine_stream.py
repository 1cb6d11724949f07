"""A full pass's resolution while its sessions are still being segmented (a cold ingest,
`looma reprocess`): each window is placed once no window before it can still arrive, so the
resolver works on the pass's own core while the segmentation workers keep the other busy."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from looma_git.pipeline.authorship import Authors, Spans, authored
from looma_git.pipeline.clusters import window_order
from looma_git.pipeline.segment import SessionWindows
from looma_git.pipeline.segment_pool import Stream
from looma_git.pipeline.signals import WorkSignal
from looma_git.pipeline.topology import trunk_line
from looma_git.pipeline.views import RefineInput


@dataclass
class Streamed:
    """What the stream gave: every part in the pass's order, and each window as authorship
    made it (key -> window), all of them placed (`place` was called in window order)."""

    parts: list[SessionWindows]
    authored: dict[str, WorkSignal]


def resolve_streaming(inp: RefineInput, stream: Stream, place: Callable[[WorkSignal], None],
                      done: Callable[[], None]) -> Streamed | list[SessionWindows]:
    """Place every window of `stream` with `place`, in `window_order`, as the sessions arrive;
    `done()` once the last has. The result is the batch pass's: a window is placed only when
    every window before it has been (no session still to come starts before it, and every
    window that arrived is authored: pipeline/authorship.py needs, for a commit, the windows
    of every session that wrote one of its lines). A session whose windows start before the
    bound it was ordered by (timestamps of mixed forms) stops the placing: then the parts are
    returned, in the pass's order, for the caller to resolve them all at once."""
    auth = Authors(inp.commits, inp.content) if inp.content is not None else None
    trunk = trunk_line(list(inp.commits)) if auth is not None else frozenset()
    spans = Spans([])
    waiting: dict[str, set[str]] = {}  # commit -> sessions it needs that have not arrived
    needs: dict[str, list[str]] = {}  # session -> commits that need it
    touching: dict[str, set[str]] = {}  # commit -> every session it needs
    open_commits: dict[str, int] = {}  # session -> its commits not yet authored
    by_sha = {c.sha: c for c in auth.commits} if auth is not None else {}
    if auth is not None:
        # Only the pass's own sessions are waited for: one that wrote a commit's lines but is
        # not in the pass never arrives (the batch pass has no window of it either), and
        # waiting for it held every window the commit touches, and those after them, to the end.
        mine = set(stream.keys)
        for c in auth.commits:
            sessions = auth.sessions(c) & mine
            waiting[c.sha], touching[c.sha] = set(sessions), sessions
            for s in sessions:
                needs.setdefault(s, []).append(c.sha)
                open_commits[s] = open_commits.get(s, 0) + 1
    wrote: dict[str, set[str]] = {}
    arrived: dict[str, list[WorkSignal]] = {}  # sessions not yet authored
    blocked: list[tuple[tuple[float, str], str]] = []  # (first window's order, session)
    ready: list[tuple[tuple[float, str], WorkSignal]] = []
    out: dict[str, WorkSignal] = {}
    parts: list[SessionWindows] = []
    ok = True

    def author(session: str) -> None:
        for w in arrived.pop(session, ()):
            a = authored(w, frozenset(wrote.get(w.key, ())), trunk)
            out[a.key] = a
            heapq.heappush(ready, (window_order(a), a))

    def commit_done(sha: str) -> None:
        assert auth is not None
        for key in auth.writers(by_sha[sha], spans):
            wrote.setdefault(key, set()).add(sha)
        for s in touching[sha]:
            open_commits[s] -= 1
            if not open_commits[s] and s in arrived:
                author(s)

    def place_before(bound: tuple[float, str] | None) -> None:
        while blocked and blocked[0][1] not in arrived:
            heapq.heappop(blocked)  # authored since
        while ready and (bound is None or ready[0][0] < bound) and (
                not blocked or ready[0][0] < blocked[0][0]):
            place(heapq.heappop(ready)[1])

    for part in stream:
        parts.append(part)
        if not ok:
            continue
        bound = stream.bounds[part.key]
        if any(window_order(w)[0] < bound for w in part.windows):
            ok = False  # placed windows may come after one of these: resolve all at once
            continue
        spans.add(list(part.windows))
        if part.windows:
            arrived[part.key] = list(part.windows)
            heapq.heappush(blocked, (min(map(window_order, part.windows)), part.key))
        for sha in needs.get(part.key, ()):
            waiting[sha].discard(part.key)
            if not waiting[sha]:
                commit_done(sha)
        if not open_commits.get(part.key):
            author(part.key)
        # A session still to come starts at `next_bound` or later (its windows' order is
        # (start, key): a tie with it waits).
        place_before((stream.next_bound, ""))
    done()
    index = {k: i for i, k in enumerate(stream.keys)}
    parts.sort(key=lambda p: index[p.key])
    if not ok:
        return parts
    for sha, rest in waiting.items():  # (a session of the pass that gave no part)
        if rest:
            commit_done(sha)
    for s in list(arrived):
        author(s)
    place_before(None)
    return Streamed(parts, out)
