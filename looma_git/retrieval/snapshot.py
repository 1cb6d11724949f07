"""The retrieval records of one ledger head, cached as a pickle in the state dir (a rebuildable cache)."""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path
from typing import Any

from looma_git.retrieval.records import ItemRecord, MemoryRecord
from looma_git.store.gcpause import paused

# A pickle, not JSON: every new session's ingest loads the prior snapshot (to reuse its
# records) and saves the new one, and a fresh resume loads it; at 5,000 sessions (1,667
# WorkItems, 8 MB as JSON) `json.loads` plus rebuilding the records took 0.31 CPU-s and the
# save 0.28, the pickle 0.07 and 0.13. The file is local state (never in git, never a
# teammate's bytes), like the fold cache and the work-model memo, which are pickles too.
SNAPSHOT_FILE = "records-snapshot.pickle"
#: The JSON snapshot of formats up to 5: removed when a pickle is saved.
_OLD_FILE = "records-snapshot.json"
#: Bump when ItemRecord/MemoryRecord/LinkRecord or `from_ledger` change shape or meaning, or
#: `terms.terms` tokenises differently, so an old snapshot is ignored instead of misread.
SNAPSHOT_FORMAT = 6
MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024
# The saved term sets are used only while the tokeniser still gives this text the same terms
# (a change to `terms.terms` without a format bump re-tokenises instead of mis-ranking).
TERMS_PROBE = "Indexing the OAuth tokens: auth/config.py, it's 3.14 and C++ timeouts"
# The first line of the file: the format and the head it was saved for, so a snapshot of
# another head is told without unpickling it (after every ledger write).
_LEAD = re.compile(rb"looma-records (\d+) ([0-9a-zA-Z_.-]*)\n")

_ITEM_FIELDS = frozenset(ItemRecord.__dataclass_fields__)
_MEMORY_FIELDS = frozenset(MemoryRecord.__dataclass_fields__)
# The records' shape as the code that saved them had it: a reader with another shape folds
# again. (It replaced a check of every record's and memory's fields on each load: 10^4
# objects at 5,000 sessions, read by every fresh resume and every new session's ingest; one
# `save` writes every record with one code's classes.)
_SHAPE = (tuple(sorted(_ITEM_FIELDS)), tuple(sorted(_MEMORY_FIELDS)))


def load(state_dir: Path, head: str) -> list[ItemRecord] | None:
    """The records saved for `head`, or None when absent, stale, foreign or damaged."""
    found = _read(state_dir, head)
    return None if found is None else found[1]


def load_prior(state_dir: Path) -> tuple[str, list[ItemRecord], dict[str, str]] | None:
    """(ledger commit, records, their fingerprints: `record_patch.fingerprints`) of the saved
    snapshot, whatever head it was saved for."""
    return _read(state_dir, None)


def _read(state_dir: Path, head: str | None
          ) -> tuple[str, list[ItemRecord], dict[str, str]] | None:
    path = Path(state_dir) / SNAPSHOT_FILE
    try:
        if path.stat().st_size > MAX_SNAPSHOT_BYTES:
            return None
        with open(path, "rb") as fh:
            lead = _LEAD.fullmatch(fh.readline(256))
            if lead is None or int(lead[1]) != SNAPSHOT_FORMAT:
                return None
            saved_head = lead[2].decode()
            if head is not None and saved_head != head:
                return None
            with paused():  # ~10^5 objects built, none of them cyclic
                doc = pickle.load(fh)
        items, saved_terms, probe, fps = (doc["items"], doc["terms"], doc["terms_probe"],
                                          doc["fingerprints"])
        if not isinstance(items, list) or not isinstance(fps, dict) \
                or doc.get("shape") != _SHAPE or any(type(it) is not ItemRecord for it in items):
            return None  # saved by other code: fold again
        from looma_git.retrieval.terms import prime_terms, terms

        if isinstance(saved_terms, list) and len(saved_terms) == len(items) and \
                probe == terms(TERMS_PROBE):
            prime_terms(items, saved_terms)  # a fresh resume does not tokenise
        return saved_head, items, {k: v for k, v in fps.items() if isinstance(v, str)}
    # A cache: anything unexpected (a truncated or foreign file, a class that moved) means
    # "fold the ledger again", never an error.
    except Exception:
        return None


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

        doc: dict[str, Any] = {"items": list(items),
                               "terms": [item_terms(it) for it in items],
                               "terms_probe": terms(TERMS_PROBE),
                               "fingerprints": dict(fingerprints or {}), "shape": _SHAPE}
        with open(tmp, "wb") as fh:
            fh.write(b"looma-records %d %s\n" % (SNAPSHOT_FORMAT, head.encode()))
            pickle.dump(doc, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        (state / _OLD_FILE).unlink(missing_ok=True)
    except (OSError, TypeError, ValueError, pickle.PicklingError):
        try:
            tmp.unlink()
        except OSError:
            pass
