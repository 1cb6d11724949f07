"""What each correction verb writes: its checks, its op draft and the line that reports it
(merge, split, rename, false-positive, promote, reject, undo). Pure: nothing is read or written
here; the caller resolves the references and appends the draft."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from looma_git.errors import AmbiguousError, NotFoundError, UsageError
from looma_git.ledger.fold import effective_ops
from looma_git.ledger.ops import Op, OpDraft

MAX_TITLE = 200  # characters; a title is one line
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


class Item(Protocol):
    """The WorkItem a correction names, as the read path resolved it."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def files(self) -> tuple[str, ...]: ...
    @property
    def sessions(self) -> tuple[tuple[str, str], ...]: ...


@dataclass(frozen=True)
class Draft:
    """One correction before it is written: the op, what it acts on, and how to say it."""

    op: OpDraft
    target: str  # the id shown as the correction's target
    summary: str


def check_title(title: str) -> str:
    """A WorkItem title: one line, not empty, at most MAX_TITLE characters (trimmed)."""
    clean = title.strip()
    if not clean:
        raise UsageError("the title is empty")
    if any(ch in clean for ch in _BREAKS):
        raise UsageError("a title is one line: it contains a line break")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in clean):
        raise UsageError("the title contains control characters")
    if len(clean) > MAX_TITLE:
        raise UsageError(f"the title is {len(clean)} characters long (at most {MAX_TITLE})",
                         hint="put the detail in --rationale")
    return clean


def _draft(op: str, target: dict[str, Any], payload: dict[str, Any], rationale: str | None,
           shown: str, summary: str, inverse_of: str | None = None) -> Draft:
    return Draft(OpDraft(op=op, target=target, payload=payload, rationale=rationale,
                         inverse_of=inverse_of), shown, summary)


def merge(a: Item, b: Item, rationale: str | None) -> Draft:
    """Fuse A into B (B is canonical); MUST_LINK(A, B)."""
    if a.id == b.id:
        raise UsageError(f"cannot merge {a.id} ({a.title!r}) with itself")
    return _draft("workitem.merge", {"type": "workitem", "id": b.id}, {"from": [a.id]},
                  rationale, b.id, f"merged {a.title!r} into {b.title!r}")


