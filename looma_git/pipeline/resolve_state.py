"""The resolver's state after a pass, kept for the next one: per cluster what its windows
added (files, reads, words, branches, commits, titles: the postings a window is scored
through), and the pass-wide word frequencies, window count and each session's cluster.

A pass whose only change is new sessions, after every stored window in time, with every stored
session routed by exactly the one ledger WorkItem its windows are in (pipeline/resolve.py:
routed windows are placed without scoring), the same commits and no content evidence from the
new sessions, resolves exactly as the full pass would: the state the full pass reaches before
the first new window is the seeds' plus what each cluster's windows added, which is what is
kept here. Then only the new windows are scored (against the clusters sharing a key with
them) and no stored window is read or placed again (`Resolver.restore`). Anything else is the
replaying pass (pipeline/replay.py), which rebuilds this state whole.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from looma_git.pipeline.clusters import (
    Cluster,
    Seed,
    take_window,
    window_order,
)
from looma_git.pipeline.signals import WorkSignal

ALIASES_KEPT = 16  # a cluster's distinct window titles kept: its seed's (<= 8) + 8 more


@dataclass
class ClusterAgg:
    """What one cluster's windows added to it (its seed's part is the seed's to add)."""

    files: Counter[str] = field(default_factory=Counter)
    read: Counter[str] = field(default_factory=Counter)
    terms: Counter[str] = field(default_factory=Counter)
    branches: Counter[str] = field(default_factory=Counter)
    landed: Counter[str] = field(default_factory=Counter)
    commits: set[str] = field(default_factory=set)
    wrote: set[str] = field(default_factory=set)
    prs: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)  # read or named, not edited (by_read)
    aliases: list[str] = field(default_factory=list)
    last_ts: float = 0.0
    keys: list[str] = field(default_factory=list)  # its windows, in placement order

    def add(self, w: WorkSignal) -> None:
        """What `Cluster.add` and the resolver's postings take from window `w`."""
        self.keys.append(w.key)
        self.files.update(w.edited)
        self.read.update(w.read)
        self.terms.update(dict(w.terms))
        self.reads.update((w.read | w.mentioned) - w.edited)
        take_window(self, w, ALIASES_KEPT)

    def merge_into(self, c: Cluster, max_aliases: int) -> None:
        """Cluster `c` (its seed's part only) as it is once these windows joined it."""
        c.files.update(self.files)
        c.read.update(self.read)
        c.add_terms(self.terms)
        c.commits.update(self.commits)
        c.wrote.update(self.wrote)
        c.prs.update(self.prs)
        c.landed.update(self.landed)
        c.branches.update(self.branches)
        for a in self.aliases:
            if a not in c.aliases and len(c.aliases) < max_aliases:
                c.aliases.append(a)
        c.last_ts = max(c.last_ts, self.last_ts)


