"""Cross-clone convergence: one WorkItem per effort when two clones each made one for it.

A ledger seed routes its own sessions (pipeline/resolve.py), so after a sync each clone's
windows keep going to the WorkItem that clone created before it saw the other's: two
teammates who worked on one effort hold two WorkItems for it, and resolution never compares
them (each clone's resolver did compare its own WorkItems with each other, window by window,
and kept them apart). This pass compares them, on what every clone holding the same ops sees
alike: the ledger's WorkItems (titles, aliases, files, branch, evidence quotes, each session's
opening request). Each WorkItem becomes one window of its own evidence, scored against the
other as a cluster with the resolver's score (pipeline/evidence.py), both ways; a pair of
WorkItems created by different clones that clears the resolver's own threshold both ways is
one effort, and a **system** `workitem.merge` says so (the older WorkItem survives). Commit
links are left out of the comparison: a link is the linker's reading of files, and one wrong
link (a commit of one effort linked to another effort sharing its file) would join the two.

Every clone decides the same from the same ledger, a merge is never undone by the system, and
WorkItems a person touched (created, renamed, split, forced, marked false positive) or kept
apart (an undone merge: `constraints.cannot_link`) are never merged: once converged, the pass
finds nothing and writes nothing. On one clone every WorkItem has one origin: nothing changes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looma_git.ledger import derive
from looma_git.ledger.state import LedgerState, WorkItemState
from looma_git.pipeline.clusters import TRUNK_BRANCHES, Cluster, Seed
from looma_git.pipeline.evidence import Rarity, score
from looma_git.pipeline.resolve import ASSIGN_AT
from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.text import MANIFESTS, path_terms, tokens

MERGE_AT = ASSIGN_AT  # both ways: what a window needs to join a cluster (docs/quality.md)
CANDIDATE_TERMS = 8  # a WorkItem's most distinctive words that find WorkItems to compare with
MAX_SHARING = 64  # a file, branch or word this many WorkItems share finds none (not distinctive:
# its pairs would grow with the square of the history)
MAX_TERMS = 400  # words of a WorkItem compared (its most used; as a cluster's top terms)


@dataclass(frozen=True)
class Profile:
    """What the ledger says of one WorkItem, as the resolver's inputs."""

    id: str
    origins: frozenset[str]  # the clones whose system ops created it and what it absorbed
    lamport: int
    files: frozenset[str]
    terms: tuple[tuple[str, int], ...]
    branch: str | None
    prompt: str
    first: str
    last: str


def _texts(wi: WorkItemState, obs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Its own words: title, aliases, every session's opening request, evidence quotes."""
    return [wi.title, *wi.aliases, *(str(o.get("prompt") or "") for o in obs.values()),
            *(str(e.get("quote") or "") for e in wi.evidence if isinstance(e, dict))]


def profile(wi: WorkItemState, obs: Mapping[str, Mapping[str, Any]],
            origins: frozenset[str]) -> Profile:
    terms: Counter[str] = Counter()
    for text in _texts(wi, obs):
        terms.update(tokens(text))
    for f in wi.files:
        terms.update(path_terms(f))
    ordered = sorted(obs.values(), key=lambda o: (str(o.get("first") or "~"), str(o.get("id"))))
    firsts = [str(o["first"]) for o in ordered if o.get("first")]
    lasts = [str(o["last"]) for o in ordered if o.get("last")]
    branch = wi.branch if isinstance(wi.branch, str) and wi.branch not in TRUNK_BRANCHES \
        else None
    return Profile(
        id=wi.id, origins=origins, lamport=wi.created_lamport, files=frozenset(wi.files),
        terms=tuple(sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TERMS]),
        branch=branch, prompt=next((str(o["prompt"]) for o in ordered if o.get("prompt")), ""),
        first=min(firsts, default=""), last=max(lasts, default=""))


def as_window(p: Profile) -> WorkSignal:
    """The WorkItem as one window of all its evidence (no commits: see the module's doc)."""
    return WorkSignal(key=f"{p.id}#0", agent="ledger", session_id=p.id, index=0,
                      start_ts=p.first, end_ts=p.last, edited=p.files, read=frozenset(),
                      commands=(), commits=frozenset(), branch=p.branch, prs=frozenset(),
                      terms=p.terms, first_prompt=p.prompt, event_ids=())


def as_cluster(p: Profile) -> Cluster:
    """The WorkItem as the cluster a window is scored against."""
    c = Cluster(id=p.id, seed=Seed(id=p.id, title="", files=p.files, aliases=(),
                                   sessions=frozenset(), branch=p.branch))
    c.files.update({f: 1 for f in p.files})
    c.add_terms(dict(p.terms))
    if p.branch:
        c.branches[p.branch] += 1
    c.last_ts = parse_ts(p.last) if p.last else 0.0
    return c


def rarity(profiles: list[Profile]) -> Rarity:
    """How distinctive each file and word is among the ledger's WorkItems."""
    file_df: dict[str, set[str]] = {}
    term_df: Counter[str] = Counter()
    for p in profiles:
        for f in p.files:
            file_df.setdefault(f, set()).add(p.id)
        term_df.update({t for t, _ in p.terms})
    return Rarity(len(profiles), file_df, len(profiles), term_df)