def _match_session(item: Item, token: str) -> tuple[str, str]:
    hits = [(a, s) for a, s in item.sessions
            if s.startswith(token) or f"{a}:{s}".startswith(token)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise NotFoundError(f"{item.id} has no session matching {token!r}",
                            hint="sessions: " + ", ".join(f"{a}:{s}" for a, s in item.sessions))
    raise AmbiguousError(f"{token!r} matches {len(hits)} sessions",
                         matches=[f"{a}:{s}" for a, s in hits])


def _part(item: Item, title: str, members: list[str], by: str, seen: set[str]
          ) -> dict[str, Any]:
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
        return {"title": title.strip(), "sessions": [{"agent": a, "id": s} for a, s in chosen],
                "files": []}
    unknown = [f for f in members if f not in item.files]
    if unknown:
        raise NotFoundError(f"{item.id} has no file {unknown[0]!r}",
                            hint="files: " + ", ".join(item.files))
    if set(members) & seen:
        raise UsageError("a file is in two parts")
    seen |= set(members)
    return {"title": title.strip(), "sessions": [], "files": sorted(members)}


def split(item: Item, titles: Sequence[str], parts: Sequence[list[str]], by: str,
          rationale: str | None) -> Draft:
    """Partition W into parts (by sessions or files); CANNOT_LINK between the parts."""
    if by not in ("sessions", "files"):
        raise UsageError("--by must be 'sessions' or 'files'")
    if len(titles) < 2:
        raise UsageError("a split needs at least two titles (--into \"T1\",\"T2\")")
    if len(parts) != len(titles):
        raise UsageError(f"{len(titles)} titles but {len(parts)} parts were given")
    seen: set[str] = set()
    payload_parts = [_part(item, t, m, by, seen) for t, m in zip(titles, parts, strict=True)]
    return _draft("workitem.split", {"type": "workitem", "id": item.id},
                  {"parts": payload_parts, "by": by}, rationale, item.id,
                  f"split {item.title!r} into " + ", ".join(repr(t) for t in titles))


def rename(item: Item, title: str, rationale: str | None) -> Draft:
    """Set the title and pin it: no automated pass changes it again."""
    title = check_title(title)
    return _draft("workitem.rename", {"type": "workitem", "id": item.id}, {"title": title},
                  rationale, item.id, f"renamed {item.title!r} to {title!r}")


def false_positive(kind: str, node_id: str, label: str, rationale: str | None) -> Draft:
    """Remove a node from the graph; it is quarantined on every rebuild."""
    return _draft("node.false_positive", {"type": kind, "id": node_id}, {}, rationale, node_id,
                  f"marked {label!r} a false positive")


def promote(kind: str, node_id: str, label: str, local: dict[str, Any],
            rationale: str | None) -> Draft:
    """Force-promote a candidate (confidence pinned to 1.0). `local`: the last pass's row of
    an unpromoted WorkItem or memory (what the promotion writes into the ledger)."""
    if kind == "candidate":
        w = local
        create = {"title": w.get("title", label), "kind": w.get("kind", "feature"),
                  "status": "active", "summary": w.get("summary", ""),
                  "files": list(w.get("files", [])), "aliases": list(w.get("aliases", [])),
                  "branch": w.get("branch"), "confidence": 1.0, "band": "high",
                  "sessions": [{"agent": a, "id": s} for a, s in w.get("sessions", [])],
                  "local_id": node_id}
        return _draft("workitem.create", {"type": "workitem", "id": None}, create, rationale,
                      node_id, f"promoted {label!r}")
    summary = f"promoted {label!r} (confidence 1.0)"
    if kind == "memory-candidate":
        m = local
        payload = {"kind": m.get("kind"), "text": m.get("text"), "workitem": None,
                   "evidence": [{k: e.get(k) for k in ("quote", "agent", "session", "event",
                                                       "hash")} for e in m.get("evidence", [])]}
        return _draft("memory.promote", {"type": "memory", "id": None}, payload, rationale,
                      node_id, summary)
    return _draft("memory.promote", {"type": kind, "id": node_id}, {}, rationale, node_id,
                  summary)


def reject(kind: str, node_id: str, label: str, rationale: str | None) -> Draft:
    """Force-reject a candidate (confidence pinned to 0.0)."""
    if kind in ("workitem", "candidate"):
        return _draft("node.false_positive", {"type": kind, "id": node_id}, {}, rationale,
                      node_id, f"rejected {label!r}")
    return _draft("memory.reject", {"type": "memory", "id": node_id}, {}, rationale, node_id,
                  f"rejected {label!r} (confidence 0.0)")


def undo(op: Op, ops: Iterable[Op], rationale: str | None) -> Draft:
    """The inverse op of `op` (one of `ops`, the whole ledger); undoing an undo restores."""
    ops = list(ops)
    if op.id not in {o.id for o in effective_ops(ops)}:
        undoers = [o.id[:10] for o in ops if o.op == "undo" and o.inverse_of == op.id]
        raise UsageError(
            f"{op.op} {op.id[:10]} is already undone",
            hint=(f"to restore it, undo the undo: looma correct undo {undoers[-1]}"
                  if undoers else "nothing to undo"))
    # Undoing a merge says its WorkItems are not one: no system merge joins them again.
    joined = op.payload.get("from") if op.op == "workitem.merge" else None
    payload = {"apart": sorted({op.target.id, *(a for a in joined if isinstance(a, str))})} \
        if isinstance(joined, list) and op.target.id else {}
    return _draft("undo", {"type": "op", "id": op.id}, payload, rationale, op.id,
                  f"undid {op.op} {op.id[:10]}", inverse_of=op.id)
