"""Library surface of human corrections: merge, split, rename, false-positive, promote,
reject, undo, and blame. Each is a user op; errors write nothing. `actor_name` records a
different user-side actor name (the MCP client acting for the git user)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from looma_git.errors import AmbiguousError, NotFoundError, UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.retrieval.records import ItemRecord

if TYPE_CHECKING:
    from looma_git.wire.ledger import BlameOut


@dataclass(frozen=True)
class Correction:
    """The op a correction wrote."""

    op_id: str
    op: str
    target: str
    summary: str


MAX_TITLE = 200  # characters; a title is one line


def require_identity(paths: RepoPaths) -> None:
    """A correction is attributed to a person: refuse it without a git identity (user.name
    and user.email), instead of recording `unknown`."""
    from looma_git.store.clone import user_actor

    actor = user_actor(paths)
    if actor.name == "unknown" or actor.email == "unknown@localhost":
        raise UsageError(
            "no git identity: a correction is recorded under your name, and git has none here",
            hint='git config --global user.name "Your Name" && '
                 'git config --global user.email you@example.com')


def check_title(title: str) -> str:
    """A WorkItem title: one line, not empty, at most MAX_TITLE characters (trimmed)."""
    clean = title.strip()
    if not clean:
        raise UsageError("the title is empty")
    if any(ch in clean for ch in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        raise UsageError("a title is one line: it contains a line break")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in clean):
        raise UsageError("the title contains control characters")
    if len(clean) > MAX_TITLE:
        raise UsageError(f"the title is {len(clean)} characters long (at most {MAX_TITLE})",
                         hint="put the detail in --rationale")
    return clean


def _append(paths: RepoPaths, op: str, target: dict[str, Any], payload: dict[str, Any],
            rationale: str | None, inverse_of: str | None = None,
            actor_name: str | None = None) -> str:
    from looma_git.api import ledger
    from looma_git.ledger.ops import OpDraft

    require_identity(paths)

    ops = ledger.append(paths, [OpDraft(op=op, target=target, payload=payload,
                                        rationale=rationale, inverse_of=inverse_of)],
                        actor="user", actor_name=actor_name)
    return str(ops[0].id)


def _wi(paths: RepoPaths, ref: str) -> ItemRecord:
    from looma_git.api.query import resolve_workitem

    return resolve_workitem(paths, ref)


def merge(paths: RepoPaths, a_ref: str, b_ref: str, *, rationale: str | None = None,
          actor_name: str | None = None) -> Correction:
    """Fuse A into B (B is canonical); MUST_LINK(A, B)."""
    a, b = _wi(paths, a_ref), _wi(paths, b_ref)
    if a.id == b.id:
        raise UsageError(f"cannot merge {a.id} ({a.title!r}) with itself")
    op_id = _append(paths, "workitem.merge", {"type": "workitem", "id": b.id},
                    {"from": [a.id]}, rationale, actor_name=actor_name)
    return Correction(op_id, "workitem.merge", b.id, f"merged {a.title!r} into {b.title!r}")


def split_options(paths: RepoPaths, ref: str) -> ItemRecord:
    """The WorkItem to split, for the interactive partition chooser."""
    return _wi(paths, ref)


def _match_session(item: ItemRecord, token: str) -> tuple[str, str]:
    hits = [(a, s) for a, s in item.sessions
            if s.startswith(token) or f"{a}:{s}".startswith(token)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise NotFoundError(f"{item.id} has no session matching {token!r}",
                            hint="sessions: " + ", ".join(f"{a}:{s}" for a, s in item.sessions))
    raise AmbiguousError(f"{token!r} matches {len(hits)} sessions",
                         matches=[f"{a}:{s}" for a, s in hits])


def split(paths: RepoPaths, ref: str, titles: list[str], parts: list[list[str]], *,
          by: str = "sessions", rationale: str | None = None,
          actor_name: str | None = None) -> Correction:
    """Partition W into parts (by sessions or files); CANNOT_LINK between the parts."""
    item = _wi(paths, ref)
    if by not in ("sessions", "files"):
        raise UsageError("--by must be 'sessions' or 'files'")
    if len(titles) < 2:
        raise UsageError("a split needs at least two titles (--into \"T1\",\"T2\")")
    if len(parts) != len(titles):
        raise UsageError(f"{len(titles)} titles but {len(parts)} parts were given")
    payload_parts = []
    seen: set[str] = set()
    for title, members in zip(titles, parts, strict=True):
        check_title(title)
        if not members:
            raise UsageError(f"part {title!r} is empty: every part needs at least one "
                             f"{'session' if by == 'sessions' else 'file'}")
        if by == "sessions":
            chosen = [_match_session(item, m) for m in members]
            keys = {f"{a}:{s}" for a, s in chosen}
            if keys & seen:
                raise UsageError("a session is in two parts")
            seen |= keys
            payload_parts.append({"title": title.strip(),
                                  "sessions": [{"agent": a, "id": s} for a, s in chosen],
                                  "files": []})
        else:
            unknown = [f for f in members if f not in item.files]
            if unknown:
                raise NotFoundError(f"{item.id} has no file {unknown[0]!r}",
                                    hint="files: " + ", ".join(item.files))
            if set(members) & seen:
                raise UsageError("a file is in two parts")
            seen |= set(members)
            payload_parts.append({"title": title.strip(), "sessions": [],
                                  "files": sorted(members)})
    op_id = _append(paths, "workitem.split", {"type": "workitem", "id": item.id},
                    {"parts": payload_parts, "by": by}, rationale, actor_name=actor_name)
    _refresh_after(paths)
    return Correction(op_id, "workitem.split", item.id,
                      f"split {item.title!r} into " + ", ".join(repr(t) for t in titles))


def _refresh_after(paths: RepoPaths) -> None:
    """Recompute the parts' files, commits and confidence now (not at the next reprocess):
    a correction changes state at once. Only possible where the transcripts are."""
    if paths.store_db.exists():
        from looma_git.api.refine import refine_and_publish

        refine_and_publish(paths, by="backfill")


def rename(paths: RepoPaths, ref: str, title: str, *, rationale: str | None = None,
           actor_name: str | None = None) -> Correction:
    """Set the title and pin it: no automated pass changes it again."""
    title = check_title(title)
    item = _wi(paths, ref)
    op_id = _append(paths, "workitem.rename", {"type": "workitem", "id": item.id},
                    {"title": title}, rationale, actor_name=actor_name)
    return Correction(op_id, "workitem.rename", item.id, f"renamed {item.title!r} to {title!r}")


def _node(paths: RepoPaths, ref: str) -> tuple[str, str, str]:
    """A WorkItem, memory or local candidate by id (prefix) or WorkItem letter/title."""
    from looma_git.api import ledger

    state = ledger.load_state(paths)
    mems = [m for m in state.memories if m.startswith(ref)]
    if len(mems) == 1:
        return "memory", mems[0], state.memories[mems[0]].text[:60]
    local = _unpromoted_nodes(paths)
    cands = [c for c in local if c.startswith(ref)]
    if len(cands) == 1 and not ref.startswith("wi_"):
        return local[cands[0]][0], cands[0], local[cands[0]][1]
    if len(mems) > 1 or len(cands) > 1:
        raise AmbiguousError(f"{ref!r} matches several items", matches=mems + cands)
    item = _wi(paths, ref)
    return "workitem", item.id, item.title


def _unpromoted_nodes(paths: RepoPaths) -> dict[str, tuple[str, str]]:
    """Unpromoted WorkItems and memories of the last refinery pass: id -> (type, label)."""
    from looma_git.api.refine import local_graph

    out = {wid: ("candidate", str(w.get("title", "")))
           for wid, w, promoted in local_graph(paths) if not promoted}
    out.update((mid, ("memory-candidate", str(m.get("text", ""))[:60]))
               for mid, m, promoted in local_graph(paths, "refine_memories") if not promoted)
    return out


def false_positive(paths: RepoPaths, ref: str, *, rationale: str | None = None,
                   actor_name: str | None = None) -> Correction:
    """Remove a node from the graph; it is quarantined on every rebuild."""
    kind, node_id, label = _node(paths, ref)
    op_id = _append(paths, "node.false_positive", {"type": kind, "id": node_id}, {}, rationale,
                    actor_name=actor_name)
    return Correction(op_id, "node.false_positive", node_id, f"marked {label!r} a false positive")


def _local_payload(paths: RepoPaths, table: str, node_id: str) -> dict[str, Any]:
    from looma_git.api.refine import local_graph

    return next((data for nid, data, _ in local_graph(paths, table) if nid == node_id), {})


def promote(paths: RepoPaths, ref: str, *, rationale: str | None = None,
            actor_name: str | None = None) -> Correction:
    """Force-promote a candidate (confidence pinned to 1.0)."""
    kind, node_id, label = _node(paths, ref)
    if kind == "candidate":
        w = _local_payload(paths, "refine_workitems", node_id)
        create = {"title": w.get("title", label), "kind": w.get("kind", "feature"),
                   "status": "active", "summary": w.get("summary", ""),
                   "files": list(w.get("files", [])), "aliases": list(w.get("aliases", [])),
                   "branch": w.get("branch"), "confidence": 1.0, "band": "high",
                   "sessions": [{"agent": a, "id": s} for a, s in w.get("sessions", [])],
                   "local_id": node_id}
        op_id = _append(paths, "workitem.create", {"type": "workitem", "id": None}, create,
                        rationale, actor_name=actor_name)
        return Correction(op_id, "workitem.create", node_id, f"promoted {label!r}")
    payload: dict[str, Any] = {}
    if kind == "memory-candidate":
        m = _local_payload(paths, "refine_memories", node_id)
        payload = {"kind": m.get("kind"), "text": m.get("text"), "workitem": None,
                   "evidence": [{k: e.get(k) for k in ("quote", "agent", "session", "event",
                                                       "hash")} for e in m.get("evidence", [])]}
        op_id = _append(paths, "memory.promote", {"type": "memory", "id": None}, payload,
                        rationale, actor_name=actor_name)
    else:
        op_id = _append(paths, "memory.promote", {"type": kind, "id": node_id}, payload,
                        rationale, actor_name=actor_name)
    return Correction(op_id, "memory.promote", node_id, f"promoted {label!r} (confidence 1.0)")


def reject(paths: RepoPaths, ref: str, *, rationale: str | None = None,
           actor_name: str | None = None) -> Correction:
    """Force-reject a candidate (confidence pinned to 0.0)."""
    kind, node_id, label = _node(paths, ref)
    if kind in ("workitem", "candidate"):
        op_id = _append(paths, "node.false_positive", {"type": kind, "id": node_id}, {},
                        rationale, actor_name=actor_name)
        return Correction(op_id, "node.false_positive", node_id, f"rejected {label!r}")
    op_id = _append(paths, "memory.reject", {"type": "memory", "id": node_id}, {}, rationale,
                    actor_name=actor_name)
    return Correction(op_id, "memory.reject", node_id, f"rejected {label!r} (confidence 0.0)")


def undo(paths: RepoPaths, op_ref: str, *, rationale: str | None = None,
         actor_name: str | None = None) -> Correction:
    """Write the inverse op; undoing an undo restores."""
    from looma_git.api import ledger
    from looma_git.ledger.fold import effective_ops

    op = ledger.resolve_op(paths, op_ref)
    ops = ledger.log(paths)
    if op.id not in {o.id for o in effective_ops(ops)}:
        undoers = [o.id[:10] for o in ops if o.op == "undo" and o.inverse_of == op.id]
        raise UsageError(
            f"{op.op} {op.id[:10]} is already undone",
            hint=(f"to restore it, undo the undo: looma correct undo {undoers[-1]}"
                  if undoers else "nothing to undo"))
    op_id = _append(paths, "undo", {"type": "op", "id": op.id}, {}, rationale,
                    inverse_of=op.id, actor_name=actor_name)
    return Correction(op_id, "undo", op.id, f"undid {op.op} {op.id[:10]}")


def blame(paths: RepoPaths, ref: str) -> BlameOut:
    """Which ops shaped this WorkItem: who, when, why (oldest first)."""
    from looma_git.ledger.history import shaping_ops
    from looma_git.store.ledger_ref import LedgerStore
    from looma_git.wire.ledger import ActorOut, BlameOpOut, BlameOut

    item = _wi(paths, ref)
    store = LedgerStore(paths)
    return BlameOut(ops=[
        BlameOpOut(id=op.id, op=op.op, ts=op.ts, lamport=op.lamport,
                   actor=ActorOut.model_validate(op.actor.model_dump()),
                   rationale=op.rationale, target=op.target.id)
        for op in shaping_ops(store.read().ops, store.state(), item.id)])
