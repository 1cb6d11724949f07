"""Resolution: work signals assigned to WorkItem clusters, ledger constraints first, then score."""

from __future__ import annotations

import heapq
import math
from collections import Counter

from looma_git.pipeline.clusters import (
    MAX_ALIASES,
    TRUNK_BRANCHES,
    Cluster,
    Seed,
    cluster_id,
    window_order,
)
from looma_git.pipeline.evidence import (
    Rarity,
    named_branches,
    orientation,
    parent_session,
    score,
    switched,
)
from looma_git.pipeline.kinds import asks_inquiry
from looma_git.pipeline.resolve_state import ResolverState
from looma_git.pipeline.signals import WorkSignal
from looma_git.pipeline.text import MANIFESTS, path_terms, tokens
from looma_git.pipeline.textsim import Terms

# Thresholds on the evidence's score (pipeline/evidence.py), chosen with it (docs/quality.md).
ASSIGN_AT = 0.40  # assign to the best cluster at this score
READONLY_ASSIGN_AT = 0.25  # the same for a window that only read
MARGIN = 0.0  # over the runner-up (a near-tie between two clusters still joins the best)
LOW = 0.20  # between LOW and ASSIGN_AT: a new cluster with a weak RELATED edge
RELATED_TERMS = 8  # a window's most distinctive terms that look up clusters beyond its files
RELATED_POOL = 64  # at most this many such clusters (most recently active first) are scored

