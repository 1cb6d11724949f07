"""Commit linking: which WorkItem a commit implements, from content, files, branch and time."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from looma_git.isotime import parse_ts
from looma_git.pipeline.link_content import (
    CONTENT_MIN,
    CONTENT_SHARE,
    STRANGER_MIN,
    STRANGER_SHARE,
    Content,
    Owners,
    content_scores,
    spread,
    written_from,
)
from looma_git.pipeline.text import is_chore, is_housekeeping, path_terms, tokens
from looma_git.pipeline.topology import merged_branches
from looma_git.store.gitfacts import CommitInfo

# Linking weights and threshold, in one place. File overlap dominates: a commit that touches
# none of an effort's files needs a strong branch + time + wording match to link at all.
W_FILES = 0.55
W_BRANCH = 0.15
W_TIME = 0.15
W_TEXT = 0.15
LINK_AT = 0.50
FOREIGN_TEXT = 0.35  # a commit by an author with no session evidence needs this much wording
TIME_WINDOW_S = 12 * 3600
TRUNK = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})

# A chore (manifest/lock/changelog-only commit, a chore subject) links on content only when
# clearly most of what it adds is the session's: a changelog entry the session wrote, committed
# on its own, is its work; a release's changelog that shares one heading line with it is not.
CHORE_SHARE = 2 / 3
# Without content evidence, a commit off the WorkItem's branch needs to be this close to its
# activity (`_time_score`: 1.0 from an hour before a window to TIME_WINDOW_S after it).
FALLBACK_TIME = 0.5
# ... and never when it was made more than this long before the WorkItem's first window began:
# its sessions cannot have done work committed before they started (on its branch, they can
# carry on what a teammate began there).
BEFORE_WORK_S = 3600
# On its branch, too, a commit whose lines no session wrote, made long after the WorkItem's
# work (its time score under FALLBACK_TIME, after its last window), by an author none of the
# WorkItem's content-linked commits has, is not the sessions' work: a reviewer's edit or a
# maintainer's touch-up pushed onto a contributor's branch before merging. (The WorkItem's
# own authors keep the branch: a developer finishing the work by hand after the sessions.)
# A session whose records do not show what it wrote (some agents store only file names) may
# have written a commit made up to this long after its window: then the commit is judged on
# files, branch, time and wording.
MUTE_AFTER_S = 2 * 86400


@dataclass(frozen=True)
class Target:
    """What the linker knows about one WorkItem."""

    id: str
    title: str
    files: frozenset[str]
    branches: frozenset[str]
    spans: tuple[tuple[float, float], ...]  # activity windows (epoch seconds)
    terms: tuple[tuple[str, int], ...]
    windows: tuple[tuple[str, float, float], ...] = ()  # (session key, start, end) per window


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


def content_authors(commits: list[CommitInfo], links: list[Link]) -> frozenset[str]:
    """Authors of the commits linked on content: a session wrote their work."""
    done = {ln.sha for ln in links if "content" in dict(ln.why)}
    return frozenset(c.author for c in commits if c.sha in done)


def evidence_needed(commit: CommitInfo, own_authors: frozenset[str] | None) -> str | None:
    """Why file overlap alone cannot link this commit ("chore" / "foreign"), or None.

    Chores (bots, bumps, formatting, releases, fixup/merge subjects, commits touching only
    manifests/lock files/changelogs) and commits of authors with no session evidence
    (`own_authors`, None when unknown) link only on the effort's branch, or for a foreign
    commit also on wording that matches the effort (FOREIGN_TEXT)."""
    if is_chore(commit.subject, commit.author, commit.files):
        return "chore"
    if own_authors is not None and commit.author not in own_authors:
        return "foreign"
    return None


def _mute_near(t: Target, ct: float, content: Content | None) -> bool:
    """Whether a session of `t` that records nothing of what it wrote was at work shortly
    before `ct` (its writes could be the commit's, so the commit is judged without content)."""
    return content is not None and any(
        k not in content.capable and s - 3600 <= ct <= e + MUTE_AFTER_S
        for k, s, e in t.windows)


def link_commits(commits: list[CommitInfo], targets: list[Target],
                 forbidden: frozenset[tuple[str, str]] = frozenset(),
                 own_authors: frozenset[str] | None = None,
                 content: Content | None = None,
                 settled: frozenset[str] = frozenset(),
                 only: frozenset[str] | None = None, linked: tuple[Link, ...] = ()
                 ) -> list[Link]:
    """The best WorkItem for each commit; no weak links.

    With `content`, the strongest evidence decides: the WorkItem whose sessions wrote the
    lines the commit adds (`content_scores`). Housekeeping (bots, bumps, formatting,
    releases) is never linked. A commit by an author with no session evidence whose lines
    no session wrote is not linked to a WorkItem whose sessions show what they wrote (unless
    one of its sessions that does not was at work just before: MUTE_AFTER_S). Otherwise the
    commit falls back to the score of files, branch, time and wording, which must clear
    LINK_AT; off the WorkItem's branch it must also be close in time (FALLBACK_TIME), and a
    chore or foreign commit needs the branch; on the branch, a commit far after the work by
    an author none of the WorkItem's content-linked commits has does not link (a reviewer's
    edit). (Without `content`, a foreign commit may also link on wording, FOREIGN_TEXT.)

    Only WorkItems sharing a file or the branch with a commit (or that wrote its lines) are
    scored. A commit in `settled` (linked to a part of a split by files, which decided its
    part) gets no second system link. The link's `why`
    names each part it rests on (content, files, branch, time, text) and, for a chore or
    foreign commit, what else carried it.

    `only` (an appending pass, pipeline/resolve_links.py): judge just these commits, and on
    files, branch, time and wording alone, the content links of the others being `linked`
    (what the authors of their commits tell the rest); returns the links of `only`."""
    prepared = []
    by_file: dict[str, list[int]] = {}
    by_branch: dict[str, list[int]] = {}
    index: dict[str, int] = {}
    for i, t in enumerate(targets):
        terms = dict(t.terms)
        prepared.append(_Prepared(t, terms, _norm(Counter(terms))))
        index[t.id] = i
        for f in t.files:
            by_file.setdefault(f, []).append(i)
        for br in t.branches:
            by_branch.setdefault(br, []).append(i)
    owners = Owners(targets) if content is not None else None
    started = {t.id: min((st for _, st, _ in t.windows), default=0.0) for t in targets}
    capable = ({t.id for t in targets if any(k in content.capable for k, _, _ in t.windows)}
               if content is not None else set())
    links: list[Link] = list(linked)
    rest: list[CommitInfo] = []
    files_of = spread(content) if content is not None else None
    # Content links of strangers' commits that clear the usual bar but not a stranger's: they
    # link if another commit of the same author links on content plainly (then the author is
    # one of ours), else they are judged like any other commit (`rest`).
    pending: list[tuple[CommitInfo, Link]] = []
    # A merged feature branch's commits keep the branch its merge names (the ref that made
    # them is often deleted, and `git log --source` reaches them through the trunk).
    merged = merged_branches(commits)
    for c in commits:
        if len(c.parents) > 1 or not c.files or c.sha in settled:
            continue  # merges and empty commits implement nothing by themselves
        if is_housekeeping(c.subject, c.author, c.files):
            continue  # bots, bumps, formatting, releases and changelogs implement no effort
        if only is not None:
            if c.sha in only:
                rest.append(c)
            continue
        branch = _branch_of(c) or merged.get(c.sha)
        ct = parse_ts(c.ts)
        files = set(c.files)
        judged = bool(content is not None and content.added.get(c.sha))
        if judged and content is not None and owners is not None:
            skip = frozenset(t for (sha, t) in forbidden if sha == c.sha)
            scores, n, latest = content_scores(c.sha, ct, content, owners, skip,
                                               written_from(c), files_of)
            if scores:
                # (then the WorkItem whose work began later, never the id alone: see owner)
                tid, got = max(scores.items(),
                               key=lambda kv: (kv[1], latest.get(kv[0], 0.0),
                                               started.get(kv[0], 0.0), kv[0]))
                share = got / n if n else 0.0
                # a chore (a changelog-only commit, say) is the session's only when most of
                # what it adds is: a shared heading line is not its entry
                bar = CHORE_SHARE if is_chore(c.subject, c.author, c.files) else CONTENT_SHARE
                if got >= CONTENT_MIN and share >= bar and tid in index:
                    link = _on_content(c, prepared[index[tid]].target, branch,
                                       {"content": round(share, 4), "lines": round(got, 2)},
                                       round(min(1.0, 0.6 + 0.4 * share), 4))
                    if (own_authors is not None and c.author not in own_authors
                            and not (got >= STRANGER_MIN and share >= STRANGER_SHARE)):
                        pending.append((c, link))
                    else:
                        links.append(link)
                    continue
        rest.append(c)
    if pending:
        known = {c.author for c in commits if c.sha in {ln.sha for ln in links}}
        order = {c.sha: i for i, c in enumerate(commits)}
        for c, link in pending:
            if c.author in known:
                links.append(link)
            else:
                rest.append(c)
        rest.sort(key=lambda c: order[c.sha])
    # Who committed what each WorkItem's sessions wrote (their authors are its people).
    authors_of: dict[str, set[str]] = {}
    if content is not None:
        author = {c.sha: c.author for c in commits}
        for ln in links:
            authors_of.setdefault(ln.workitem, set()).add(author[ln.sha])
    own = own_authors
    if content is not None:  # a session wrote their commits: their authors are ours
        done = {ln.sha for ln in links}
        authors = {c.author for c in commits if c.sha in done}
        if authors:
            own = frozenset(own or ()) | authors
    for c in rest:
        branch = _branch_of(c) or merged.get(c.sha)
        ct = parse_ts(c.ts)
        files = set(c.files)
        judged = bool(content is not None and content.added.get(c.sha))
        near = {i for f in c.files for i in by_file.get(f, ())}
        if branch:
            near.update(by_branch.get(branch, ()))
        stranger = own is not None and c.author not in own
        if judged and stranger:
            # A stranger's lines that no session showing its writes wrote are not its work.
            near = {i for i in near if prepared[i].target.id not in capable
                    or _mute_near(prepared[i].target, ct, content)}
        if not near:
            continue
        words = _commit_words(c)
        wnorm = _norm(words)
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
            if content is not None and b < 1.0 and why["time"] < FALLBACK_TIME:
                continue  # files alone, away from the work's time, never link
            if content is not None and b < 1.0 and t.spans and ct < min(
                    start for start, _ in t.spans) - BEFORE_WORK_S:
                continue  # made before any of its sessions began: not what they did
            if judged and why["time"] < FALLBACK_TIME and t.spans and ct > max(
                    end for _, end in t.spans) and authors_of.get(t.id) \
                    and c.author not in authors_of[t.id]:
                continue  # someone else's later commit on its branch (see above)
            if best is None or (s, t.id) > (best[0], best[1]):
                best = (s, t.id, why, t)
        if best and best[0] >= LINK_AT:
            t = best[3]
            why = dict(best[2])
            need = evidence_needed(c, own)
            if need is not None:
                # With content evidence at hand, wording (which counts the files' path terms)
                # is file overlap again: only the branch carries a chore or a stranger.
                carried = why["branch"] >= 1.0 or (need == "foreign" and content is None
                                                   and why["text"] >= FOREIGN_TEXT)
                if not carried:
                    continue  # file overlap (and time) alone never link a chore or a stranger
                why[need] = 1.0
            links.append(Link(
                sha=c.sha, workitem=t.id, confidence=round(min(1.0, best[0]), 4),
                files=tuple(sorted(files & t.files)), branch=branch,
                why=tuple(sorted(why.items()))))
    return links[len(linked):] if only is not None else links


def _on_content(c: CommitInfo, t: Target, branch: str | None, evidence: dict[str, float],
                confidence: float) -> Link:
    """The link of commit `c` to `t` on content (`evidence`: its share and lines)."""
    files = set(c.files)
    why = {**evidence, "files": round(len(files & t.files) / len(files), 4),
           "branch": 1.0 if branch and branch in t.branches else 0.0,
           "time": round(_time_score(parse_ts(c.ts), t.spans), 4)}
    return Link(sha=c.sha, workitem=t.id, confidence=confidence,
                files=tuple(sorted(files & t.files)), branch=branch,
                why=tuple(sorted(why.items())))


def refresh_content_link(old: Link, c: CommitInfo, t: Target) -> Link:
    """`old`, a content link of `c` to `t`, as `t` is now (its files, branches, activity):
    which WorkItem wrote the commit's lines, and how much, is unchanged."""
    why = dict(old.why)
    return _on_content(c, t, old.branch, {"content": why["content"], "lines": why["lines"]},
                       old.confidence)
