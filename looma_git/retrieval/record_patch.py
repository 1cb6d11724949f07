"""The records of a new ledger head from the previous head's: only the WorkItems whose fold
inputs changed are emitted and projected again."""

from __future__ import annotations

import hashlib
from collections import defaultdict

from looma_git.ledger import emit
from looma_git.ledger.state import LedgerState
from looma_git.retrieval.records import ItemRecord


def fingerprints(state: LedgerState) -> dict[str, str]:
    """Listed WorkItem id -> a digest of everything its record is built from: its fold record
    (every field, derived ones included), its links and the memories of it and of the
    WorkItems merged into it (by their ops). Equal digests, equal records (`ItemRecord.of` is
    a pure projection of those)."""
    links: dict[str, list[str]] = defaultdict(list)
    for key in sorted(state.links):
        link = state.links[key]
        links[link.workitem].append(repr(link))
    mems: dict[str, list[str]] = defaultdict(list)
    for mid in sorted(state.memories):
        mem = state.memories[mid]
        if isinstance(mem.workitem, str):
            # A memory is what its ops made it (every memory op's step touches it, and op ids
            # hash their content): its op ids stand for its fields, at a tenth of a repr.
            mems[state.survivor(mem.workitem)].append(f"{mid} {mem.workitem} {' '.join(mem.ops)}")
    out = {}
    for wid, wi in state.workitems.items():
        if wi.live and not wi.split_into:
            h = hashlib.blake2b(repr(wi).encode(), digest_size=16)
            h.update(repr(links.get(wid)).encode())
            h.update(repr(mems.get(wid)).encode())
            out[wid] = h.hexdigest()
    return out


def records(state: LedgerState, prior: list[ItemRecord], prior_fps: dict[str, str]
            ) -> tuple[list[ItemRecord], dict[str, str]]:
    """(the live WorkItems' records, sorted by id as `from_ledger` gives them; their
    fingerprints): a prior record is kept when its WorkItem's fingerprint is unchanged."""
    fps = fingerprints(state)
    kept = {it.id: it for it in prior if it.id in fps and prior_fps.get(it.id) == fps[it.id]}
    fresh = sorted(set(fps) - set(kept))
    made = {w.id: ItemRecord.of(w) for w in emit.workitems(state, fresh)} if fresh else {}
    return [kept.get(w) or made[w] for w in sorted(fps)], fps
