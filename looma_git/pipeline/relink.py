"""Relink matching: which reachable commit replaces a linked commit that history lost."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# A squash commit must carry at least this share of the original's significant added lines
# when its message does not name the original subject (later squashed commits may rewrite
# some of them, so not all).
LINES_AT = 0.6
# Subjects shorter than this ("wip", "fix") name nothing in particular.
MIN_SUBJECT = 8
_BULLET = re.compile(r"^\s*(?:[*\-+]\s+|\d+[.)]\s+)?")
_PR_SUFFIX = re.compile(r"\s*\((?:#|!)\d+\)\s*$")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Orphan:
    """A linked commit no ref reaches any more (or that this clone does not have)."""

    sha: str
    patch_id: str | None
    files: frozenset[str]  # what a replacement must touch (the link's files, else the commit's)
    subject: str | None = None  # None when the commit object is missing
    ts: float | None = None  # committer time of the original
    added: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RewriteCandidate:
    """A reachable commit that could be the rebased, cherry-picked or squashed form."""

    sha: str
    ts: float
    message: str  # subject + body
    files: frozenset[str]
    patch_id: str | None
    added: frozenset[str]


@dataclass(frozen=True)
class Match:
    """old -> new, and which evidence decided it."""

    old: str
    new: str
    how: str  # patch-id | squash-subject | squash-lines
    score: float


@dataclass(frozen=True)
class Miss:
    """An orphan nothing replaces, with the reason shown to the user."""

    sha: str
    reason: str


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def _message_lines(message: str) -> set[str]:
    """Normalised message lines without bullets or a trailing `(#123)`: how GitHub and GitLab
    list squashed subjects."""
    out = set()
    for line in message.splitlines():
        line = _PR_SUFFIX.sub("", _BULLET.sub("", line))
        if line.strip():
            out.add(_norm(line))
    return out


def _subject_hit(subject: str | None, cand: RewriteCandidate, lines: set[str]) -> float:
    if not subject:
        return 0.0
    subj = _norm(_PR_SUFFIX.sub("", subject))
    if len(subj) < MIN_SUBJECT:
        return 0.0
    if subj in lines:
        return 1.0
    # The subject closing a line after a separator ("Merged: <subject>") names it too; a
    # line that goes on after it ("<subject> v2") is another commit, never a substring hit.
    for line in lines:
        if line.endswith(subj) and not line[-len(subj) - 1].isalnum():
            return 0.8
    return 0.0


def match_orphans(orphans: Iterable[Orphan], candidates: Iterable[RewriteCandidate]
                  ) -> tuple[list[Match], list[Miss]]:
    """For each orphan: the reachable commit with the same patch-id (earliest if several),
    else a later squash that touches all its files and names its subject or carries most of
    its added lines. Deterministic; an orphan with no such commit is reported, never guessed."""
    cands = sorted(candidates, key=lambda c: (c.ts, c.sha))
    by_pid: dict[str, list[RewriteCandidate]] = {}
    for c in cands:
        if c.patch_id:
            by_pid.setdefault(c.patch_id, []).append(c)
    lines = {c.sha: _message_lines(c.message) for c in cands}
    matches: list[Match] = []
    misses: list[Miss] = []
    for o in sorted(orphans, key=lambda x: x.sha):
        same = [c for c in by_pid.get(o.patch_id or "", ()) if c.sha != o.sha]
        if same:
            matches.append(Match(o.sha, same[0].sha, "patch-id", 1.0))
            continue
        best = _best_squash(o, cands, lines)
        if best is not None:
            matches.append(best)
        else:
            misses.append(Miss(o.sha, _why_not(o)))
    return matches, misses


def _best_squash(o: Orphan, cands: list[RewriteCandidate],
                 lines: dict[str, set[str]]) -> Match | None:
    if not o.files or (o.subject is None and not o.added):
        return None
    best: tuple[tuple[float, float], Match] | None = None
    for c in cands:
        if c.sha == o.sha or not o.files <= c.files:
            continue
        if o.ts is not None and c.ts < o.ts:
            continue  # a squash is made after the commits it squashes
        subj = _subject_hit(o.subject, c, lines[c.sha])
        share = len(o.added & c.added) / len(o.added) if o.added else 0.0
        if subj == 0.0 and share < LINES_AT:
            continue
        how = "squash-subject" if subj else "squash-lines"
        key = (subj, share)
        # Ties go to the earliest commit (candidates are in time order): the first landing.
        if best is None or key > best[0]:
            best = (key, Match(o.sha, c.sha, how, round(max(subj, share), 4)))
    return best[1] if best else None


def _why_not(o: Orphan) -> str:
    if o.subject is None:
        if not o.patch_id:
            return "commit missing here and its link carries no patch-id"
        return "commit missing here and no reachable commit has its patch-id"
    if not o.files:
        return "no reachable commit has its patch-id (no files to look for a squash)"
    return ("no reachable commit has its patch-id, and no later commit touching its files "
            "names its subject or carries its added lines")
