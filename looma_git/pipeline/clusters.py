"""The clusters resolution builds: a ledger WorkItem it starts from (Seed), a WorkItem under
construction (Cluster), a cluster's id and the order windows are seen in."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.text import title_from_prompt

TRUNK_BRANCHES = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})
MAX_ALIASES = 8  # aliases a cluster keeps (the first ones: the effort's own words)
MAX_CLUSTER_TERMS = 400  # a cluster's words compared with a window's (its most used ones)


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
    wrote: set[str] = field(default_factory=set)  # commits its windows wrote (by content)
    prs: set[str] = field(default_factory=set)  # pull request numbers its windows named
    landed: Counter[str] = field(default_factory=Counter)  # where those landed, per window
    related: dict[str, float] = field(default_factory=dict)
    last_ts: float = 0.0
    _top: tuple[tuple[str, int], ...] | None = None  # its words for scoring (see `top_terms`)
    orientation: bool = False  # founded by a request to be shown around the code
    # The name parts of its files, with how many files they were taken from (`names_of_files`).
    _names: tuple[int, frozenset[str]] | None = field(default=None, repr=False, compare=False)

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
        take_window(self, w, MAX_ALIASES)

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

    def names_of_files(self, files: set[str],
                       names: Callable[[set[str]], frozenset[str]]) -> frozenset[str]:
        """`names(files)` of `files` = `all_files()`, kept until the cluster has more files
        (it only ever gains files: the same count is the same set)."""
        if self._names is None or self._names[0] != len(files):
            self._names = (len(files), names(files))
        return self._names[1]



# title_from_prompt of each window's opening request, remembered: a pass places every window
# of the history and the title is the costly part of placing one (regular expressions). The
# store keeps each window's (pure function of its prompt), and `remember_aliases` brings them.
_ALIASES: dict[str, str] = {}


def alias_of(prompt: str) -> str:
    """`title_from_prompt(prompt)`, remembered."""
    alias = _ALIASES.get(prompt)
    if alias is None:
        alias = _ALIASES[prompt] = title_from_prompt(prompt)
    return alias


def remember_aliases(pairs: dict[str, str]) -> None:
    """Titles computed earlier (`alias_of` of each prompt, as stored with its window)."""
    _ALIASES.update(pairs)


def cluster_id(w: WorkSignal) -> str:
    """A cluster founded by window `w` is named after it (so a replay names it the same)."""
    return "lw_" + hashlib.sha256(w.key.encode()).hexdigest()[:10]



def window_order(w: WorkSignal) -> tuple[float, str]:
    """The order resolution sees windows in: start time, then key."""
    return (parse_ts(w.start_ts), w.key)


def take_window(acc: Any, w: WorkSignal, max_aliases: int) -> None:
    """What window `w` adds to `acc`'s commits, pull requests, landings, branches, aliases
    (the first `max_aliases`) and last activity: one rule for a `Cluster` and for the kept
    resolver state's per-cluster totals (pipeline/resolve_state.py), which must agree."""
    acc.commits.update(w.commits)
    acc.wrote.update(w.wrote)
    acc.prs.update(w.prs)
    if w.landed:
        acc.landed[w.landed] += 1
    if w.branch and w.branch not in TRUNK_BRANCHES:
        acc.branches[w.branch] += 1
    alias = alias_of(w.first_prompt) if w.first_prompt else ""
    if (alias and alias != "Untitled work" and alias not in acc.aliases
            and len(acc.aliases) < max_aliases):
        acc.aliases.append(alias)
    acc.last_ts = max(acc.last_ts, parse_ts(w.end_ts))
