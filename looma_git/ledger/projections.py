"""Pure projections of LedgerState: workitems/*.yaml, memories/*.yaml and commit note texts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, fields
from typing import Any

from looma_git.ledger import yamlio
from looma_git.ledger.state import LedgerState, LinkState, MemoryState, WorkItemState

NOTE_HEADER = "# looma-note v1\n"
FORMAT_FILE = b"looma_ledger: 1\n"


def workitem_doc(wi: WorkItemState) -> dict[str, Any]:
    """The projection mapping of one WorkItem (stable key order)."""
    data = asdict(wi)
    for name in _FOLD_ONLY:
        del data[name]
    data["files"], data["aliases"] = list(wi.files), list(wi.aliases)
    data["evidence"], data["sessions"] = list(wi.evidence), list(wi.sessions)
    data["split_into"], data["ops"] = list(wi.split_into), list(wi.ops)
    return data


def memory_doc(mem: MemoryState) -> dict[str, Any]:
    data = asdict(mem)
    data["evidence"], data["ops"] = list(mem.evidence), list(mem.ops)
    return data


# The emitter renders tuples as lists and only reads what it is given, so the hot path below
# hands it the fields directly instead of `asdict`'s deep copy (same bytes, tested against it).
# Fold bookkeeping that is not part of the on-git format (docs/format.md).
_FOLD_ONLY = ("op_title", "op_last_active")
_WI_FIELDS = tuple(f.name for f in fields(WorkItemState) if f.name not in _FOLD_ONLY)
_MEM_FIELDS = tuple(f.name for f in fields(MemoryState))


def workitem_bytes(wi: WorkItemState) -> bytes:
    """workitems/<id>.yaml: `workitem_doc` emitted."""
    return yamlio.dump({name: getattr(wi, name) for name in _WI_FIELDS})


def memory_bytes(mem: MemoryState) -> bytes:
    """memories/<id>.yaml: `memory_doc` emitted."""
    return yamlio.dump({name: getattr(mem, name) for name in _MEM_FIELDS})


def projection_files(state: LedgerState) -> dict[str, bytes]:
    """Every projection file path -> bytes (format.yaml included)."""
    files = {"format.yaml": FORMAT_FILE}
    for wid, wi in state.workitems.items():
        files[f"workitems/{wid}.yaml"] = workitem_bytes(wi)
    for mid, mem in state.memories.items():
        files[f"memories/{mid}.yaml"] = memory_bytes(mem)
    return files


def note_line(link: LinkState) -> str:
    """One link as a one-line flow mapping (so `cat_sort_uniq` merges stay valid YAML)."""
    item: dict[str, Any] = {"workitem": link.workitem, "title": link.title,
                            "confidence": round(link.confidence, 4), "by": link.by}
    if link.files:
        item["files"] = list(link.files)
    if link.branch:
        item["branch"] = link.branch
    if link.patch_id:
        item["patch_id"] = link.patch_id
    # Key order as in DESIGN §2.2 (workitem first), not sorted: flow() sorts, so build by hand.
    body = ", ".join(f"{k}: {yamlio.flow(v)}" for k, v in item.items())
    return "- {" + body + "}"


def note_texts(state: LedgerState, shas: Iterable[str] | None = None) -> dict[str, bytes]:
    """sha -> note blob for every commit with at least one live link (of these commits only,
    when `shas` is given: rendering every note is what a one-link append must not pay)."""
    lines: dict[str, list[str]] = {}
    if shas is None:
        links = state.live_links()
    else:
        want = set(shas)
        keys = sorted(k for k in state.links if k[0] in want)
        links = [ln for k in keys if (wi := state.workitems.get((ln := state.links[k]).workitem))
                 is not None and wi.live]
    for link in links:
        lines.setdefault(link.sha, []).append(note_line(link))
    return {sha: (NOTE_HEADER + "\n".join(sorted(ls)) + "\n").encode("utf-8")
            for sha, ls in lines.items()}


def parse_note(text: bytes) -> list[dict[str, Any]]:
    """Read a note (ours, or a `cat_sort_uniq` merge of ours) back into link mappings."""
    out: list[dict[str, Any]] = []
    for raw in text.decode("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line.startswith("- {"):
            continue
        doc = yamlio.load(("x:\n" + line + "\n").encode(), what="note", max_bytes=1 << 20)
        items = doc.get("x") if isinstance(doc, dict) else None
        if isinstance(items, list):
            out += [i for i in items if isinstance(i, dict)]
    return out