__all__ = ["Cluster", "Rarity", "Resolver", "Seed", "resolve", "score", "window_order"]


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
        self._by_ro_read: dict[str, set[str]] = {}  # the same, for read-only clusters only
        self._by_branch: dict[str, set[str]] = {}
        self._by_commit: dict[str, set[str]] = {}
        self._by_pr: dict[str, set[str]] = {}
        self._by_term: dict[str, set[str]] = {}
        self._term_df: Counter[str] = Counter()  # windows using each term
        self._text = Terms()  # the clusters' words as arrays, to compare many at once
        self._windows = 0
        self._last: dict[str, str] = {}  # session -> cluster of its latest window
        self._groups: dict[str, list[Cluster]] = {}  # split-by-files parts, by split WorkItem
        # The clusters the last `add` scored its window against (None: routed by a seed's
        # sessions, nothing compared); an incremental pass replays a decision only while
        # none of them changed (pipeline/replay.py).
        self.last_scored: tuple[str, ...] | None = None
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

    @classmethod
    def restore(cls, seeds: list[Seed], state: ResolverState) -> Resolver:
        """The resolver a full pass has once every kept window is placed, without placing
        them: the seeds plus what each cluster's windows added (pipeline/resolve_state.py;
        the caller checked `routes_unchanged`: every kept cluster is a seed)."""
        r = cls(seeds)
        # (one loop per posting, no set copies: this runs over every kept cluster's keys each
        # new session, ~0.14 CPU-s at 5,000 sessions before; what `_index` would add)
        postings = ((r._by_file, "files"), (r._by_term, "terms"), (r._by_branch, "branches"),
                    (r._by_commit, "commits"), (r._by_commit, "wrote"), (r._by_pr, "prs"),
                    (r._by_read, "reads"))
        for cid, agg in state.clusters.items():
            agg.merge_into(r.by_id[cid], MAX_ALIASES)
            for index, name in postings:
                get = index.get
                for k in getattr(agg, name):
                    have = get(k)
                    if have is None:
                        index[k] = {cid}
                    else:
                        have.add(cid)
        r._windows = state.windows
        r._term_df = Counter(state.term_df)
        r._last = dict(state.last)
        return r

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
        self._index(c, set(w.edited), {t for t, _ in w.terms}, branches,
                    set(w.commits | w.wrote))
        for pr in w.prs:
            self._by_pr.setdefault(pr, set()).add(c.id)
        for f in (w.read | w.mentioned) - w.edited:
            self._by_read.setdefault(f, set()).add(c.id)
            if c.readonly:
                self._by_ro_read.setdefault(f, set()).add(c.id)

    def _place(self, w: WorkSignal, best: Cluster) -> None:
        """Add `w` to `best`; when `best` is a part of a split by files, each part of the split
        gets only the window's work on the files it owns (`best` also takes unowned files), and
        none takes the window's commits: commits go by their own files (the linker)."""
        if not best.windows and best.seed is None:
            best.orientation = orientation(w)  # founded by a tour of the code: nothing joins it
        self._windows += 1
        used = {t for t, _ in w.terms}
        self._term_df.update(used)
        self._text.counted(self._term_df, used)
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
                                  mentioned=w.mentioned & keep, commits=frozenset(),
                                  wrote=frozenset()))
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
        for f in w.edited:  # an investigation that read what this window edits
            near |= {i for i in self._by_ro_read.get(f, ()) if self.by_id[i].readonly}
        prev = self._last.get(w.session_key)
        if prev is None and parent_session(w) is not None:
            prev = self._last.get(str(parent_session(w)))
        if prev is not None:
            near.add(prev)
        if w.branch and w.branch not in TRUNK_BRANCHES:
            near |= self._by_branch.get(w.branch, set())
        for b in named_branches(w.first_prompt):
            near |= self._by_branch.get(b, set())
        for pr in w.prs:
            near |= self._by_pr.get(pr, set())
        for sha in w.commits | w.wrote:
            near |= self._by_commit.get(sha, set())
        pool: set[str] = set()
        idf = self.rarity()
        distinctive = sorted(w.terms, key=lambda tn: (-idf.term(tn[0]) * (1 + math.log(tn[1])),
                                                      tn[0]))
        for t, _ in distinctive[:RELATED_TERMS]:
            pool |= self._by_term.get(t, set())
        pool -= near
        # (the RELATED_POOL first in that order, as sorting them all would give: ids are unique)
        extra = heapq.nsmallest(RELATED_POOL, (self.by_id[i] for i in pool),
                                key=lambda c: (-c.last_ts, c.id))
        return [self.by_id[i] for i in sorted(near)], extra

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
        self.last_scored = None
        if routed:
            best = max(routed, key=lambda c: (score(w, c, idf, prev)[0], c.id)) \
                if len(routed) > 1 else routed[0]
            self._place(w, best)
            return best.id, {}
        near, pool = self.candidates(w)
        self.last_scored = tuple(sorted(c.id for c in near + pool))
        fresh = bool(w.branch and w.branch not in TRUNK_BRANCHES
                     and not self._by_branch.get(w.branch))
        shown_around = orientation(w)
        scored = [c for c in near + pool
                  if not c.orientation and not (shown_around and not c.readonly)]
        texts = self._text.similarities(w, scored, idf, self._term_df)
        ranked = sorted(((score(w, c, idf, prev, fresh, text)[0], c.id, c)
                         for c, text in zip(scored, texts, strict=True)),
                        key=lambda x: (-x[0], x[1]))
        top = ranked[0] if ranked else None
        second = ranked[1][0] if len(ranked) > 1 else 0.0
        if top and top[0] >= assign_at(w) and top[0] - second >= MARGIN:
            self._place(w, top[2])
            return top[1], {}
        new = Cluster(id=cluster_id(w))
        if top and top[0] > LOW and not w.is_readonly:
            new.related[top[1]] = round(top[0], 4)
        self._register(new)
        self._place(w, new)
        return new.id, dict(new.related)

    def routed_to(self, w: WorkSignal) -> str | None:
        """The one seed whose sessions route `w` (no scoring decides it), else None."""
        routed = self.by_session.get(w.session_key)
        return routed[0].id if routed and len(routed) == 1 else None

    def group_of(self, cid: str) -> list[str]:
        """The parts of the split by files `cid` belongs to (a placement there moves them
        all), else just `cid`."""
        c = self.by_id.get(cid)
        group = c.seed.group if c is not None and c.seed else None
        return [p.id for p in self._groups[group]] if group else [cid]

    def result(self) -> list[Cluster]:
        return [c for c in self.clusters if c.windows or c.seed]


def assign_at(w: WorkSignal) -> float:
    """The score `w` must reach to join a cluster. A read-only window joins on less (what it
    read is weak evidence of what it is about), unless its request asks for an inquiry of its
    own ("find out why", "only investigate, change nothing"): then it joins only what it
    continues as clearly as work that edits, and otherwise founds its own investigation."""
    if w.is_readonly and not asks_inquiry(w.first_prompt[:300]):
        return READONLY_ASSIGN_AT
    # A window that edited only what every kind of work touches (manifests, lock files, the
    # changelog: "raise the sqlalchemy floor in pyproject and the min requirements") says as
    # little by its edits as one that only read: it joins on the same lesser score, unless its
    # request says it starts another topic ("different thing now: ...").
    if w.edited and all(MANIFESTS.search(f) for f in w.edited) and not switched(w.first_prompt):
        return READONLY_ASSIGN_AT
    return ASSIGN_AT


def resolve(windows: list[WorkSignal], seeds: list[Seed]) -> list[Cluster]:
    """Assign windows (in time order) to clusters. Ledger seeds route their own sessions first;
    a read-only window joins an effort only on a high score and never founds a confident one."""
    r = Resolver(seeds)
    for w in sorted(windows, key=window_order):
        r.add(w)
    return r.result()
