"""Which stored decisions an incremental pass keeps when its seeds changed: a window's stored
cluster is replayed, unscored, only while nothing that decision was made from differs.

A decision (`Resolver.add`) is a function of the window, the clusters it is compared with
(their state when it arrives), the rarity of its files and words, and whether its branch is
new. The previous pass stored, per window, the clusters it scored against and whether it
founded its cluster; this pass tracks what differs from that pass at each point in time:

- clusters whose state differs (`dirty`): seeds added, removed or changed (a ledger update
  after the last pass), and every cluster a window joined or left differently;
- files whose rarity may differ (their clusters changed) and branches whose novelty may;
- the number of clusters (every file's rarity): the previous pass's count is followed from
  its stored foundings;
- words' rarity depends only on the windows seen so far, equal up to the first window that is
  new, changed or gone (`first_change`); from there every scored window is scored again.

A window routed by exactly one seed's sessions needs no scoring at all. Any other stored
decision is replayed when its window is unchanged, it came before `first_change`, the cluster
count is the previous pass's, none of its files or its branch is touched by a change, and the
clusters it would be compared with now are exactly those it was, none of them dirty: then
every input of the decision is the one it had, and so is its outcome (a full pass computes
the same). Anything else is scored again, and where its outcome differs the clusters involved
become dirty from there on.
"""

from __future__ import annotations

from looma_git.pipeline.clusters import Seed, window_order
from looma_git.pipeline.resolve import Resolver
from looma_git.pipeline.signals import WorkSignal
from looma_git.pipeline.views import StoredWindow


class Replay:
    """What differs from the pass that stored the decisions, as this pass advances."""

    def __init__(self, old_seeds: tuple[Seed, ...] | None, new_seeds: tuple[Seed, ...],
                 first_change: float, enabled: bool = True) -> None:
        self.enabled = enabled and old_seeds is not None
        old = {s.id: s for s in old_seeds or ()}
        new = {s.id: s for s in new_seeds}
        changed = {i for i in old.keys() | new.keys() if old.get(i) != new.get(i)}
        self.dirty: set[str] = set(changed)
        self.files: set[str] = set()
        self.branches: set[str] = set()
        for i in changed:
            for s in (old.get(i), new.get(i)):
                if s is not None:
                    self.files |= s.files | s.owns
                    if s.branch:
                        self.branches.add(s.branch)
        self.clusters_before = len(old)  # the previous pass's cluster count at this point
        self.first_change = first_change

    def may_replay(self, w: WorkSignal, old: StoredWindow | None, r: Resolver) -> bool:
        """Whether `old`'s decision is the one scoring `w` now would make."""
        if not self.enabled or old is None or old.scored is None or old.signal != w:
            return False
        if window_order(w)[0] >= self.first_change:
            return False
        if len(r.clusters) != self.clusters_before or self.dirty.intersection(old.scored):
            return False
        if (w.edited | w.read | w.mentioned) & self.files or (w.branch and
                                                              w.branch in self.branches):
            return False
        near, pool = r.candidates(w)
        return tuple(sorted(c.id for c in near + pool)) == old.scored

    def placed(self, w: WorkSignal, old: StoredWindow | None, cid: str, r: Resolver) -> None:
        """`w` was placed in `cid`: note what now differs from the previous pass."""
        if old is not None and old.founded:
            self.clusters_before += 1
        if old is not None and old.cluster == cid and old.signal == w:
            return
        for x in {cid, old.cluster} if old is not None else {cid}:
            self.dirty.update(r.group_of(x))
        for s in (w, old.signal) if old is not None else (w,):
            self.files |= s.edited | s.read | s.mentioned
            if s.branch:
                self.branches.add(s.branch)
