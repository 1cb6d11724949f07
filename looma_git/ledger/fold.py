"""Folding ops in (lamport, id) order into LedgerState; user ops always outrank system ops."""

from __future__ import annotations

from collections.abc import Iterable

from looma_git.ledger import derive
from looma_git.ledger.ops import registry
from looma_git.ledger.ops.envelope import Op
from looma_git.ledger.state import Conflict, LedgerState, MemoryState, WorkItemState


def effective_ops(ops: Iterable[Op]) -> list[Op]:
    """Ops not cancelled by an effective undo, sorted by (lamport, id).

    effective(op) = not any(effective(u) for u in undoers(op)): an undo of an undo restores.
    A system undo of a user op never counts (a system op can never reverse a user op).
    """
    by_id = {op.id: op for op in ops}
    undoers: dict[str, list[Op]] = {}
    for op in by_id.values():
        if op.op == "undo" and op.inverse_of in by_id:
            target = by_id[op.inverse_of]
            if op.is_user or not target.is_user:
                undoers.setdefault(target.id, []).append(op)
    memo: dict[str, bool] = {}

    def effective(op_id: str, depth: int = 0) -> bool:
        if op_id in memo:
            return memo[op_id]
        if depth > 10_000:  # undo chains are short in practice; hostile depth stays effective
            return True
        memo[op_id] = True  # cycle guard (ids are content hashes, so cycles cannot be built)
        result = not any(effective(u.id, depth + 1) for u in undoers.get(op_id, ()))
        memo[op_id] = result
        return result

    return sorted((op for op in by_id.values() if effective(op.id)), key=lambda o: o.sort_key)


def fold(ops: Iterable[Op]) -> LedgerState:
    """The state of a set of ops; the same set in any order gives the same state."""
    folder = Folder()
    folder.apply(effective_ops(ops))
    return folder.finish()


# The objects an op changes (kept under its old name for store/ledger_ref.py).
_touched = registry.touched


class Folder:
    """Applies effective ops in order; reusable incrementally for ops that sort after the last.

    Each op's step is its kind's `apply` (`ledger/ops/<kind>.py`); the methods below are what
    those steps share: finding and touching WorkItems and memories, warnings, observations."""

    def __init__(self) -> None:
        self.state = LedgerState()
        self.dirty_workitems: set[str] = set()
        self.dirty_memories: set[str] = set()
        self.links_dirty = False
        # user-op heads per target (for `prev`) and prev lists (for causality)
        self.user_heads: dict[str, set[str]] = {}
        self._prev: dict[str, tuple[str, ...]] = {}
        self._intents: dict[str, list[Op]] = {}
        self._applied: set[str] = set()
        self.user_created: set[str] = set()  # WorkItems a person created (titles stay)
        self._derive: set[str] | None = None  # WorkItems to derive at finish (None: all)

    # ------------------------------------------------------------- driver
    def apply(self, ops: Iterable[Op]) -> None:
        """Apply already-effective ops in (lamport, id) order."""
        for op in ops:
            st = self.state
            st.head_lamport = max(st.head_lamport, op.lamport)
            if op.is_user:
                self._track_user(op)
            kind = registry.KINDS.get(op.op)
            if kind is not None:
                problem = kind.validate(op)
                if problem is None:
                    kind.apply(self, op)
                else:
                    self.warn(op, problem)
            self._applied.add(op.id)

    def finish(self) -> LedgerState:
        """Fill derived fields (observed WorkItems, link titles) and return the state."""
        self.dirty_workitems |= derive.derive_all(self.state, self.state.observations,
                                                  self.user_created, only=self._derive)
        self._derive = set()
        wis = self.state.workitems
        for link in self.state.links.values():
            wi = wis.get(link.workitem)
            link.title = wi.title if wi else ""
        return self.state

    def settle(self, wid: str) -> None:
        """Derive `wid` now, before an op freezes its derived fields (a merge away, a split
        copying them into the parts): a full fold and a fold in batches (each append derives
        at its end) then freeze the same values."""
        self.dirty_workitems |= derive.derive_all(self.state, self.state.observations,
                                                  self.user_created, only={wid})

    def prev_for(self, touched: Iterable[str]) -> list[str]:
        """The `prev` a new user op on these targets carries: the current heads."""
        heads: set[str] = set()
        for t in touched:
            heads |= self.user_heads.get(t, set())
        return sorted(heads)

    # ------------------------------------------------------------- causality
    def _track_user(self, op: Op) -> None:
        prev = op.payload.get("prev")
        prev_t = tuple(p for p in prev if isinstance(p, str)) if isinstance(prev, list) else ()
        self._prev[op.id] = prev_t
        for t in registry.touched(op):
            heads = self.user_heads.setdefault(t, set())
            heads.difference_update(prev_t)
            heads.add(op.id)
            for other in self._intents.get(t, []):
                kind = registry.CONFLICTS.get((min(other.op, op.op), max(other.op, op.op)))
                if kind and not self._reaches(op.id, other.id):
                    self.state.conflicts.append(
                        Conflict(target=t, ops=(other.id, op.id), kind=kind, winner=op.id))
            if op.op in registry.INTENTS:
                self._intents.setdefault(t, []).append(op)

    def _reaches(self, start: str, goal: str) -> bool:
        stack, seen = [start], set()
        while stack:
            cur = stack.pop()
            if cur == goal:
                return True
            if cur in seen:
                continue
            seen.add(cur)
            stack.extend(self._prev.get(cur, ()))
        return False

    # ------------------------------------------------------------- helpers
    def wi(self, raw_id: object) -> WorkItemState | None:
        """The WorkItem an op names (through merges); None for an unknown id or a non-string."""
        if not raw_id or not isinstance(raw_id, str):
            return None
        return self.state.workitems.get(self.state.survivor(raw_id))

    def touch_wi(self, wi: WorkItemState, op: Op) -> None:
        self.mark(wi.id)
        wi.updated_lamport = op.lamport
        wi.updated_ts = op.ts
        wi.ops = (*wi.ops, op.id)
        self.dirty_workitems.add(wi.id)

    def mark(self, wid: object) -> None:
        """`wid`'s derived fields need recomputing at the next finish()."""
        if wid and isinstance(wid, str) and self._derive is not None:
            self._derive.add(self.state.survivor(wid))

    def touch_mem(self, mem: MemoryState, op: Op) -> None:
        self.mark(mem.workitem)
        mem.updated_lamport = op.lamport
        mem.ops = (*mem.ops, op.id)
        self.dirty_memories.add(mem.id)

    def warn(self, op: Op, text: str) -> None:
        self.state.warnings.append(f"op {op.id[:10]} ({op.op}): {text}")

    def observe(self, wid: str, op: Op) -> None:
        """Merge the op's per-session observations into the WorkItem's (system ops only)."""
        raw = op.payload.get("observe")
        sessions = raw.get("sessions") if isinstance(raw, dict) else None
        if op.is_user or not isinstance(sessions, list):
            return
        per = self.state.observations.setdefault(wid, {})
        for item in sessions:
            o = derive.clean(item)
            if o is not None:
                key = f"{o['agent']}:{o['id']}"
                per[key] = derive.merge(per.get(key), o)

    def pin(self, wi: WorkItemState, title: str) -> None:
        """A person chose this title: no system op changes it again."""
        wi.pinned_title = True
        self.state.constraints.pinned_titles[wi.id] = title