@dataclass
class ResolverState:
    """The kept state (see the module docstring) and what it is valid for."""

    code: str  # the code that wrote it (memo_code): other code never reads it
    commits_fp: str  # the commits it was resolved with (authorship, linking)
    windows: int = 0
    term_df: Counter[str] = field(default_factory=Counter)
    last: dict[str, str] = field(default_factory=dict)  # session -> its latest window's cluster
    sessions: dict[str, set[str]] = field(default_factory=dict)  # session -> its clusters
    named: set[str] = field(default_factory=set)  # shas windows named (own_authors)
    branches: set[str] = field(default_factory=set)  # branches windows worked on
    max_order: tuple[float, str] = (float("-inf"), "")
    orders: dict[str, tuple[float, str]] = field(default_factory=dict)  # window -> its order
    # Windows stored with RELATED edges or a scored decision: once routed, both are empty.
    decided: set[str] = field(default_factory=set)
    clusters: dict[str, ClusterAgg] = field(default_factory=dict)

    def place(self, w: WorkSignal, cid: str, original: WorkSignal | None = None) -> None:
        """Window `w` (as joined) was placed in cluster `cid`; `original`: as it came."""
        self.saw(original or w, cid)
        self.clusters.setdefault(cid, ClusterAgg()).add(w)

    def saw(self, o: WorkSignal, cid: str | None) -> None:
        """The pass-wide part of placing window `o` (as it came) in cluster `cid` (None: in
        none of the clusters kept)."""
        self.windows += 1
        self.term_df.update({t for t, _ in o.terms})
        if cid is not None:
            self.last[o.session_key] = cid
            self.sessions.setdefault(o.session_key, set()).add(cid)
        self.named.update(o.commits)
        if o.branch:
            self.branches.add(o.branch)
        self.max_order = max(self.max_order, window_order(o))
        self.orders[o.key] = window_order(o)

    def after(self, order: tuple[float, str]) -> set[str]:
        """The kept windows placed after `order`."""
        return {k for k, o in self.orders.items() if o > order}

    def rewind(self, tail: list[WorkSignal], windows: dict[str, list[WorkSignal]]) -> None:
        """The state before the `tail` windows (the last ones placed) were: `windows`, every
        window of each cluster they are in (routed windows: as they came)."""
        keys = {w.key for w in tail}
        for w in tail:
            self.windows -= 1
            self.term_df.subtract({t for t, _ in w.terms})
            del self.orders[w.key]
        self.term_df = +self.term_df
        for w in tail:
            sk = w.session_key
            if not any(k.startswith(sk + "#") for k in self.orders):
                self.last.pop(sk, None)
                self.sessions.pop(sk, None)
        for cid, ws in windows.items():
            agg = ClusterAgg()
            for w in sorted(ws, key=window_order):
                if w.key not in keys:
                    agg.add(w)
            if agg.keys:
                self.clusters[cid] = agg
            else:
                self.clusters.pop(cid, None)
        self.max_order = max(self.orders.values(), default=(float("-inf"), ""))

    def renamed(self, fresh: dict[str, str]) -> set[str]:
        """Clusters renamed (published under a ledger id): returns the new names."""
        out = set()
        for old, new in fresh.items():
            if old in self.clusters:
                self.clusters[new] = self.clusters.pop(old)
                out.add(new)
        if out:
            self.last = {k: fresh.get(v, v) for k, v in self.last.items()}
            self.sessions = {k: {fresh.get(c, c) for c in v} for k, v in self.sessions.items()}
        return out


def commits_fingerprint(commits: Iterable[object]) -> str:
    """The commits a pass resolved with, as one digest (any difference: a different one)."""
    h = hashlib.sha256()
    for c in commits:
        h.update(repr(c).encode())
    return h.hexdigest()


def state_of(clusters: Iterable[Cluster], windows: Iterable[WorkSignal],
             decided: Iterable[str], code: str, commits_fp: str) -> ResolverState:
    """The kept state of a pass that placed every window (`windows`: as they came, in
    placement order; the clusters hold them as joined)."""
    st = ResolverState(code=code, commits_fp=commits_fp, decided=set(decided))
    joined: dict[str, tuple[str, WorkSignal]] = {}
    for c in clusters:
        for w in c.windows:
            joined.setdefault(w.key, (c.id, w))
            st.clusters.setdefault(c.id, ClusterAgg()).add(w)
    for w in windows:
        st.saw(w, joined[w.key][0] if w.key in joined else None)
    return st


def routes_unchanged(st: ResolverState, seeds: Iterable[Seed], changed: set[str]) -> bool:
    """Whether every kept session is routed by exactly one seed, the cluster all its windows
    are in (then no kept window's placement depends on a score), and no seed is split."""
    route: dict[str, list[str]] = {}
    for s in seeds:
        if s.group or s.owns:
            return False
        for sk in s.sessions:
            route.setdefault(sk, []).append(s.id)
    for key, cids in st.sessions.items():
        if key in changed:
            return False
        r = route.get(key)
        if r is None or len(r) != 1 or cids != {r[0]}:
            return False
    return set(st.clusters) <= {i for ids in route.values() for i in ids}
