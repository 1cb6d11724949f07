"""Commit linking: which WorkItem a commit implements, from files, branch, time and content."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from looma_git.pipeline.signals import parse_ts
from looma_git.pipeline.text import path_terms, tokens
from looma_git.store.gitfacts import CommitInfo

# Linking weights and threshold, in one place. File overlap dominates: a commit that touches
# none of an effort's files needs a strong branch + time + wording match to link at all.
W_FILES = 0.55
W_BRANCH = 0.15
W_TIME = 0.15
W_TEXT = 0.15
LINK_AT = 0.50
TIME_WINDOW_S = 12 * 3600
TRUNK = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})


@dataclass(frozen=True)
class Target:
    """What the linker knows about one WorkItem."""

    id: str
    title: str
    files: frozenset[str]
    branches: frozenset[str]
    spans: tuple[tuple[float, float], ...]  # activity windows (epoch seconds)
    terms: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Link:
    """A proposed commit -> WorkItem link with its confidence and why."""

    sha: str
    workitem: str
    confidence: float
    files: tuple[str, ...]
    branch: str | None
    why: tuple[tuple[str, float], ...]


def _branch_of(commit: CommitInfo) -> str | None:
    ref = commit.ref.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")
    return None if ref in TRUNK or ref.startswith("refs/") else ref


def _text_sim(commit: CommitInfo, terms: Counter[str]) -> float:
    words = Counter(tokens(commit.subject + " " + commit.body))
    for f in commit.files:
        words.update(path_terms(f))
    if not words or not terms:
        return 0.0
    dot = sum(v * terms.get(k, 0) for k, v in words.items())
    na = math.sqrt(sum(v * v for v in words.values()))
    nb = math.sqrt(sum(v * v for v in terms.values()))
    return dot / (na * nb) if na and nb else 0.0


def score_commit(commit: CommitInfo, t: Target) -> tuple[float, dict[str, float]]:
    """Link score of one commit against one WorkItem, with its parts."""
    files = set(commit.files)
    f = len(files & t.files) / len(files) if files else 0.0
    branch = _branch_of(commit)
    b = 1.0 if branch and branch in t.branches else 0.0
    ct = parse_ts(commit.ts)
    tm = 0.0
    for start, end in t.spans:
        if start - 3600 <= ct <= end + TIME_WINDOW_S:
            tm = 1.0
            break
        gap = min(abs(ct - start), abs(ct - end))
        tm = max(tm, math.exp(-gap / (2 * TIME_WINDOW_S)))
    tx = _text_sim(commit, Counter(dict(t.terms)))
    total = W_FILES * f + W_BRANCH * b + W_TIME * tm + W_TEXT * tx
    return total, {"files": round(f, 4), "branch": b, "time": round(tm, 4), "text": round(tx, 4)}


def link_commits(commits: list[CommitInfo], targets: list[Target],
                 forbidden: frozenset[tuple[str, str]] = frozenset()) -> list[Link]:
    """The best WorkItem for each commit, when it clears LINK_AT; no weak links."""
    links: list[Link] = []
    for c in commits:
        if len(c.parents) > 1 or not c.files:
            continue  # merges and empty commits implement nothing by themselves
        best: tuple[float, str, dict[str, float], Target] | None = None
        for t in targets:
            if (c.sha, t.id) in forbidden:
                continue
            s, why = score_commit(c, t)
            if why["files"] == 0.0 and why["branch"] == 0.0:
                continue
            if best is None or (s, t.id) > (best[0], best[1]):
                best = (s, t.id, why, t)
        if best and best[0] >= LINK_AT:
            t = best[3]
            links.append(Link(
                sha=c.sha, workitem=t.id, confidence=round(min(1.0, best[0]), 4),
                files=tuple(sorted(set(c.files) & t.files)), branch=_branch_of(c),
                why=tuple(sorted(best[2].items()))))
    return links
