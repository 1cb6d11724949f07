"""How memory and commit-link ops change the fold's state (a mixin of `fold.Folder`)."""

from __future__ import annotations

from typing import Any

from looma_git.ledger.canonical import derived_id
from looma_git.ledger.ops import Op
from looma_git.ledger.state import LedgerState, LinkState, MemoryState, WorkItemState

_MEM_FIELDS = ("kind", "text", "workitem", "confidence", "band", "features", "lifecycle",
               "superseded_by", "evidence", "said_at")


def _sorted_unique(items: Any) -> tuple[str, ...]:
    return tuple(sorted({i for i in items if isinstance(i, str)}))


class NodeFolding:
    """memory.promote/reject/update and commit.link/unlink/rewrite; `Folder` supplies the
    state and the shared helpers declared here."""

    state: LedgerState
    links_dirty: bool

    def _wi(self, raw_id: str | None) -> WorkItemState | None:
        raise NotImplementedError

    def _touch_mem(self, mem: MemoryState, op: Op) -> None:
        raise NotImplementedError

    def _mark(self, wid: str | None) -> None:
        raise NotImplementedError

    def _warn(self, op: Op, text: str) -> None:
        raise NotImplementedError

    @staticmethod
    def _set_fields(obj: Any, payload: dict[str, Any], names: tuple[str, ...],
                    skip: set[str]) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------- memories
    def _memory_promote(self, op: Op) -> None:
        mid = op.target.id or op.created_id() or derived_id("mem_", op.id)
        cons = self.state.constraints
        mem = self.state.memories.get(mid)
        if op.is_user:
            cons.forced[mid] = "promote"
            cons.false_positives.discard(mid)
            if mem is None:
                mem = MemoryState(id=mid, created_lamport=op.lamport)
                self.state.memories[mid] = mem
            self._set_fields(mem, op.payload, _MEM_FIELDS, set())
            mem.forced, mem.confidence, mem.band, mem.false_positive = "promote", 1.0, "high", False
        else:
            if mid in cons.false_positives or cons.forced.get(mid) == "reject":
                return
            if mem is None:
                mem = MemoryState(id=mid, created_lamport=op.lamport)
                self.state.memories[mid] = mem
            skip = {"confidence", "band"} if mem.forced else set()
            self._set_fields(mem, op.payload, _MEM_FIELDS, skip)
        self._touch_mem(mem, op)

    def _memory_reject(self, op: Op) -> None:
        mid = op.target.id
        if not mid:
            return
        mem = self.state.memories.get(mid)
        if op.is_user:
            self.state.constraints.forced[mid] = "reject"
            if mem is not None:
                mem.forced, mem.confidence, mem.band = "reject", 0.0, "none"
        elif mem is not None and not mem.forced:
            mem.confidence, mem.band = 0.0, "none"
        if mem is not None:
            self._touch_mem(mem, op)

    def _memory_update(self, op: Op) -> None:
        mem = self.state.memories.get(op.target.id or "")
        if mem is None:
            self._warn(op, f"update of unknown memory {op.target.id}")
            return
        if not op.is_user and mem.false_positive:
            return
        skip = {"confidence", "band"} if (mem.forced and not op.is_user) else set()
        self._set_fields(mem, op.payload, _MEM_FIELDS, skip)
        self._touch_mem(mem, op)

    # ------------------------------------------------------------- commits
    def _commit_link(self, op: Op) -> None:
        st = self.state
        raw_sha = op.target.id
        wi = self._wi(op.payload.get("workitem"))
        if not raw_sha or wi is None:
            self._warn(op, "link to an unknown WorkItem or without a commit")
            return
        sha = st.resolve_sha(raw_sha)
        key = (sha, wi.id)
        if op.is_user:
            st.constraints.unlinked.discard(key)
        else:
            if key in st.constraints.unlinked or wi.false_positive:
                return
            existing = st.links.get(key)
            if existing is not None and existing.user:
                return
        p = op.payload
        conf = p.get("confidence", 1.0 if op.is_user else 0.0)
        st.links[key] = LinkState(
            sha=sha, workitem=wi.id,
            confidence=float(conf) if isinstance(conf, (int, float)) else 0.0,
            by=p.get("by") or ("user" if op.is_user else "hook"),
            patch_id=p.get("patch_id"), files=_sorted_unique(p.get("files") or []),
            branch=p.get("branch"), why=p.get("why"), user=op.is_user, op=op.id,
            subject=str(p.get("subject") or "") if isinstance(p.get("subject"), str) else "",
            ts=str(p.get("ts") or "") if isinstance(p.get("ts"), str) else "")
        self._mark(wi.id)
        self.links_dirty = True

    def _commit_unlink(self, op: Op) -> None:
        st = self.state
        wi = self._wi(op.payload.get("workitem"))
        if not op.target.id or wi is None:
            self._warn(op, "unlink of an unknown WorkItem or without a commit")
            return
        key = (st.resolve_sha(op.target.id), wi.id)
        existing = st.links.get(key)
        if op.is_user:
            st.constraints.unlinked.add(key)
        elif existing is not None and existing.user:
            return
        if existing is not None:
            del st.links[key]
            self._mark(wi.id)
            self.links_dirty = True

    def _commit_rewrite(self, op: Op) -> None:
        st = self.state
        old, new = op.payload.get("old") or op.target.id, op.payload.get("new")
        if not isinstance(old, str) or not isinstance(new, str) or old == new:
            self._warn(op, "rewrite without old/new shas")
            return
        st.rewrites[old] = new
        for key in [k for k in st.links if k[0] == old]:
            self._mark(key[1])
            link = st.links.pop(key)
            if (new, key[1]) not in st.links:
                link.sha = new
                st.links[(new, key[1])] = link
        for pair in [u for u in st.constraints.unlinked if u[0] == old]:
            st.constraints.unlinked.discard(pair)
            st.constraints.unlinked.add((new, pair[1]))
        self.links_dirty = True
