"""How much a window's evidence says it belongs to a cluster: the weights, how rare a file or a
word is so far, and the score with its parts."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable

from looma_git.pipeline.clusters import TRUNK_BRANCHES, Cluster
from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.text import MANIFESTS, path_terms

# Resolution: independent kinds of evidence, each weighted by how distinctive it is, summed
# with the weights below (the words' cosine is small next to the files' share, hence its larger
# weight). Chosen on the labelled benchmarks with `python -m tests.bench.calibrate_resolve`
# (docs/quality.md, "How sessions become WorkItems, and how resolution's thresholds are chosen").
W_FILES = 0.45  # idf-weighted share of the window's edits (reads for a read-only window)
W_TEXT = 1.5  # tf-idf cosine of the window's words with the cluster's
W_LINK = 0.30  # the same feature branch, or a commit both name
W_SESSION = 0.30  # the same session's previous window (cut by a pause, not a topic switch), or
# for a subagent the window of the session that delegated it
W_RO_FILES = 0.15  # what a read-only window read, against what the cluster touched
W_OTHER_BRANCH = 1.0  # a window on a feature branch the cluster (on its own) never used
SIBLING = 0.5  # a file new to the cluster named after one of its files (tests/test_x.py)
W_NEW_BRANCH = 0.25  # a window on a feature branch no cluster has used yet
W_TRUNK = 0.25  # work committed straight to the trunk, against a cluster's merged-branch work
W_READS = 0.10  # what an editing window read, against what the cluster edited
IDF_PRIOR = 10  # documents assumed not to use a word or file before any is seen: early on,
# an effort's own words are not "common" just because that effort is all there is so far
SHARED_FILE = 0.15  # weight of a manifest, lock file, changelog or README next to a source file
# Time apart: work taken up again long after a cluster's last activity, with nothing that
# names it (its branch, a commit, a pull request, the same session), is less often the same
# effort than the files and words say: what they say (files, words, reads) is divided by
# 1 + (days apart - GAP_GRACE_DAYS) / GAP_DAYS from GAP_GRACE_DAYS on.
GAP_GRACE_DAYS = 30.0
GAP_DAYS = 60.0
# Breadth: a cluster that edited many more files than clusters do (a sweeping refactor, a
# migration of half the repository) covers any window's files and words; what they say is
# divided by 1 - BROAD_B + BROAD_B * (its files / the files of an ordinary cluster), as a
# search engine normalises a long document (never multiplied: a small cluster gains nothing).
# An ordinary
# cluster has the distinct files edited so far over the clusters (at least BROAD_CLUSTERS of
# them: one sweeping cluster alone is not the norm), at least BROAD_FILES.
BROAD_B = 0.5
BROAD_FILES = 12.0
BROAD_CLUSTERS = 5


_ts = functools.lru_cache(maxsize=1 << 12)(parse_ts)  # a window's start, against each cluster


@functools.lru_cache(maxsize=1 << 14)
def _shared_file(path: str) -> bool:
    """A file every kind of work touches: manifests, lock files, changelogs, READMEs."""
    return bool(MANIFESTS.search(path)) or path.rsplit("/", 1)[-1].lower().startswith("readme")


class Rarity:
    """How distinctive a file or a term is, from the clusters and windows resolved so far:
    a file edited by many clusters (app/__init__.py, a shared module) and a word many windows
    use ("api", "endpoint") count for little. It depends only on what earlier windows built,
    so a replay computes the same values."""

    def __init__(self, clusters: int, file_df: dict[str, set[str]], windows: int,
                 term_df: Counter[str], read_df: dict[str, set[str]] | None = None) -> None:
        self.clusters, self._file_df = max(1, clusters), file_df
        self.windows, self._term_df = max(1, windows), term_df
        self._read_df = read_df if read_df is not None else {}
        # A Rarity lives for one window's scoring (the counts do not move meanwhile), and
        # that window is scored against every nearby cluster: term weights and tf-idf
        # vectors are computed once each (same values, same order, same floats).
        self._terms: dict[str, float] = {}
        self._vectors: dict[tuple[tuple[str, int], ...], tuple[dict[str, float], float]] = {}
        self._weights: dict[tuple[frozenset[str], bool], tuple[dict[str, float], float]] = {}

    def breadth(self, files: int) -> float:
        """What a cluster's file share is multiplied by for having edited `files` files."""
        if files <= BROAD_FILES:
            return 1.0
        avg = max(BROAD_FILES, len(self._file_df) / max(self.clusters, BROAD_CLUSTERS))
        return min(1.0, 1.0 / (1.0 - BROAD_B + BROAD_B * files / avg))

    def file(self, f: str) -> float:
        w = math.log(1 + (self.clusters + IDF_PRIOR) / (1 + len(self._file_df.get(f, ()))))
        return w * SHARED_FILE if _shared_file(f) else w

    def touched(self, f: str) -> float:
        """Like `file`, counting clusters that read the file as well as those that edited it."""
        n = len(self._file_df.get(f, set()) | self._read_df.get(f, set()))
        w = math.log(1 + (self.clusters + IDF_PRIOR) / (1 + n))
        return w * SHARED_FILE if _shared_file(f) else w

    def term(self, t: str) -> float:
        w = self._terms.get(t)
        if w is None:
            w = self._terms[t] = math.log((1 + self.windows + IDF_PRIOR)
                                          / (1 + self._term_df.get(t, 0)))
        return w

    def weights(self, files: frozenset[str] | set[str], reads: bool = False
                ) -> tuple[dict[str, float], float]:
        """Each of `files`' weight (`touched` when `reads`, else `file`), in their order, and
        the weights' sum: once per distinct set while this Rarity lives (a window's files are
        weighed against every cluster it is scored with)."""
        key = (frozenset(files), reads)
        got = self._weights.get(key)
        if got is None:
            weight = self.touched if reads else self.file
            ws = {f: weight(f) for f in files}
            got = self._weights[key] = (ws, sum(ws.values()))
        return got

    def vector(self, counts: tuple[tuple[str, int], ...]) -> tuple[dict[str, float], float]:
        """`_tfidf(counts, self)` and its norm, once per distinct `counts` while this
        Rarity lives."""
        v = self._vectors.get(counts)
        if v is None:
            vec = _tfidf(counts, self)
            v = self._vectors[counts] = (vec, _norm(vec))
        return v


