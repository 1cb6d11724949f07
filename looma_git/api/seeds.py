"""The ledger's WorkItems as the refinery's resolution seeds, with the user's overrides and links."""

from __future__ import annotations

from looma_git.ledger.state import LedgerState, WorkItemState
from looma_git.pipeline.clusters import Seed


def _session_keys(item: WorkItemState) -> frozenset[str]:
    return frozenset(f"{s['agent']}:{s['id']}" for s in item.sessions
                     if s.get("agent") and s.get("id"))


def seeds_from_state(state: LedgerState) -> tuple[list[Seed], dict[str, str],
                                                  frozenset[tuple[str, str]],
                                                  frozenset[tuple[str, str]]]:
    """Ledger WorkItems as resolution seeds, user overrides, forbidden and live links."""
    seeds: list[Seed] = []
    overrides: dict[str, str] = {}
    merge_targets = {it.merged_into for it in state.workitems.values()  # by a person's merge
                     if it.merged_into and state.constraints.must(it.id, it.merged_into)}
    for wid, item in sorted(state.workitems.items()):
        if item.merged_into or item.split_into:
            continue  # its sessions now route to the merge target / the split parts
        part = state.constraints.partitions.get(wid) or {}
        by_files = part.get("by") == "files" and item.split_from in state.workitems
        sessions = _session_keys(item)
        if by_files:  # the split WorkItem's sessions route to its parts, divided by file
            sessions |= _session_keys(state.workitems[str(item.split_from)])
        seeds.append(Seed(
            id=wid, title=item.title, files=frozenset(item.files), aliases=item.aliases,
            sessions=sessions, branch=item.branch, quarantined=item.false_positive,
            owns=frozenset(item.files) if by_files else frozenset(),
            group=item.split_from if by_files else None))
        if item.forced == "promote":
            overrides[wid] = "force-promote"
        elif item.forced == "reject":
            overrides[wid] = "reject"
        elif item.false_positive:
            overrides[wid] = "false-positive"
        elif wid in merge_targets:
            overrides[wid] = "merge-target"
    return (seeds, overrides, frozenset(state.constraints.unlinked),
            frozenset(state.links))
