"""Resume without a goal: the most recently active WorkItem here, or the ambiguity."""

from __future__ import annotations

# (not pipeline.signals' name for it: importing signals compiles the segmentation's regexes,
# 50-150 ms of a fresh resume)
from looma_git.isotime import parse_ts
from looma_git.retrieval.records import ItemRecord

NEAR_TIE_S = 3600  # two efforts active within the same hour are a near-tie
TRUNK = frozenset({"main", "master", "trunk", "develop"})


def most_recent(items: list[ItemRecord], branch: str | None) -> tuple[str, list[ItemRecord]]:
    """("confident", [one]) / ("ambiguous", [two or more]) / ("cold", []).

    A WorkItem on the checked-out (non-trunk) branch wins; otherwise the latest activity
    wins unless another effort moved within the same hour."""
    live = [it for it in items if it.status == "active"] or list(items)
    if not live:
        return "cold", []
    if branch and branch not in TRUNK:
        here = [it for it in live if it.branch == branch]
        if len(here) == 1:
            return "confident", here
        if here:
            live = here
    ranked = sorted(live, key=lambda it: (parse_ts(it.updated), it.confidence, it.id),
                    reverse=True)
    top = parse_ts(ranked[0].updated)
    ties = [it for it in ranked if top - parse_ts(it.updated) < NEAR_TIE_S]
    if len(ties) == 1:
        return "confident", ties
    return "ambiguous", ties[:4]