def _coverage(mine: frozenset[str] | set[str], theirs: set[str] | Counter[str],
              idf: Rarity, reads: bool = False) -> float:
    """The idf-weighted share of `mine` that `theirs` holds (0 when `mine` is empty)."""
    ws, den = idf.weights(mine, reads)
    return sum(v for f, v in ws.items() if f in theirs) / den if den > 0 else 0.0


# A cluster's top terms are a new tuple each time it grows; the clusters one window is scored
# against are ~100 at most. 8,192 entries of ~100 pairs held ~70 MB at 5,000 sessions.
@functools.lru_cache(maxsize=1024)
def _sublinear(counts: tuple[tuple[str, int], ...]) -> tuple[tuple[str, float], ...]:
    return tuple((t, 1.0 + math.log(n)) for t, n in counts if n > 0)


def _tfidf(counts: Iterable[tuple[str, int]], idf: Rarity) -> dict[str, float]:
    term = idf.term  # a cluster's top terms keep their tf part between windows (cached)
    return {t: tf * term(t) for t, tf in _sublinear(tuple(counts))}


# Sums taken one addition at a time, in order (not `sum`, which compensates from Python 3.12):
# pipeline/textsim.py computes the same sums with arrays and must get the same floats.
def _norm(v: dict[str, float]) -> float:
    s = 0.0
    for x in v.values():
        s += x * x
    return math.sqrt(s)


def _cos(a: dict[str, float], b: dict[str, float], na: float) -> float:
    dot = 0.0
    for t, v in a.items():
        dot += v * b.get(t, 0.0)
    nb = _norm(b)
    return dot / (na * nb) if na and nb else 0.0


def text_similarity(w: WorkSignal, c: Cluster, idf: Rarity) -> float:
    """Tf-idf cosine (sublinear tf) of the window's words with all of the cluster's (for a
    ledger seed: its title, aliases and paths too). Against the whole cluster rather than its
    closest window, so one chatty window cannot chain two efforts together."""
    a, na = idf.vector(w.terms)
    if not a or not c.terms:
        return 0.0
    return _cos(a, _tfidf(c.top_terms(), idf), na)


