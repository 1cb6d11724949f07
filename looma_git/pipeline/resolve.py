"""Resolution: work signals assigned to WorkItem clusters, ledger constraints first, then score."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.text import cosine, title_from_prompt

# Resolution weights (DESIGN §4: file overlap the largest) and thresholds, in one place.
W_COSINE = 0.20
W_FILES = 0.45
W_SHARED = 0.15
W_TEMPORAL = 0.10
W_ALIAS = 0.10
HIGH = 0.40  # assign to the cluster
LOW = 0.20  # between LOW and HIGH: a new cluster with a weak RELATED edge
TEMPORAL_HALF_LIFE_S = 6 * 3600
TRUNK_BRANCHES = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})


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

    def add(self, w: WorkSignal) -> None:
        self.windows.append(w)
        self.files.update(w.edited)
        self.read.update(w.read)
        self.terms.update(w.term_counts())
        self.commits.update(w.commits)
        if w.branch and w.branch not in TRUNK_BRANCHES:
            self.branches[w.branch] += 1
        alias = title_from_prompt(w.first_prompt) if w.first_prompt else ""
        if alias and alias != "Untitled work" and alias not in self.aliases:
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


def score(w: WorkSignal, c: Cluster) -> tuple[float, dict[str, float]]:
    """The resolution score of a window against a cluster, with its parts."""
    files = c.all_files()
    # Edits are the strongest evidence; files a window only read or named count for less.
    weak = _overlap((w.read | w.mentioned) - w.edited, files)
    if w.edited:
        f = max(_overlap(w.edited, files), 0.85 * weak)
    else:
        f = 0.5 * weak
    cos = cosine(w.term_counts(), c.terms)
    shared = 1.0 if ((w.branch and w.branch not in TRUNK_BRANCHES and
                      (w.branch in c.branches or (c.seed and c.seed.branch == w.branch)))
                     or (w.commits & c.commits)) else 0.0
    t0 = parse_ts(w.start_ts)
    temporal = 0.0
    if t0 and c.last_ts:
        temporal = math.exp(-abs(t0 - c.last_ts) / TEMPORAL_HALF_LIFE_S)
    alias = 0.0
    title = title_from_prompt(w.first_prompt) if w.first_prompt else ""
    names = c.aliases + ([c.seed.title] if c.seed else [])
    if title and names:
        alias = max(fuzz.token_set_ratio(title.lower(), n.lower()) for n in names) / 100.0
    total = (W_COSINE * cos + W_FILES * f + W_SHARED * shared + W_TEMPORAL * temporal
             + W_ALIAS * alias)
    return total, {"cosine": cos, "files": f, "shared": shared, "temporal": temporal,
                   "alias": alias}


def _cluster_id(w: WorkSignal) -> str:
    return "lw_" + hashlib.sha256(w.key.encode()).hexdigest()[:10]


def resolve(windows: list[WorkSignal], seeds: list[Seed]) -> list[Cluster]:
    """Assign windows (in time order) to clusters. Ledger seeds route their own sessions first;
    a read-only window joins an effort only on a high score and never founds a confident one."""
    clusters: list[Cluster] = []
    by_session: dict[str, list[Cluster]] = {}
    for s in seeds:
        c = Cluster(id=s.id, seed=s, aliases=list(s.aliases))
        c.files.update({f: 1 for f in s.files})
        for f in s.files:
            for t in f.replace("/", " ").replace(".", " ").split():
                c.terms[t.lower()] += 1
        clusters.append(c)
        for sk in s.sessions:
            by_session.setdefault(sk, []).append(c)
    groups: dict[str, list[Cluster]] = {}
    for c in clusters:
        if c.seed and c.seed.group:
            groups.setdefault(c.seed.group, []).append(c)
    for w in sorted(windows, key=lambda x: (parse_ts(x.start_ts), x.key)):
        routed = by_session.get(w.session_key)
        if routed:
            best = max(routed, key=lambda c: (score(w, c)[0], c.id)) if len(routed) > 1 \
                else routed[0]
            _place(w, best, groups)
            continue
        ranked = sorted(((score(w, c)[0], c.id, c) for c in clusters), key=lambda x: (-x[0], x[1]))
        top = ranked[0] if ranked else None
        if top and top[0] >= HIGH:
            _place(w, top[2], groups)
            continue
        new = Cluster(id=_cluster_id(w))
        new.add(w)
        if top and top[0] > LOW and not w.is_readonly:
            new.related[top[1]] = round(top[0], 4)
        clusters.append(new)
    return [c for c in clusters if c.windows or c.seed]


def _place(w: WorkSignal, best: Cluster, groups: dict[str, list[Cluster]]) -> None:
    """Add `w` to `best`; when `best` is a part of a split by files, each part of the split
    gets only the window's work on the files it owns (`best` also takes unowned files), and
    none takes the window's commits: commits go by their own files (the linker)."""
    group = best.seed.group if best.seed else None
    if not group:
        best.add(w)
        return
    from dataclasses import replace

    parts = groups[group]
    owned = frozenset().union(*(p.seed.owns for p in parts if p.seed))
    placed = False
    for p in parts:
        own = p.seed.owns if p.seed else frozenset()
        keep = own | (frozenset(x for x in w.edited | w.read | w.mentioned if x not in owned)
                      if p is best else frozenset())
        if not (w.edited & keep) and p is not best:
            continue
        p.add(replace(w, edited=w.edited & keep, read=w.read & keep,
                      mentioned=w.mentioned & keep, commits=frozenset()))
        placed = True
    if not placed:
        best.add(w)