class Scorer:
    """The resolver's score between ledger WorkItems, each one's window and cluster built once."""

    def __init__(self, profiles: list[Profile]) -> None:
        self.idf = rarity(profiles)
        self._windows: dict[str, WorkSignal] = {}
        self._clusters: dict[str, Cluster] = {}

    def one_way(self, a: Profile, b: Profile) -> float:
        """`a`, as one window, against `b` as a cluster. Work on a feature branch `b` never
        used is, to the resolver, work on a branch no cluster had used when it started
        (`fresh`: it starts work of its own, unless `b` only read)."""
        w = self._windows.get(a.id)
        if w is None:
            w = self._windows[a.id] = as_window(a)
        c = self._clusters.get(b.id)
        if c is None:
            c = self._clusters[b.id] = as_cluster(b)
        fresh = bool(a.branch) and a.branch != b.branch
        return score(w, c, self.idf, None, fresh)[0]

    def pair(self, a: Profile, b: Profile) -> float:
        """The lower of the two ways (each WorkItem must join the other); the second way is
        not scored when the first already falls short of MERGE_AT."""
        first = self.one_way(a, b)
        return first if first < MERGE_AT else min(first, self.one_way(b, a))


def _touched(wi: WorkItemState, state: LedgerState) -> bool:
    """A person shaped it (or it is not live work): the system never merges it."""
    return bool(wi.forced or wi.pinned_title or wi.split_from or wi.split_into
                or wi.false_positive or wi.merged_into
                or wi.id in state.constraints.partitions)


def origins_of(state: LedgerState) -> dict[str, frozenset[str]]:
    """Each live WorkItem's origins: the clones whose system op created it or a WorkItem
    merged into it (none for a WorkItem a person created)."""
    out: dict[str, set[str]] = {}
    for wid, clone in state.origins.items():
        out.setdefault(state.survivor(wid), set()).add(clone)
    return {k: frozenset(v) for k, v in out.items()}


def profiles(state: LedgerState) -> list[Profile]:
    """Every live WorkItem's profile, by id (their evidence sets how rare files and words
    are), observations gathered by survivor."""
    obs = observed_by_survivor(state)
    origins = origins_of(state)
    return [profile(wi, obs.get(wid, {}), origins.get(wid, frozenset()))
            for wid, wi in sorted(state.workitems.items()) if wi.live and not wi.split_into]


def _candidates(ps: list[Profile], idf: Rarity) -> set[tuple[int, int]]:
    """Pairs of profiles of different origins sharing a file, the branch or one of their
    most distinctive words (the others cannot reach MERGE_AT)."""
    index: dict[str, list[int]] = {}
    for i, p in enumerate(ps):
        keys = {f"f:{f}" for f in p.files if not MANIFESTS.search(f)}
        if p.branch:
            keys.add(f"b:{p.branch}")
        top = sorted(p.terms, key=lambda tn: (-idf.term(tn[0]) * (1 + math.log(tn[1])), tn[0]))
        keys |= {f"t:{t}" for t, _ in top[:CANDIDATE_TERMS]}
        for k in keys:
            index.setdefault(k, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for members in index.values():
        if len(members) > MAX_SHARING:
            continue
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                i, j = members[x], members[y]
                if ps[i].origins.isdisjoint(ps[j].origins):
                    pairs.add((i, j))
    return pairs


def plan_merges(state: LedgerState) -> list[dict[str, Any]]:
    """System `workitem.merge` drafts joining WorkItems of different clones that are one
    effort. Greedy by score: a pair joins only when the two groups so far come from disjoint
    clones (what one clone's resolver kept apart stays apart) and no pair across them is
    kept apart by a person; each group merges into its oldest WorkItem."""
    if len(set(state.origins.values())) < 2:
        return []
    every = profiles(state)
    ps = [p for p in every if p.origins and not _touched(state.workitems[p.id], state)]
    if len({o for p in ps for o in p.origins}) < 2:
        return []
    scorer = Scorer(every)
    scored = []
    for i, j in sorted(_candidates(ps, scorer.idf)):
        s = scorer.pair(ps[i], ps[j])
        if s >= MERGE_AT:
            scored.append((-round(s, 6), ps[i].id, ps[j].id))
    group = {p.id: {p.id} for p in ps}
    origins = {p.id: set(p.origins) for p in ps}
    for _, a, b in sorted(scored):
        ga, gb = group[a], group[b]
        if ga is gb or not origins[a].isdisjoint(origins[b]):
            continue
        if any(state.constraints.cannot(x, y) for x in ga for y in gb):
            continue
        ga |= gb
        oa = origins[a]
        oa |= origins[b]
        for m in gb:
            group[m], origins[m] = ga, oa
    by_id = {p.id: p for p in ps}
    drafts = []
    for g in {id(g): g for g in group.values() if len(g) > 1}.values():
        into = min(g, key=lambda m: (by_id[m].lamport, m))
        drafts.append({"op": "workitem.merge", "target": {"type": "workitem", "id": into},
                       "payload": {"from": sorted(g - {into})},
                       "rationale": "one effort seen by two clones (pipeline/converge.py)"})
    return sorted(drafts, key=lambda d: d["target"]["id"])


def observed_by_survivor(state: LedgerState) -> dict[str, dict[str, dict[str, Any]]]:
    """The ledger's observations gathered under the WorkItem that absorbed them (what the
    fold derives a merged WorkItem from): a clone whose sessions were observed on a WorkItem
    since merged away has nothing new to say of them."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for wid, per in state.observations.items():
        target = out.setdefault(state.survivor(wid), {})
        for key, o in per.items():
            target[key] = derive.merge(target.get(key), o)
    return out