# A request to be shown around the code rather than to work on it: "explain how ...", "walk me
# through ...", "how does X work", "where do we ...", "list every ...", "give me an overview".
_ORIENTATION = re.compile(
    r"^\W*(?:(?:hi|hey|hello|ok(?:ay)?|so|quick question|new (?:on|to) the (?:team|project|"
    r"codebase|repo))\W+)*(?:(?:can|could) you\s+|please\s+)?(?:explain\b|walk me through\b|"
    r"give me (?:an? )?(?:overview|tour)\b|how (?:does|do)\b.{0,80}\bwork\b|where (?:do|does|is|"
    r"are) (?:we|the)\b|list (?:every|all)\b|show me (?:how|where)\b)", re.I | re.S)


# The user says the work changes topic ("different thing", "unrelated: ...", "switching gears",
# "moving on", "something else"); not an aside made on the way ("while you're here", "one more
# thing", "by the way", "before I forget"), which is a side job of the same work.
_SWITCHED = re.compile(
    r"^\W*(?:(?:thanks|thank you|ok(?:ay)?|alright|all right|right|great|cool|perfect|good|"
    r"nice|done|so|now|next|anyway)[.!,:;\s-]*)*(?:(?:a\s+|one\s+)?(?:different|unrelated|"
    r"separate|another|new|other)\s+(?:thing|topic|task|issue|question|subject|matter)|"
    r"(?:let'?s\s+)?switch(?:ing)?\s+(?:gears|topics?|tasks?|to\s+something)|changing\s+"
    r"(?:gears|topics?)|on\s+(?:another|a\s+different)\s+note|something\s+(?:else|"
    r"different)|next\s+(?:task|topic|up)|moving\s+on|unrelated|separately)", re.I)


def switched(prompt: str) -> bool:
    """Whether a window's opening request says it starts another topic."""
    return bool(_SWITCHED.search(prompt[:300]))


def parent_session(w: WorkSignal) -> str | None:
    """The session that delegated this one ("agent:id" of a subagent's parent), if any."""
    parent, sep, _ = w.session_id.partition("/agent-")
    return f"{w.agent}:{parent}" if sep and parent else None


def orientation(w: WorkSignal) -> bool:
    """A read-only window whose request is to be shown around the code (not work on it): it
    joins no effort that changed files or has commits, only other read-only work, and what it
    founds nothing joins (two tours of the code are not one investigation)."""
    if parent_session(w):  # a subagent's prompt is its parent's delegation, not a person's
        return False
    return w.is_readonly and bool(_ORIENTATION.search(w.first_prompt[:300]))


# A branch name as people write it in a request ("picking up feat/csv-export", "the
# fix-1-byte branch"): a run of name characters with a separator in it, so that an ordinary
# word never reads as a branch.
_BRANCHISH = re.compile(r"(?<![\w./\-])([A-Za-z0-9][\w.\-]*[/\-_][\w./\-]*[A-Za-z0-9])")


@functools.lru_cache(maxsize=4096)
def named_branches(text: str) -> frozenset[str]:
    """Branch-like names a request names (a window's opening request: `first_prompt`)."""
    return frozenset(_BRANCHISH.findall(text or ""))


