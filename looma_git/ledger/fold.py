"""Folding ops in (lamport, id) order into LedgerState; user ops always outrank system ops."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from looma_git.ledger import derive
from looma_git.ledger.canonical import canonical_json, derived_id
from looma_git.ledger.fold_nodes import NodeFolding, _sorted_unique
from looma_git.ledger.ops import Op
from looma_git.ledger.state import (
    Conflict,
    LedgerState,
    MemoryState,
    WorkItemState,
)

_WI_FIELDS = ("title", "kind", "status", "summary", "files", "aliases", "branch", "confidence",
              "band", "features", "evidence", "sessions", "last_active")
_CONFLICT_KINDS = {("workitem.rename", "workitem.rename"): "rename",
                   ("workitem.merge", "workitem.split"): "merge_split",
                   ("workitem.split", "workitem.split"): "split"}


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


def _union_dicts(a: Iterable[dict[str, Any]], b: Iterable[dict[str, Any]]) -> tuple[dict, ...]:
    seen: dict[bytes, dict[str, Any]] = {}
    for item in [*a, *b]:
        if isinstance(item, dict):
            seen.setdefault(canonical_json(item), item)
    return tuple(seen[k] for k in sorted(seen))


def _touched(op: Op) -> list[str]:
    ids = [op.target.id] if op.target.id else []
    if op.op == "workitem.merge":
        ids += [a for a in op.payload.get("from", []) if isinstance(a, str)]
    return ids


class Folder(NodeFolding):
    """Applies effective ops in order; reusable incrementally for ops that sort after the last."""

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
        self._user_created: set[str] = set()
        self._derive: set[str] | None = None  # WorkItems to derive at finish (None: all)

    # ------------------------------------------------------------- driver
    def apply(self, ops: Iterable[Op]) -> None:
        """Apply already-effective ops in (lamport, id) order."""
        for op in ops:
            st = self.state
            st.head_lamport = max(st.head_lamport, op.lamport)
            if op.is_user:
                self._track_user(op)
            handler = getattr(self, "_" + op.op.replace(".", "_"), None)
            if handler is not None:
                handler(op)
            self._applied.add(op.id)

    def finish(self) -> LedgerState:
        """Fill derived fields (observed WorkItems, link titles) and return the state."""
        self.dirty_workitems |= derive.derive_all(self.state, self.state.observations,
                                                  self._user_created, only=self._derive)
        self._derive = set()
        wis = self.state.workitems
        for link in self.state.links.values():
            wi = wis.get(link.workitem)
            link.title = wi.title if wi else ""
        return self.state

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
        for t in _touched(op):
            heads = self.user_heads.setdefault(t, set())
            heads.difference_update(prev_t)
            heads.add(op.id)
            for other in self._intents.get(t, []):
                kind = _CONFLICT_KINDS.get(tuple(sorted((other.op, op.op))))  # type: ignore[arg-type]
                if kind and not self._reaches(op.id, other.id):
                    self.state.conflicts.append(
                        Conflict(target=t, ops=(other.id, op.id), kind=kind, winner=op.id))
            if op.op in ("workitem.rename", "workitem.merge", "workitem.split"):
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
    def _wi(self, raw_id: str | None) -> WorkItemState | None:
        if not raw_id:
            return None
        return self.state.workitems.get(self.state.canonical(raw_id))

    def _touch_wi(self, wi: WorkItemState, op: Op) -> None:
        self._mark(wi.id)
        wi.updated_lamport = op.lamport
        wi.updated_ts = op.ts
        wi.ops = (*wi.ops, op.id)
        self.dirty_workitems.add(wi.id)

    def _mark(self, wid: str | None) -> None:
        """`wid`'s derived fields need recomputing at the next finish()."""
        if wid and self._derive is not None:
            self._derive.add(self.state.canonical(wid))

    def _touch_mem(self, mem: MemoryState, op: Op) -> None:
        self._mark(mem.workitem)
        mem.updated_lamport = op.lamport
        mem.ops = (*mem.ops, op.id)
        self.dirty_memories.add(mem.id)

    def _warn(self, op: Op, text: str) -> None:
        self.state.warnings.append(f"op {op.id[:10]} ({op.op}): {text}")

    @staticmethod
    def _set_fields(obj: Any, payload: dict[str, Any], names: tuple[str, ...],
                    skip: set[str]) -> None:
        for name in names:
            if name not in payload or name in skip:
                continue
            value = payload[name]
            if name in ("files", "aliases"):
                value = _sorted_unique(value or [])
            elif name in ("evidence", "sessions"):
                value = _union_dicts((), value or [])
            elif name == "confidence":
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    continue
                value = float(min(1.0, max(0.0, value)))
            elif name == "features":
                value = {k: float(v) for k, v in (value or {}).items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool)}
            setattr(obj, name, value)

    def _observe(self, wid: str, op: Op) -> None:
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

    # ------------------------------------------------------------- workitems
    def _workitem_create(self, op: Op) -> None:
        wid = op.created_id() or derived_id("wi_", op.id)
        if wid in self.state.workitems:
            return
        wi = WorkItemState(id=wid, created_lamport=op.lamport, created_by_op=op.id)
        self._set_fields(wi, op.payload, _WI_FIELDS, set())
        if op.is_user:  # a person created or promoted it: FORCE_PROMOTE, confidence pinned
            wi.forced, wi.confidence, wi.band = "promote", 1.0, "high"
            self.state.constraints.forced[wid] = "promote"
        if wid in self.state.constraints.false_positives:
            wi.false_positive, wi.confidence = True, 0.0
        if op.is_user:
            self._user_created.add(wid)
        self.state.workitems[wid] = wi
        self._observe(wid, op)
        self._touch_wi(wi, op)

    def _workitem_update(self, op: Op) -> None:
        wi = self._wi(op.target.id)
        if wi is None:
            self._warn(op, f"update of unknown WorkItem {op.target.id}")
            return
        skip: set[str] = set()
        if not op.is_user:
            if wi.false_positive or wi.merged_into:
                return
            if wi.pinned_title:
                skip.add("title")
            if wi.forced:
                skip |= {"confidence", "band"}
        self._set_fields(wi, op.payload, _WI_FIELDS, skip)
        if op.is_user and "title" in op.payload and "title" not in skip:
            self._pin(wi, wi.title)
        self._observe(wi.id, op)
        self._touch_wi(wi, op)
        if "title" in op.payload:
            self.links_dirty = True

    def _pin(self, wi: WorkItemState, title: str) -> None:
        wi.pinned_title = True
        self.state.constraints.pinned_titles[wi.id] = title

    def _workitem_rename(self, op: Op) -> None:
        wi = self._wi(op.target.id)
        title = op.payload.get("title")
        if wi is None or not isinstance(title, str):
            self._warn(op, "rename of an unknown WorkItem or without a title")
            return
        if not op.is_user and wi.pinned_title:
            return
        if wi.title and wi.title != title:
            wi.aliases = _sorted_unique([*wi.aliases, wi.title])
        wi.title = title
        if op.is_user:
            self._pin(wi, title)
        self._touch_wi(wi, op)
        self.links_dirty = True

    def _workitem_merge(self, op: Op) -> None:
        b = self._wi(op.target.id)
        if b is None:
            self._warn(op, f"merge into unknown WorkItem {op.target.id}")
            return
        if not op.is_user and b.false_positive:
            return
        for raw in op.payload.get("from", []):
            a = self._wi(raw) if isinstance(raw, str) else None
            if a is None or a.id == b.id:
                continue
            b.sessions = _union_dicts(b.sessions, a.sessions)
            b.files = _sorted_unique([*b.files, *a.files])
            b.aliases = _sorted_unique([*b.aliases, *a.aliases, a.title])
            b.evidence = _union_dicts(b.evidence, a.evidence)
            for key in [k for k in self.state.links if k[1] == a.id]:
                link = self.state.links.pop(key)
                if (key[0], b.id) not in self.state.links:
                    link.workitem = b.id
                    self.state.links[(key[0], b.id)] = link
            a.merged_into = b.id
            self.state.constraints.must_link.add((min(a.id, b.id), max(a.id, b.id)))
            self._touch_wi(a, op)
        b.forced, b.confidence, b.band = "promote", 1.0, "high"
        self.state.constraints.forced[b.id] = "promote"
        self._touch_wi(b, op)
        self.links_dirty = True

    def _workitem_split(self, op: Op) -> None:
        w = self._wi(op.target.id)
        parts = op.payload.get("parts")
        if w is None or not isinstance(parts, list) or not parts:
            self._warn(op, "split of an unknown WorkItem or without parts")
            return
        by = op.payload.get("by", "sessions")
        ids: list[str] = []
        cons = self.state.constraints
        for i, part in enumerate(p for p in parts if isinstance(p, dict)):
            pid = derived_id("wi_", op.id, i)
            sessions = _union_dicts((), part.get("sessions") or [])
            skeys = {(s.get("agent"), s.get("id")) for s in sessions}
            files = _sorted_unique(part.get("files") or [])
            raw_title = part.get("title")
            title = raw_title if isinstance(raw_title, str) else f"{w.title} ({i + 1})"
            p = WorkItemState(
                id=pid, title=title, kind=w.kind, status="active", summary=w.summary,
                files=files, branch=w.branch, confidence=w.confidence, band=w.band,
                evidence=tuple(e for e in w.evidence if (e.get("agent"), e.get("session")) in skeys),
                sessions=sessions, pinned_title=True, split_from=w.id,
                created_lamport=op.lamport, created_by_op=op.id)
            self.state.workitems[pid] = p
            cons.pinned_titles[pid] = title
            cons.partitions[pid] = {"from": w.id, "by": by, "sessions": list(sessions),
                                    "files": list(files)}
            self._touch_wi(p, op)
            ids.append(pid)
        for x in range(len(ids)):
            for y in range(x + 1, len(ids)):
                cons.cannot_link.add((min(ids[x], ids[y]), max(ids[x], ids[y])))
        # Route W's commit links to the part whose files they touch most (ties: first part).
        for key in [k for k in self.state.links if k[1] == w.id]:
            link = self.state.links[key]
            scores = [len(set(link.files) & set(self.state.workitems[p].files)) for p in ids]
            best = max(scores) if scores else 0
            if best > 0:
                target = ids[scores.index(best)]
                del self.state.links[key]
                if (key[0], target) not in self.state.links:
                    link.workitem = target
                    self.state.links[(key[0], target)] = link
        w.status, w.split_into = "abandoned", tuple(ids)
        self._touch_wi(w, op)
        self.links_dirty = True

    def _node_false_positive(self, op: Op) -> None:
        node = op.target.id
        if not node or not op.is_user:
            if node and not op.is_user:  # system FP marks are weaker: only non-forced nodes
                wi = self.state.workitems.get(node)
                if wi is not None and wi.forced != "promote":
                    wi.false_positive, wi.confidence = True, 0.0
                    self._touch_wi(wi, op)
            return
        self.state.constraints.false_positives.add(node)
        wi = self.state.workitems.get(node)
        if wi is not None:
            wi.false_positive, wi.confidence, wi.band = True, 0.0, "none"
            self._touch_wi(wi, op)
            self.links_dirty = True
        mem = self.state.memories.get(node)
        if mem is not None:
            mem.false_positive, mem.confidence, mem.band = True, 0.0, "none"
            self._touch_mem(mem, op)
