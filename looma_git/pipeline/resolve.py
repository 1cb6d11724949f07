"""Resolution: work signals assigned to WorkItem clusters, ledger constraints first, then score."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.text import title_from_prompt

# Resolution weights (DESIGN §4: file overlap the largest) and thresholds, in one place.
# Chosen on the teamwork benchmark (fixtures/teamwork) by a grid over HIGH, W_COSINE, the
# temporal half-life and the alias floor, keeping the scenario bars (docs/quality.md).
W_COSINE = 0.35
W_FILES = 0.45
W_SHARED = 0.15
W_TEMPORAL = 0.10
W_ALIAS = 0.10
HIGH = 0.32  # assign to the cluster
READONLY_HIGH = 0.45  # a window that only read joins an effort only on a clearly higher score
LOW = 0.20  # between LOW and HIGH: a new cluster with a weak RELATED edge
TEMPORAL_HALF_LIFE_S = 3 * 86400
TRUNK_BRANCHES = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})
MAX_ALIASES = 8  # aliases a cluster keeps for scoring (the first ones: the effort's own words)
RELATED_TERMS = 5  # a window's top terms that look up clusters for a weak RELATED edge
RELATED_POOL = 64  # at most this many such clusters (most recently active first) are scored
ALIAS_FLOOR = 0.6  # token_set_ratio below this is what unrelated prompts score
USE_IDF = True  # weigh files by rarity among clusters (manifests, app/__init__.py count less)


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
    norm2: float = 0.0  # squared norm of `terms`, kept as terms grow

    def add_terms(self, counts: Counter[str] | dict[str, int]) -> None:
        for t, n in counts.items():
            old = self.terms.get(t, 0)
            self.terms[t] = old + n
            self.norm2 += (old + n) ** 2 - old * old

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


def _overlap(a: set[str] | frozenset[str], b: set[str]) -> float:
    """Overlap coefficient: a session touching a subset of an effort's files still matches."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _cosine(w: WorkSignal, c: Cluster) -> float:
    if not w.terms or c.norm2 <= 0:
        return 0.0
    dot = sum(n * c.terms.get(t, 0) for t, n in w.terms)
    wn = math.sqrt(sum(n * n for _, n in w.terms))
    return dot / (wn * math.sqrt(c.norm2)) if wn else 0.0


class Rarity:
    """How rare a file is among the clusters so far: idf = log(1 + n / (1 + df)). It depends
    only on the clusters built from earlier windows, so a replay computes the same values."""

    def __init__(self, n: int, files: dict[str, set[str]], terms: dict[str, set[str]]) -> None:
        self.n, self._files, self._terms = max(1, n), files, terms

    def file(self, f: str) -> float:
        return math.log(1 + self.n / (1 + len(self._files.get(f, ()))))



def _weighted_overlap(a: set[str] | frozenset[str], b: set[str], idf: Rarity | None) -> float:
    if not a or not b:
        return 0.0
    if idf is None:
        return _overlap(a, b)
    small = a if len(a) <= len(b) else b
    den = sum(idf.file(f) for f in small)
    return sum(idf.file(f) for f in a & b) / den if den else 0.0


def score(w: WorkSignal, c: Cluster, idf: Rarity | None = None
          ) -> tuple[float, dict[str, float]]:
    """The resolution score of a window against a cluster, with its parts. With `idf`, files
    and terms many clusters share (manifests, `app/__init__.py`, "api") count for less."""
    files = c.all_files()
    # Edits are the strongest evidence; files a window only read or named count for less.
    weak = _weighted_overlap((w.read | w.mentioned) - w.edited, files, idf)
    if w.edited:
        f = max(_weighted_overlap(w.edited, files, idf), 0.85 * weak)
    else:
        f = 0.5 * weak
    cos = _cosine(w, c)
    shared = 1.0 if ((w.branch and w.branch not in TRUNK_BRANCHES and
                      (w.branch in c.branches or (c.seed and c.seed.branch == w.branch)))
                     or (w.commits & c.commits)) else 0.0
    t0 = parse_ts(w.start_ts)
    temporal = 0.0
    if t0 and c.last_ts:
        temporal = math.exp(-abs(t0 - c.last_ts) / TEMPORAL_HALF_LIFE_S)
    alias = 0.0
    title = title_from_prompt(w.first_prompt) if w.first_prompt else ""
    names = c.aliases[:MAX_ALIASES] + ([c.seed.title] if c.seed else [])
    if title and names:
        alias = max(fuzz.token_set_ratio(title.lower(), n.lower()) for n in names) / 100.0
        # token_set_ratio of two unrelated prompts is ~0.45: only a close wording counts.
        alias = max(0.0, (alias - ALIAS_FLOOR) / (1.0 - ALIAS_FLOOR))
    total = (W_COSINE * cos + W_FILES * f + W_SHARED * shared
             + W_TEMPORAL * temporal + W_ALIAS * alias)
    return total, {"cosine": cos, "files": f, "shared": shared,
                   "temporal": temporal, "alias": alias}


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
        self._by_file: dict[str, set[str]] = {}
        self._by_branch: dict[str, set[str]] = {}
        self._by_commit: dict[str, set[str]] = {}
        self._by_term: dict[str, set[str]] = {}
        self._groups: dict[str, list[Cluster]] = {}  # split-by-files parts, by split WorkItem
        for s in seeds:
            c = Cluster(id=s.id, seed=s, aliases=list(s.aliases)[:MAX_ALIASES])
            c.files.update({f: 1 for f in s.files})
            seed_terms: Counter[str] = Counter()
            for f in s.files:
                for t in f.replace("/", " ").replace(".", " ").split():
                    seed_terms[t.lower()] += 1
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

    def _place(self, w: WorkSignal, best: Cluster) -> None:
        """Add `w` to `best`; when `best` is a part of a split by files, each part of the split
        gets only the window's work on the files it owns (`best` also takes unowned files), and
        none takes the window's commits: commits go by their own files (the linker)."""
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
        if w.branch and w.branch not in TRUNK_BRANCHES:
            near |= self._by_branch.get(w.branch, set())
        for sha in w.commits:
            near |= self._by_commit.get(sha, set())
        pool: set[str] = set()
        for t, _ in w.terms[:RELATED_TERMS]:
            pool |= self._by_term.get(t, set())
        pool -= near
        extra = sorted((self.by_id[i] for i in pool), key=lambda c: (-c.last_ts, c.id))
        return [self.by_id[i] for i in sorted(near)], extra[:RELATED_POOL]

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
        routed = self.by_session.get(w.session_key)
        if routed:
            best = max(routed, key=lambda c: (score(w, c)[0], c.id)) if len(routed) > 1 \
                else routed[0]
            self._place(w, best)
            return best.id, {}
        near, pool = self.candidates(w)
        idf = Rarity(len(self.clusters), self._by_file, self._by_term) if USE_IDF else None
        ranked = sorted(((score(w, c, idf)[0], c.id, c) for c in near + pool),
                        key=lambda x: (-x[0], x[1]))
        top = ranked[0] if ranked else None
        if top and top[0] >= (READONLY_HIGH if w.is_readonly else HIGH):
            self._place(w, top[2])
            return top[1], {}
        new = Cluster(id=cluster_id(w))
        if top and top[0] > LOW and not w.is_readonly:
            new.related[top[1]] = round(top[0], 4)
        self._register(new)
        self._join(new, w)
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
