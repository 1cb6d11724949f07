"""Resolution: work signals assigned to WorkItem clusters, ledger constraints first, then score."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.text import MANIFESTS, path_terms, title_from_prompt, tokens

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
W_READS = 0.10  # what an editing window read, against what the cluster edited
HIGH = 0.40  # assign to the best cluster at this score
READONLY_HIGH = 0.25  # the same for a window that only read
MARGIN = 0.0  # over the runner-up (a near-tie between two clusters still joins the best)
LOW = 0.20  # between LOW and HIGH: a new cluster with a weak RELATED edge
TRUNK_BRANCHES = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})
MAX_ALIASES = 8  # aliases a cluster keeps (the first ones: the effort's own words)
RELATED_TERMS = 8  # a window's most distinctive terms that look up clusters beyond its files
RELATED_POOL = 64  # at most this many such clusters (most recently active first) are scored
MAX_CLUSTER_TERMS = 400  # a cluster's words compared with a window's (its most used ones)
IDF_PRIOR = 10  # documents assumed not to use a word or file before any is seen: early on,
# an effort's own words are not "common" just because that effort is all there is so far
SHARED_FILE = 0.15  # weight of a manifest, lock file, changelog or README next to a source file


@dataclass(frozen=True)
class Seed:
    """A WorkItem already in the ledger: resolution starts from it and obeys its constraints."""

    id: str
    title: str
    files: frozenset[str]
    aliases: tuple[str, ...]
    sessions: frozenset[str]  # "agent:session"
    branch: str | None
    quarantined: bool = False  # false positive: windows routed here are swallowed
    # A part of a user's split by files: the files it owns, and the split WorkItem's id (its
    # group). A window placed in any part of a group is divided among the parts by file.
    owns: frozenset[str] = frozenset()
    group: str | None = None


@dataclass
class Cluster:
    """A WorkItem under construction."""

    id: str
    seed: Seed | None = None
    windows: list[WorkSignal] = field(default_factory=list)
    files: Counter[str] = field(default_factory=Counter)
    read: Counter[str] = field(default_factory=Counter)
    terms: Counter[str] = field(default_factory=Counter)
    aliases: list[str] = field(default_factory=list)
    branches: Counter[str] = field(default_factory=Counter)
    commits: set[str] = field(default_factory=set)
    related: dict[str, float] = field(default_factory=dict)
    last_ts: float = 0.0
    _top: tuple[tuple[str, int], ...] | None = None  # its words for scoring (see `top_terms`)
    orientation: bool = False  # founded by a request to be shown around the code

    def add_terms(self, counts: Counter[str] | dict[str, int]) -> None:
        self.terms.update(counts)
        self._top = None

    def top_terms(self) -> tuple[tuple[str, int], ...]:
        """The cluster's MAX_CLUSTER_TERMS most used words (ties by word), kept until it grows:
        what a window's words are compared with, at a cost that does not grow with it."""
        if self._top is None:
            self._top = tuple(sorted(self.terms.items(), key=lambda kv: (-kv[1], kv[0]))
                              [:MAX_CLUSTER_TERMS])
        return self._top

    def add(self, w: WorkSignal) -> None:
        self.windows.append(w)
        self.files.update(w.edited)
        self.read.update(w.read)
        self.add_terms(dict(w.terms))
        self.commits.update(w.commits)
        if w.branch and w.branch not in TRUNK_BRANCHES:
            self.branches[w.branch] += 1
        alias = title_from_prompt(w.first_prompt) if w.first_prompt else ""
        if (alias and alias != "Untitled work" and alias not in self.aliases
                and len(self.aliases) < MAX_ALIASES):
            self.aliases.append(alias)
        self.last_ts = max(self.last_ts, parse_ts(w.end_ts))

    @property
    def readonly(self) -> bool:
        return not self.files and not self.commits and not (self.seed and self.seed.files)

    @property
    def sessions(self) -> set[str]:
        out = {w.session_key for w in self.windows}
        if self.seed:
            out |= set(self.seed.sessions)
        return out

    def all_files(self) -> set[str]:
        return set(self.files) | (set(self.seed.files) if self.seed else set())


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

    def file(self, f: str) -> float:
        w = math.log(1 + (self.clusters + IDF_PRIOR) / (1 + len(self._file_df.get(f, ()))))
        return w * SHARED_FILE if _shared_file(f) else w

    def touched(self, f: str) -> float:
        """Like `file`, counting clusters that read the file as well as those that edited it."""
        n = len(self._file_df.get(f, set()) | self._read_df.get(f, set()))
        w = math.log(1 + (self.clusters + IDF_PRIOR) / (1 + n))
        return w * SHARED_FILE if _shared_file(f) else w

    def term(self, t: str) -> float:
        return math.log((1 + self.windows + IDF_PRIOR) / (1 + self._term_df.get(t, 0)))


