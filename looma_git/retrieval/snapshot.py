"""The retrieval records of one ledger head, cached as JSON in the state dir (a rebuildable cache)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from looma_git.retrieval.records import ItemRecord, LinkRecord, MemoryRecord

SNAPSHOT_FILE = "records-snapshot.json"
#: Bump when ItemRecord/MemoryRecord/LinkRecord or `from_ledger` change shape or meaning, or
#: `terms.terms` tokenises differently, so an old snapshot is ignored instead of misread.
SNAPSHOT_FORMAT = 5
MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024
# The saved term sets are used only while the tokeniser still gives this text the same terms
# (a change to `terms.terms` without a format bump re-tokenises instead of mis-ranking).
TERMS_PROBE = "Indexing the OAuth tokens: auth/config.py, it's 3.14 and C++ timeouts"


def _item_to_json(it: ItemRecord) -> dict[str, Any]:
    d: dict[str, Any] = {k: getattr(it, k) for k in ItemRecord.__dataclass_fields__}
    d["commits"] = [[c.sha, c.confidence, c.by] for c in it.commits]
    d["memories"] = [{k: getattr(m, k) for k in MemoryRecord.__dataclass_fields__}
                     for m in it.memories]
    return d


def _item_from_json(d: dict[str, Any]) -> ItemRecord:
    # Built without the dataclasses' __init__ (which sets each field of a frozen instance
    # through object.__setattr__): a fresh resume reads every record of the snapshot, and
    # these classes validate nothing on construction. Same objects, a third of the time.
    new = object.__new__
    mems = []
    for m in d["memories"]:
        mem = new(MemoryRecord)
        m["evidence"] = tuple(m["evidence"])
        mem.__dict__.update(m)
        mems.append(mem)
    d.update(files=tuple(d["files"]), aliases=tuple(d["aliases"]),
             sessions=tuple((a, s) for a, s in d["sessions"]),
             commits=tuple(LinkRecord(sha=c[0], confidence=c[1], by=c[2]) for c in d["commits"]),
             memories=tuple(mems), features=tuple((k, v) for k, v in d["features"]),
             branches=tuple(d["branches"]), prompts=tuple(d["prompts"]))
    if set(d) != _ITEM_FIELDS or any(set(m.__dict__) != _MEMORY_FIELDS for m in mems):
        raise KeyError("snapshot fields do not match the records")  # foreign: fold again
    it = new(ItemRecord)
    it.__dict__.update(d)
    return it


_ITEM_FIELDS = frozenset(ItemRecord.__dataclass_fields__)
_MEMORY_FIELDS = frozenset(MemoryRecord.__dataclass_fields__)


def load(state_dir: Path, head: str) -> list[ItemRecord] | None:
    """The records saved for `head`, or None when absent, stale, foreign or damaged. A
    snapshot `save` wrote for another head is told from its first bytes, not parsed whole
    (after every ledger write: 0.15 CPU-s of a reindex at 5,000 sessions)."""
    try:
        with open(Path(state_dir) / SNAPSHOT_FILE, "rb") as fh:
            lead = _LEAD.match(fh.read(256))
    except OSError:
        return None
    if lead is not None and (int(lead[1]) != SNAPSHOT_FORMAT or lead[2].decode() != head):
        return None
    found = load_any(state_dir)
    return found[1] if found is not None and found[0] == head else None


# How `save` begins a snapshot (its first two keys, compact separators).
_LEAD = re.compile(rb'\{"format":(\d+),"ledger_commit":"([0-9a-zA-Z_.-]*)"')


def load_any(state_dir: Path) -> tuple[str, list[ItemRecord]] | None:
    """(ledger commit, records) of the saved snapshot, whatever head it was saved for."""
    found = load_prior(state_dir)
    return None if found is None else (found[0], found[1])


def load_prior(state_dir: Path) -> tuple[str, list[ItemRecord], dict[str, str]] | None:
    """(ledger commit, records, their fingerprints: `record_patch.fingerprints`) of the saved
    snapshot, whatever head it was saved for."""
    path = Path(state_dir) / SNAPSHOT_FILE
    try:
        if path.stat().st_size > MAX_SNAPSHOT_BYTES:
            return None
        doc = json.loads(path.read_bytes())
        if doc.get("format") != SNAPSHOT_FORMAT or not isinstance(doc.get("ledger_commit"), str):
            return None
        items = [_item_from_json(d) for d in doc["items"]]
        from looma_git.retrieval.terms import prime_terms, terms

        if isinstance(doc.get("terms"), list) and len(doc["terms"]) == len(items) and \
                doc.get("terms_probe") == terms(TERMS_PROBE):
            prime_terms(items, doc["terms"])  # a fresh resume does not tokenise
        fps = doc.get("fingerprints")
        fps = {k: v for k, v in fps.items() if isinstance(v, str)} if isinstance(fps, dict) \
            else {}
        return doc["ledger_commit"], items, fps
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None  # a cache: anything unexpected means "fold the ledger again"


def save(state_dir: Path, head: str, items: list[ItemRecord],
         fingerprints: dict[str, str] | None = None) -> None:
    """Write the snapshot atomically; a failure only costs the next reader a fold.
    `fingerprints` lets the next head's records reuse these (retrieval/record_patch)."""
    state = Path(state_dir)
    path = state / SNAPSHOT_FILE
    tmp = state / f".{SNAPSHOT_FILE}.{os.getpid()}.tmp"
    try:
        state.mkdir(parents=True, exist_ok=True)
        from looma_git.retrieval.terms import item_terms, terms

        tmp.write_text(json.dumps({"format": SNAPSHOT_FORMAT, "ledger_commit": head,
                                   "items": [_item_to_json(it) for it in items],
                                   "terms": [sorted(item_terms(it)) for it in items],
                                   "terms_probe": terms(TERMS_PROBE),
                                   "fingerprints": fingerprints or {}},
                                  separators=(",", ":")))
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        try:
            tmp.unlink()
        except OSError:
            pass
