"""Which commits each window wrote (its lines are the commit's) and where those commits landed:
repository facts resolution weighs next to a window's own words (pipeline/evidence.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from looma_git.pipeline.link_content import (
    CONTENT_MIN,
    CONTENT_SHARE,
    GENERIC_FILES,
    WRITE_AFTER_S,
    Content,
    Write,
    written_from,
)
from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.topology import trunk_line
from looma_git.store.gitfacts import CommitInfo

SLACK_S = 60  # a write this close to a window's span is the window's


class Spans:
    """The window of a session a write at a given time belongs to: the nearest one; between
    windows the time does not tell apart (an agent that stamps a session's events alike), the
    one that edited the file."""

    def __init__(self, windows: list[WorkSignal]) -> None:
        self.by_session: dict[str, list[tuple[float, float, str]]] = {}
        self.edited: dict[str, frozenset[str]] = {}
        self.add(windows)

    def add(self, windows: list[WorkSignal]) -> None:
        """More windows (a session's, all of them at once: `window` reads a session's all)."""
        self.edited.update((w.key, w.edited) for w in windows)
        for w in windows:
            if w.start_ts:
                self.by_session.setdefault(w.session_key, []).append(
                    (parse_ts(w.start_ts), parse_ts(w.end_ts), w.key))

    def window(self, session: str, ts: float, file: str) -> str | None:
        spans = self.by_session.get(session)
        if not spans:
            return None
        return min(spans, key=lambda s: (0.0 if s[0] - SLACK_S <= ts <= s[1] + SLACK_S
                                         else min(abs(ts - s[0]), abs(ts - s[1])),
                                         file not in self.edited[s[2]], s[2]))[2]


def written_commits(windows: list[WorkSignal], commits: Iterable[CommitInfo],
                    content: Content) -> dict[str, frozenset[str]]:
    """Window key -> the commits it wrote: a line a commit adds is a window's when that window
    alone wrote it (into that file, since the last commit that added it there); a window with
    at least CONTENT_MIN such lines and CONTENT_SHARE of the commit's wrote it. Several windows
    can write one commit (an effort handed from one agent to another before it was committed),
    each with lines of its own; a line several windows wrote (an edit's unchanged context
    restated, a shared boilerplate line) is evidence for none of them."""
    auth = Authors(commits, content)
    spans = Spans(windows)
    out: dict[str, set[str]] = {}
    for c in auth.commits:
        for key in auth.writers(c, spans):
            out.setdefault(key, set()).add(c.sha)
    return {k: frozenset(v) for k, v in out.items()}


class Authors:
    """What `written_commits` needs of the repository, and each commit's writers (windows)
    given the windows of the sessions whose writes its lines have (`sessions`): a pass that
    resolves windows as their sessions arrive (pipeline/refine_stream.py) knows a window's
    commits once every session that wrote a line of them has arrived."""

    def __init__(self, commits: Iterable[CommitInfo], content: Content) -> None:
        self.content = content
        self.commits = [c for c in commits if content.added.get(c.sha) and len(c.parents) <= 1]
        # When each line was added to each file: a write belongs to the first commit after it
        # that adds the line there (a later commit adding it again, a revert or a restore, is
        # another piece of work that happens to bring the same text back).
        self.adds: dict[tuple[str, int], list[float]] = {}
        for c in self.commits:
            for fk in set(content.added[c.sha]):
                self.adds.setdefault(fk, []).append(parse_ts(c.ts))
        self._found: dict[str, list[tuple[str, list[Write]]]] = {}

    def _evidence(self, c: CommitInfo) -> list[tuple[str, list[Write]]]:
        """Per line `c` adds (file, key): the writes that can make it a window's (into that
        file, timed between `written_from(c)` and the commit, the line's first commit after
        them), for lines not written into many files. Depends on the repository alone."""
        content = self.content
        ct, lo = parse_ts(c.ts), written_from(c)
        out = []
        for f, k in set(content.added[c.sha]):
            writes = content.writes.get(k, ())
            if len({w.file for w in writes if w.file}) > GENERIC_FILES:
                continue  # a line written into many files says nothing about who wrote this
            out.append((f, [w for w in writes if (w.file is None or w.file == f) and w.ts
                            and lo <= w.ts <= ct + WRITE_AFTER_S
                            and self._first_commit((f, k), w.ts) == ct]))
        return out

    def sessions(self, c: CommitInfo) -> set[str]:
        """The sessions whose windows can have written `c` (those `writers` asks `spans`
        about): a commit's writers are known once they have all been segmented."""
        return {w.session for _, ok in self._evidence(c) for w in ok}

    def _first_commit(self, fk: tuple[str, int], ts: float) -> float:
        return min((t for t in self.adds[fk] if t >= ts - WRITE_AFTER_S), default=-1.0)

    def writers(self, c: CommitInfo, spans: Spans) -> list[str]:
        """The windows that wrote `c` (`spans` has the windows of `sessions(c)` at least)."""
        got: dict[str, int] = {}
        for f, ok in self._evidence(c):
            authors = {spans.window(w.session, w.ts, f) for w in ok} - {None}
            if len(authors) == 1:  # a line two windows wrote (an edit's context) is no one's
                key = str(authors.pop())
                got[key] = got.get(key, 0) + 1
        n = len({k for _, k in self.content.added[c.sha]})
        return [key for key, m in got.items() if m >= CONTENT_MIN and m >= CONTENT_SHARE * n]


def landed_of(mine: frozenset[str], trunk: frozenset[str]) -> str:
    """Where the commits a window wrote landed: "trunk" when every one is on the trunk's
    first-parent line, "branch" when none is, "" otherwise (or when it wrote none)."""
    if not mine:
        return ""
    on = len(mine & trunk)
    return "trunk" if on == len(mine) else "branch" if on == 0 else ""


def with_authorship(windows: list[WorkSignal], commits: Iterable[CommitInfo],
                    content: Content | None) -> list[WorkSignal]:
    """The windows with `wrote` and `landed` set from the repository (empty without content
    evidence). `landed` is "trunk" when every commit the window wrote is on the trunk's
    first-parent line, "branch" when none is, "" otherwise."""
    commits = list(commits)
    wrote = written_commits(windows, commits, content) if content is not None else {}
    trunk = trunk_line(commits) if wrote else frozenset()
    return [authored(w, wrote.get(w.key, frozenset()), trunk) for w in windows]


def authored(w: WorkSignal, mine: frozenset[str], trunk: frozenset[str]) -> WorkSignal:
    """`w` with `wrote` set to `mine` and `landed` from it (`w` itself when they are so)."""
    landed = landed_of(mine, trunk)
    return w if (w.wrote, w.landed) == (mine, landed) else replace(w, wrote=mine, landed=landed)