def _coverage(mine: frozenset[str] | set[str], theirs: set[str] | Counter[str],
              idf: Rarity, reads: bool = False) -> float:
    """The idf-weighted share of `mine` that `theirs` holds (0 when `mine` is empty)."""
    weight = idf.touched if reads else idf.file
    ws = {f: weight(f) for f in mine}
    den = sum(ws.values())
    return sum(v for f, v in ws.items() if f in theirs) / den if den > 0 else 0.0


def _tfidf(counts: Iterable[tuple[str, int]], idf: Rarity) -> dict[str, float]:
    return {t: (1.0 + math.log(n)) * idf.term(t) for t, n in counts if n > 0}


def _cos(a: dict[str, float], b: dict[str, float]) -> float:
    dot = sum(v * b.get(t, 0.0) for t, v in a.items())
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def text_similarity(w: WorkSignal, c: Cluster, idf: Rarity) -> float:
    """Tf-idf cosine (sublinear tf) of the window's words with all of the cluster's (for a
    ledger seed: its title, aliases and paths too). Against the whole cluster rather than its
    closest window, so one chatty window cannot chain two efforts together."""
    a = _tfidf(w.terms, idf)
    if not a or not c.terms:
        return 0.0
    return _cos(a, _tfidf(c.top_terms(), idf))


# A request to be shown around the code rather than to work on it: "explain how ...", "walk me
# through ...", "how does X work", "where do we ...", "list every ...", "give me an overview".
_ORIENTATION = re.compile(
    r"^\W*(?:(?:hi|hey|hello|ok(?:ay)?|so|quick question|new (?:on|to) the (?:team|project|"
    r"codebase|repo))\W+)*(?:(?:can|could) you\s+|please\s+)?(?:explain\b|walk me through\b|"
    r"give me (?:an? )?(?:overview|tour)\b|how (?:does|do)\b.{0,80}\bwork\b|where (?:do|does|is|"
    r"are) (?:we|the)\b|list (?:every|all)\b|show me (?:how|where)\b)", re.I | re.S)


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


