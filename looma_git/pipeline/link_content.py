"""Content evidence for commit links: which sessions wrote the lines a commit adds, how
specific each line is, and whose WorkItem each write belongs to (docs/quality.md, "What a
link rests on")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from looma_git.isotime import parse_ts
from looma_git.store.gitfacts import CommitInfo

if TYPE_CHECKING:
    from looma_git.pipeline.linking import Target

# Content evidence (docs/quality.md "What a link rests on"): a line the commit adds counts for
# a WorkItem when one of its sessions wrote that very line (stripped) into the same file, at
# most WRITE_BEFORE_S before the commit and no later than WRITE_AFTER_S after it (clock skew).
# A line several WorkItems wrote counts 1/n for each (equal counts: the one that wrote last
# before the commit). The best WorkItem links when it wrote
# at least CONTENT_MIN lines' worth and CONTENT_SHARE of the commit's lines.
WRITE_BEFORE_S = 21 * 86400
WRITE_AFTER_S = 600
CONTENT_MIN = 1.0
CONTENT_SHARE = 0.2
GENERIC_FILES = 2
# A line counts by how specific it is to one place: a line the history adds (or sessions write)
# in several files ("from typing import Any", "return None", a shared decorator) is
# boilerplate of the repository, and counts 1/files it appears in (above GENERIC_FILES, not at
# all). A commit by an author none of the sessions' own commits has (a teammate) is judged on
# content only when its specific lines say so plainly: at least STRANGER_MIN lines' worth and
# STRANGER_SHARE of what it adds (a few shared lines are what two people writing in one module
# have in common, not one's work committed by the other).
STRANGER_MIN = 3.0
STRANGER_SHARE = 0.5


@dataclass(frozen=True)
class Write:
    """One session wrote a line (into `file`, or anywhere when None) at `ts`."""

    file: str | None
    session: str
    ts: float


@dataclass(frozen=True)
class Content:
    """Content evidence for a set of commits: the line keys each adds per file (commits not
    in `added` were not looked at), who wrote each key, and the sessions whose records show
    what they wrote at all (a WorkItem with none of those is judged without content)."""

    added: dict[str, tuple[tuple[str, int], ...]]
    writes: dict[int, tuple[Write, ...]]
    capable: frozenset[str]


class Owners:
    """Which WorkItem a session's write at a given time belongs to (by its windows)."""

    def __init__(self, targets: list[Target]) -> None:
        self.by_session: dict[str, list[tuple[float, float, str]]] = {}
        self.files = {t.id: t.files for t in targets}
        for t in targets:
            for key, start, end in t.windows:
                self.by_session.setdefault(key, []).append((start, end, t.id))

    def owner(self, session: str, ts: float, file: str | None = None) -> str | None:
        """The WorkItem of the session's window nearest `ts`; between windows the time does
        not tell apart (an agent that stamps every event of a session alike), the one whose
        work edited `file`."""
        spans = self.by_session.get(session)
        if not spans:
            return None
        if len(spans) == 1:
            return spans[0][2]
        # Last, the window that started later: ids differ from run to run (a WorkItem's id is
        # minted when it is created), times do not, so a tie never depends on the run.
        best = min(spans, key=lambda s: (0.0 if s[0] - 60 <= ts <= s[1] + 60
                                          else min(abs(ts - s[0]), abs(ts - s[1])),
                                          file not in self.files[s[2]], -s[0], s[2]))
        return best[2]


def written_from(c: CommitInfo) -> float:
    """The earliest time a write can be this commit's: WRITE_BEFORE_S before it was authored
    or committed, whichever came first (a rebase moves the commit date on, months after the
    writes, and keeps the author date)."""
    ct = parse_ts(c.ts)
    at = parse_ts(c.authored) or ct
    return min(ct, at) - WRITE_BEFORE_S


def spread(content: Content) -> dict[int, int]:
    """Line key -> the number of files it is found in: added there by a commit of the history
    looked at, or written there by a session (at least 1)."""
    where: dict[int, set[str]] = {}
    for lines in content.added.values():
        for f, k in lines:
            where.setdefault(k, set()).add(f)
    for k, writes in content.writes.items():
        files = {w.file for w in writes if w.file}
        if files:
            where.setdefault(k, set()).update(files)
    return {k: len(v) for k, v in where.items()}


def content_scores(sha: str, ct: float, content: Content, owners: Owners,
                   skip: frozenset[str] = frozenset(), since: float | None = None,
                   files_of: dict[int, int] | None = None
                   ) -> tuple[dict[str, float], int, dict[str, float]]:
    """WorkItem -> how many of the commit's added lines its sessions wrote (a line several
    wrote counts 1/n each; a line found in several files, `files_of`, 1/files each), the
    number of specific lines the commit adds (not those found in too many files), and WorkItem -> when its sessions last wrote one of them
    before the commit (of two WorkItems that wrote as much, the later one's is the version
    committed)."""
    lines = content.added.get(sha, ())
    keys = {k for _, k in lines}
    scores: dict[str, float] = {}
    latest: dict[str, float] = {}
    generic: set[int] = set()
    for f, k in lines:
        writes = content.writes.get(k, ())
        if len({w.file for w in writes if w.file}) > GENERIC_FILES:
            generic.add(k)
            continue  # a line written into many files says nothing about which effort
        found = max(1, files_of.get(k, 1)) if files_of is not None else 1
        if found > GENERIC_FILES:
            generic.add(k)
            continue  # nor does a line the history adds all over the repository
        writers = set()
        for w in writes:
            if w.file is not None and w.file != f:
                continue
            lo = ct - WRITE_BEFORE_S if since is None else since
            if w.ts and not (lo <= w.ts <= ct + WRITE_AFTER_S):
                continue
            tid = owners.owner(w.session, w.ts, f)
            if tid is not None and tid not in skip:
                writers.add(tid)
                latest[tid] = max(latest.get(tid, 0.0), w.ts)
        for tid in writers:
            scores[tid] = scores.get(tid, 0.0) + 1.0 / (len(writers) * found)
    # the share is of what the commit says specifically: boilerplate neither counts for a
    # WorkItem nor dilutes the evidence of the lines that do
    return scores, len(keys - generic), latest
