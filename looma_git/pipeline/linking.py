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
    return None if not ref or ref in TRUNK or ref.startswith("refs/") else ref


def _commit_words(commit: CommitInfo) -> Counter[str]:
    words = Counter(tokens(commit.subject + " " + commit.body))
    for f in commit.files:
        words.update(path_terms(f))
    return words


def _norm(counts: Counter[str]) -> float:
    return math.sqrt(sum(v * v for v in counts.values()))


def _cosine(words: Counter[str], wnorm: float, terms: Counter[str] | dict[str, int],
            tnorm: float) -> float:
    if not wnorm or not tnorm:
        return 0.0
    if len(terms) < len(words):  # iterate the smaller side: same dot product
        dot = sum(v * words.get(k, 0) for k, v in terms.items())
    else:
        dot = sum(v * terms.get(k, 0) for k, v in words.items())
    return dot / (wnorm * tnorm)


def _text_sim(commit: CommitInfo, terms: Counter[str]) -> float:
    words = _commit_words(commit)
    return _cosine(words, _norm(words), terms, _norm(terms))


def _time_score(ct: float, spans: tuple[tuple[float, float], ...]) -> float:
    tm = 0.0
    for start, end in spans:
        if start - 3600 <= ct <= end + TIME_WINDOW_S:
            return 1.0
        gap = min(abs(ct - start), abs(ct - end))
        tm = max(tm, math.exp(-gap / (2 * TIME_WINDOW_S)))
    return tm


def _combine(f: float, b: float, tm: float, tx: float) -> tuple[float, dict[str, float]]:
    total = W_FILES * f + W_BRANCH * b + W_TIME * tm + W_TEXT * tx
    return total, {"files": round(f, 4), "branch": b, "time": round(tm, 4), "text": round(tx, 4)}


def score_commit(commit: CommitInfo, t: Target) -> tuple[float, dict[str, float]]:
    """Link score of one commit against one WorkItem, with its parts."""
    files = set(commit.files)
    f = len(files & t.files) / len(files) if files else 0.0
    branch = _branch_of(commit)
    b = 1.0 if branch and branch in t.branches else 0.0
    tx = _text_sim(commit, Counter(dict(t.terms)))
    return _combine(f, b, _time_score(parse_ts(commit.ts), t.spans), tx)


@dataclass(frozen=True)
class _Prepared:
    target: Target
    terms: dict[str, int]
    norm: float


def link_commits(commits: list[CommitInfo], targets: list[Target],
                 forbidden: frozenset[tuple[str, str]] = frozenset()) -> list[Link]:
    """The best WorkItem for each commit, when it clears LINK_AT; no weak links.

    Only WorkItems sharing a file or the branch with a commit can clear the threshold, so
    targets are indexed by file and branch and each commit is scored against those alone
    (the scores are exactly `score_commit`'s)."""
    prepared = []
    by_file: dict[str, list[int]] = {}
    by_branch: dict[str, list[int]] = {}
    for i, t in enumerate(targets):
        terms = dict(t.terms)
        prepared.append(_Prepared(t, terms, _norm(Counter(terms))))
        for f in t.files:
            by_file.setdefault(f, []).append(i)
        for br in t.branches:
            by_branch.setdefault(br, []).append(i)
    links: list[Link] = []
    for c in commits:
        if len(c.parents) > 1 or not c.files:
            continue  # merges and empty commits implement nothing by themselves
        branch = _branch_of(c)
        near = {i for f in c.files for i in by_file.get(f, ())}
        if branch:
            near.update(by_branch.get(branch, ()))
        if not near:
            continue
        files = set(c.files)
        words = _commit_words(c)
        wnorm = _norm(words)
        ct = parse_ts(c.ts)
        best: tuple[float, str, dict[str, float], Target] | None = None
        for i in sorted(near):
            p = prepared[i]
            t = p.target
            if (c.sha, t.id) in forbidden:
                continue
            share = len(files & t.files) / len(files)
            b = 1.0 if branch and branch in t.branches else 0.0
            s, why = _combine(share, b, _time_score(ct, t.spans),
                              _cosine(words, wnorm, p.terms, p.norm))
            if best is None or (s, t.id) > (best[0], best[1]):
                best = (s, t.id, why, t)
        if best and best[0] >= LINK_AT:
            t = best[3]
            links.append(Link(
                sha=c.sha, workitem=t.id, confidence=round(min(1.0, best[0]), 4),
                files=tuple(sorted(files & t.files)), branch=branch,
                why=tuple(sorted(best[2].items()))))
    return links