def _stem_terms(path: str) -> set[str]:
    """A file's name parts without test markers: tests/test_google_sso.py -> {google, sso}."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    return {t for t in path_terms(stem) if t not in ("test", "tests", "spec")}


def _edit_coverage(w: WorkSignal, c: Cluster, edited: set[str], idf: Rarity) -> float:
    """The idf-weighted share of the window's edits the cluster also edited; a file new to it
    whose name parts are those of one of its files (a test of its module) counts half."""
    weights = {f: idf.file(f) for f in w.edited}
    den = sum(weights.values())
    if den <= 0:
        return 0.0
    names: set[str] | None = None
    got = 0.0
    for f, v in weights.items():
        if f in edited:
            got += v
            continue
        mine = _stem_terms(f)
        if not mine:
            continue
        if names is None:
            names = {t for g in edited for t in _stem_terms(g)}
        if mine & names:
            got += SIBLING * v
    return got / den


def score(w: WorkSignal, c: Cluster, idf: Rarity, previous: str | None = None,
          fresh_branch: bool = False) -> tuple[float, dict[str, float]]:
    """The resolution score of window `w` against cluster `c`, with its parts. `previous` is
    the cluster holding the window before `w` in the same session."""
    edited = c.all_files()
    if w.edited:
        files = W_FILES * _edit_coverage(w, c, edited, idf)
        reads = _coverage((w.read | w.mentioned) - w.edited, edited, idf)
    else:  # a read-only window: what it read and named is all it has
        touched = set(edited) | set(c.read)
        files = W_RO_FILES * _coverage(w.read | w.mentioned, touched, idf, reads=True)
        reads = 0.0
    text = text_similarity(w, c, idf)
    mine = w.branch if w.branch and w.branch not in TRUNK_BRANCHES else None
    theirs = set(c.branches) | ({c.seed.branch} if c.seed and c.seed.branch else set())
    link = 1.0 if (mine and mine in theirs) or (w.commits & c.commits) else 0.0
    # Work on one feature branch is not work on another: a window on a branch the cluster
    # never used, when the cluster has its own, counts against.
    other = 1.0 if mine and theirs and mine not in theirs and not link else 0.0
    # A feature branch no cluster has used yet starts work of its own, more often than not.
    fresh = 1.0 if mine and not theirs and not link and fresh_branch else 0.0
    # The same session's previous window across a pause, or (for a subagent's first window)
    # the window of the parent session that delegated it.
    session = 1.0 if previous == c.id and (w.cut == "pause" or (
        w.index == 0 and parent_session(w) is not None)) else 0.0
    total = (files + W_TEXT * text + W_LINK * link + W_SESSION * session
             + W_READS * reads - W_OTHER_BRANCH * other - W_NEW_BRANCH * fresh)
    return total, {"files": files, "text": text, "link": link, "session": session,
                   "reads": reads, "other_branch": other, "new_branch": fresh}


def cluster_id(w: WorkSignal) -> str:
    """A cluster founded by window `w` is named after it (so a replay names it the same)."""
    return "lw_" + hashlib.sha256(w.key.encode()).hexdigest()[:10]


_cluster_id = cluster_id


def window_order(w: WorkSignal) -> tuple[float, str]:
    """The order resolution sees windows in: start time, then key."""
    return (parse_ts(w.start_ts), w.key)


class Resolver:
    """Resolution state that grows one window at a time (DESIGN §4.1: incremental).

    Clusters are indexed by file, branch, commit and term, so a window is scored only against
    the clusters sharing a file, branch or commit with it, plus a bounded pool (RELATED_POOL,
    most recently active first) of clusters sharing one of its top terms: the cost of a window
    does not grow with the number of clusters. A full pass and any incremental replay use the
    same resolver, so they agree.
    """

    def __init__(self, seeds: list[Seed]) -> None:
        self.clusters: list[Cluster] = []
        self.by_id: dict[str, Cluster] = {}
        self.by_session: dict[str, list[Cluster]] = {}
        self._by_file: dict[str, set[str]] = {}  # clusters that edited the file
        self._by_read: dict[str, set[str]] = {}  # clusters that read or named it
        self._by_branch: dict[str, set[str]] = {}
        self._by_commit: dict[str, set[str]] = {}
        self._by_term: dict[str, set[str]] = {}
        self._term_df: Counter[str] = Counter()  # windows using each term
        self._windows = 0
        self._last: dict[str, str] = {}  # session -> cluster of its latest window
        self._groups: dict[str, list[Cluster]] = {}  # split-by-files parts, by split WorkItem
        for s in seeds:
            c = Cluster(id=s.id, seed=s, aliases=list(s.aliases)[:MAX_ALIASES])
            c.files.update({f: 1 for f in s.files})
            # A seed's words: its title, its aliases (the opening requests) and its paths.
            seed_terms: Counter[str] = Counter()
            for text in (s.title, *s.aliases[:MAX_ALIASES]):
                seed_terms.update(tokens(text))
            for f in s.files:
                seed_terms.update(path_terms(f))
            c.add_terms(seed_terms)
            self._register(c)
            if s.branch:
                self._by_branch.setdefault(s.branch, set()).add(c.id)
            for sk in s.sessions:
                self.by_session.setdefault(sk, []).append(c)
            if s.group:
                self._groups.setdefault(s.group, []).append(c)

    def _register(self, c: Cluster) -> None:
        self.clusters.append(c)
        self.by_id[c.id] = c
        self._index(c, set(c.files), set(c.terms), set(), set())

    def _index(self, c: Cluster, files: set[str], terms: set[str], branches: set[str],
               commits: set[str]) -> None:
        for f in files:
            self._by_file.setdefault(f, set()).add(c.id)
        for t in terms:
            self._by_term.setdefault(t, set()).add(c.id)
        for b in branches:
            self._by_branch.setdefault(b, set()).add(c.id)
        for sha in commits:
            self._by_commit.setdefault(sha, set()).add(c.id)

    def _join(self, c: Cluster, w: WorkSignal) -> None:
        c.add(w)
        branches = {w.branch} if w.branch and w.branch not in TRUNK_BRANCHES else set()
        self._index(c, set(w.edited), {t for t, _ in w.terms}, branches, set(w.commits))
        for f in (w.read | w.mentioned) - w.edited:
            self._by_read.setdefault(f, set()).add(c.id)

    def _place(self, w: WorkSignal, best: Cluster) -> None:
        """Add `w` to `best`; when `best` is a part of a split by files, each part of the split
        gets only the window's work on the files it owns (`best` also takes unowned files), and
        none takes the window's commits: commits go by their own files (the linker)."""
        if not best.windows and best.seed is None:
            best.orientation = orientation(w)  # founded by a tour of the code: nothing joins it
        self._windows += 1
        self._term_df.update({t for t, _ in w.terms})
        self._last[w.session_key] = best.id
        group = best.seed.group if best.seed else None
        if not group:
            self._join(best, w)
            return
        from dataclasses import replace

        parts = self._groups[group]
        owned = frozenset().union(*(p.seed.owns for p in parts if p.seed))
        placed = False
        for p in parts:
            own = p.seed.owns if p.seed else frozenset()
            keep = own | (frozenset(x for x in w.edited | w.read | w.mentioned if x not in owned)
                          if p is best else frozenset())
            if not (w.edited & keep) and p is not best:
                continue
            self._join(p, replace(w, edited=w.edited & keep, read=w.read & keep,
                                  mentioned=w.mentioned & keep, commits=frozenset()))
            placed = True
        if not placed:
            self._join(best, w)

    def candidates(self, w: WorkSignal) -> tuple[list[Cluster], list[Cluster]]:
        """(clusters w could join, a bounded pool for a RELATED edge only), by id."""
        near: set[str] = set()
        for f in w.edited | w.read | w.mentioned:
            near |= self._by_file.get(f, set())
            if not w.edited:
                near |= self._by_read.get(f, set())
        prev = self._last.get(w.session_key)
        if prev is None and parent_session(w) is not None:
            prev = self._last.get(str(parent_session(w)))
        if prev is not None:
            near.add(prev)
        if w.branch and w.branch not in TRUNK_BRANCHES:
            near |= self._by_branch.get(w.branch, set())
        for sha in w.commits:
            near |= self._by_commit.get(sha, set())
        pool: set[str] = set()
        idf = self.rarity()
        distinctive = sorted(w.terms, key=lambda tn: (-idf.term(tn[0]) * (1 + math.log(tn[1])),
                                                      tn[0]))
        for t, _ in distinctive[:RELATED_TERMS]:
            pool |= self._by_term.get(t, set())
        pool -= near
        extra = sorted((self.by_id[i] for i in pool), key=lambda c: (-c.last_ts, c.id))
        return [self.by_id[i] for i in sorted(near)], extra[:RELATED_POOL]

    def rarity(self) -> Rarity:
        return Rarity(len(self.clusters), self._by_file, self._windows, self._term_df,
                      self._by_read)

    def assign(self, w: WorkSignal, cid: str, related: dict[str, float] | None = None) -> None:
        """Replay a stored decision: `w` joins (or founds) cluster `cid`, no scoring."""
        c = self.by_id.get(cid)
        if c is None:
            c = Cluster(id=cid)
            self._register(c)
            if related:
                c.related.update(related)
        self._place(w, c)

    def add(self, w: WorkSignal) -> tuple[str, dict[str, float]]:
        """Score `w` and place it; returns (cluster id, RELATED edges it founded with)."""
        idf = self.rarity()
        prev = self._last.get(w.session_key)
        parent = parent_session(w)
        if prev is None and parent is not None:
            prev = self._last.get(parent)
        routed = self.by_session.get(w.session_key)
        if routed:
            best = max(routed, key=lambda c: (score(w, c, idf, prev)[0], c.id)) \
                if len(routed) > 1 else routed[0]
            self._place(w, best)
            return best.id, {}
        near, pool = self.candidates(w)
        fresh = bool(w.branch and w.branch not in TRUNK_BRANCHES
                     and not self._by_branch.get(w.branch))
        shown_around = orientation(w)
        ranked = sorted(((score(w, c, idf, prev, fresh)[0], c.id, c) for c in near + pool
                         if not c.orientation and not (shown_around and not c.readonly)),
                        key=lambda x: (-x[0], x[1]))
        top = ranked[0] if ranked else None
        second = ranked[1][0] if len(ranked) > 1 else 0.0
        if top and top[0] >= (READONLY_HIGH if w.is_readonly else HIGH) and (
                top[0] - second >= MARGIN):
            self._place(w, top[2])
            return top[1], {}
        new = Cluster(id=cluster_id(w))
        if top and top[0] > LOW and not w.is_readonly:
            new.related[top[1]] = round(top[0], 4)
        self._register(new)
        self._place(w, new)
        return new.id, dict(new.related)

    def result(self) -> list[Cluster]:
        return [c for c in self.clusters if c.windows or c.seed]


def resolve(windows: list[WorkSignal], seeds: list[Seed]) -> list[Cluster]:
    """Assign windows (in time order) to clusters. Ledger seeds route their own sessions first;
    a read-only window joins an effort only on a high score and never founds a confident one."""
    r = Resolver(seeds)
    for w in sorted(windows, key=window_order):
        r.add(w)
    return r.result()
