"""Library surface of human corrections: merge, split, rename, false-positive, promote,
reject, undo, and blame. Each resolves its references, takes its op draft from
ledger/corrections.py and appends it as a user op; errors write nothing. `actor_name` records
a different user-side actor name (the MCP client acting for the git user)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from looma_git.errors import AmbiguousError, UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.ledger import corrections
from looma_git.ledger.corrections import check_title
from looma_git.retrieval.records import ItemRecord
from looma_git.wire.ledger import CorrectionOut

if TYPE_CHECKING:
    from looma_git.wire.ledger import BlameOut

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


def _write(paths: RepoPaths, d: corrections.Draft, actor_name: str | None) -> CorrectionOut:
    """Append the draft as one user op; the correction it became."""
    from looma_git.api import ledger

    require_identity(paths)
    op_id = str(ledger.append(paths, [d.op], actor="user", actor_name=actor_name)[0].id)
    return CorrectionOut(op_id=op_id, op=d.op.op, target=d.target, summary=d.summary,
                         undo=f"looma correct undo {op_id[:10]}")


def _wi(paths: RepoPaths, ref: str) -> ItemRecord:
    from looma_git.api.query import resolve_workitem

    return resolve_workitem(paths, ref)


def merge(paths: RepoPaths, a_ref: str, b_ref: str, *, rationale: str | None = None,
          actor_name: str | None = None) -> CorrectionOut:
    """Fuse A into B (B is canonical); MUST_LINK(A, B)."""
    return _write(paths, corrections.merge(_wi(paths, a_ref), _wi(paths, b_ref), rationale),
                  actor_name)


def split_options(paths: RepoPaths, ref: str) -> ItemRecord:
    """The WorkItem to split, for the interactive partition chooser."""
    return _wi(paths, ref)


def split(paths: RepoPaths, ref: str, titles: list[str], parts: list[list[str]], *,
          by: str = "sessions", rationale: str | None = None,
          actor_name: str | None = None) -> CorrectionOut:
    """Partition W into parts (by sessions or files); CANNOT_LINK between the parts. The
    parts' files, commits and confidence are recomputed at once where the transcripts are
    (a correction changes state now, not at the next reprocess)."""
    out = _write(paths, corrections.split(_wi(paths, ref), titles, parts, by, rationale),
                 actor_name)
    if paths.store_db.exists():
        from looma_git.api.refine import refine_and_publish

        refine_and_publish(paths, by="backfill")
    return out


def rename(paths: RepoPaths, ref: str, title: str, *, rationale: str | None = None,
           actor_name: str | None = None) -> CorrectionOut:
    """Set the title and pin it: no automated pass changes it again."""
    check_title(title)  # a bad title is refused before the reference is looked up
    return _write(paths, corrections.rename(_wi(paths, ref), title, rationale), actor_name)


def _node(paths: RepoPaths, ref: str) -> tuple[str, str, str]:
    """(type, id, label) of a WorkItem, memory or local candidate by id (prefix) or WorkItem
    letter/title; type is workitem, memory, candidate or memory-candidate."""
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
    from looma_git.index.reads import local_rows

    out = {wid: ("candidate", str(w.get("title", "")))
           for wid, w, promoted in local_rows(paths, "refine_workitems") if not promoted}
    out.update((mid, ("memory-candidate", str(m.get("text", ""))[:60]))
               for mid, m, promoted in local_rows(paths, "refine_memories") if not promoted)
    return out


def false_positive(paths: RepoPaths, ref: str, *, rationale: str | None = None,
                   actor_name: str | None = None) -> CorrectionOut:
    """Remove a node from the graph; it is quarantined on every rebuild."""
    return _write(paths, corrections.false_positive(*_node(paths, ref), rationale), actor_name)


def promote(paths: RepoPaths, ref: str, *, rationale: str | None = None,
            actor_name: str | None = None) -> CorrectionOut:
    """Force-promote a candidate (confidence pinned to 1.0)."""
    from looma_git.index.reads import local_rows

    kind, node_id, label = _node(paths, ref)
    table = {"candidate": "refine_workitems", "memory-candidate": "refine_memories"}.get(kind)
    local = next((d for nid, d, _ in local_rows(paths, table) if nid == node_id), {}) \
        if table else {}
    return _write(paths, corrections.promote(kind, node_id, label, local, rationale),
                  actor_name)


def reject(paths: RepoPaths, ref: str, *, rationale: str | None = None,
           actor_name: str | None = None) -> CorrectionOut:
    """Force-reject a candidate (confidence pinned to 0.0)."""
    return _write(paths, corrections.reject(*_node(paths, ref), rationale), actor_name)


def undo(paths: RepoPaths, op_ref: str, *, rationale: str | None = None,
         actor_name: str | None = None) -> CorrectionOut:
    """Write the inverse op; undoing an undo restores."""
    from looma_git.api import ledger

    return _write(paths, corrections.undo(ledger.resolve_op(paths, op_ref), ledger.log(paths),
                                          rationale), actor_name)


def blame(paths: RepoPaths, ref: str) -> BlameOut:
    """Which ops shaped this WorkItem: who, when, why (oldest first)."""
    from looma_git.ledger.history import shaping_ops
    from looma_git.store.ledger_ref import LedgerStore
    from looma_git.wire.ledger import ActorOut, BlameOpOut, BlameOut

    item = _wi(paths, ref)
    store = LedgerStore(paths)
    return BlameOut(ops=[
        BlameOpOut(id=op.id, op=op.op, ts=op.ts, lamport=op.lamport,
                   actor=ActorOut.model_validate(op.actor.as_dict()),
                   rationale=op.rationale, target=op.target.id)
        for op in shaping_ops(store.read().ops, store.state(), item.id)])