@functools.lru_cache(maxsize=1 << 14)
def _stem_terms(path: str) -> frozenset[str]:
    """A file's name parts without test markers: tests/test_google_sso.py -> {google, sso}."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    return frozenset(t for t in path_terms(stem) if t not in ("test", "tests", "spec"))


def _stems_of(files: set[str]) -> frozenset[str]:
    return frozenset(t for g in files for t in _stem_terms(g))


def _edit_coverage(w: WorkSignal, c: Cluster, edited: set[str], idf: Rarity) -> float:
    """The idf-weighted share of the window's edits the cluster also edited; a file new to it
    whose name parts are those of one of its files (a test of its module) counts half."""
    weights, den = idf.weights(w.edited)
    if den <= 0:
        return 0.0
    names: frozenset[str] | None = None
    got = 0.0
    for f, v in weights.items():
        if f in edited:
            got += v
            continue
        mine = _stem_terms(f)
        if not mine:
            continue
        if names is None:
            names = c.names_of_files(edited, _stems_of)
        if mine & names:
            got += SIBLING * v
    return got / den


def score(w: WorkSignal, c: Cluster, idf: Rarity, previous: str | None = None,
          fresh_branch: bool = False, text: float | None = None
          ) -> tuple[float, dict[str, float]]:
    """The resolution score of window `w` against cluster `c`, with its parts. `previous` is
    the cluster holding the window before `w` in the same session; `text`: its
    `text_similarity` when computed already (pipeline/textsim.py, for many clusters at once)."""
    edited = c.all_files()
    if w.edited and c.readonly:  # an investigation, carried on by the fix: its reads count
        files = W_RO_FILES * _coverage(w.edited, c.read, idf, reads=True)
        reads = 0.0
    elif w.edited:
        files = W_FILES * _edit_coverage(w, c, edited, idf)
        reads = _coverage((w.read | w.mentioned) - w.edited, edited, idf)
    else:  # a read-only window: what it read and named is all it has
        touched = set(edited) | set(c.read)
        files = W_RO_FILES * _coverage(w.read | w.mentioned, touched, idf, reads=True)
        reads = 0.0
    if text is None:
        text = text_similarity(w, c, idf)
    mine = w.branch if w.branch and w.branch not in TRUNK_BRANCHES else None
    theirs = set(c.branches) | ({c.seed.branch} if c.seed and c.seed.branch else set())
    # A commit both name, or both wrote (its lines are theirs): one piece of work, whatever
    # agent or session carried it on.
    named = w.commits | w.wrote
    shared = bool(named) and not (named.isdisjoint(c.commits) and named.isdisjoint(c.wrote))
    # A continuation names what it continues: the cluster's feature branch in its request
    # ("picking up feat/csv-export", when the session runs elsewhere), or a pull request the
    # cluster's sessions named. Identifiers of one piece of work, as the branch itself is.
    said = bool(theirs and named_branches(w.first_prompt) & theirs) or bool(w.prs & c.prs)
    link = 1.0 if (mine and mine in theirs) or shared or said else 0.0
    # Work on one feature branch is not work on another: a window on a branch the cluster
    # never used, when the cluster has its own, counts against.
    other = 1.0 if mine and theirs and mine not in theirs and not link else 0.0
    # Work the window committed straight onto the trunk, against a cluster whose work only
    # ever reached it through a merge (the repository's topology says which line each commit
    # is on, whether or not the branch still exists): a follow-up fix after the merge is often
    # the same effort, other trunk work often is not, so this weighs like a new branch.
    trunk = 1.0 if not link and w.landed == "trunk" and set(c.landed) == {"branch"} else 0.0
    # A feature branch no cluster has used yet starts work of its own, more often than not:
    # whether or not the cluster has a branch of its own (then this adds to `other`: a new
    # branch beside another effort's is a second effort, however alike their words and files).
    # (not against an investigation: the fix it leads to opens the branch)
    fresh = 1.0 if mine and not link and fresh_branch and not c.readonly else 0.0
    # The same session's previous window across a pause, or (for a subagent's first window)
    # the window of the parent session that delegated it; or across a topic cut the user did
    # not say (other files, other words) when the window carries on the same branch or commit:
    # a side fix made on the way and shipped in the same pull request.
    session = 1.0 if previous == c.id and (w.cut == "pause" or (
        w.index == 0 and parent_session(w) is not None) or (
        w.cut == "topic" and link and not switched(w.first_prompt))) else 0.0
    apart = 1.0
    if not link and not session and c.last_ts and w.start_ts:
        days = (_ts(w.start_ts) - c.last_ts) / 86400
        apart = 1.0 + max(0.0, days - GAP_GRACE_DAYS) / GAP_DAYS
    # (a broad cluster's words are as broad as its files: they name all its paths)
    broad = idf.breadth(len(edited)) if w.edited else 1.0
    total = ((files + W_TEXT * text + W_READS * reads) * broad / apart + W_LINK * link
             + W_SESSION * session - W_OTHER_BRANCH * other - W_NEW_BRANCH * fresh
             - W_TRUNK * trunk)
    return total, {"files": files, "text": text, "link": link, "session": session,
                   "reads": reads, "other_branch": other, "new_branch": fresh,
                   "trunk_vs_branch": trunk, "time_apart": apart, "breadth": broad}

