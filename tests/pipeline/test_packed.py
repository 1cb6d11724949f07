"""A reused cluster's memories stay packed through the memo until something reads them, and a
pass's memories read as the flat sequence they were."""

from __future__ import annotations

import pickle

from looma_git.pipeline.packed import MemoryList, Packed
from looma_git.pipeline.refine import RefineInput, refine
from tests.pipeline.test_incremental import COMMITS, KNOWN, POOL


def test_a_memo_entry_is_read_back_without_decoding_its_memories() -> None:
    res = refine(RefineInput(sessions=POOL, commits=COMMITS, known_paths=KNOWN, sha_lookup={}))
    assert isinstance(res.memories, MemoryList) and len(res.memories) > 0
    entry = next(e for e in res.memo.values() if len(e.memories))
    back = pickle.loads(pickle.dumps(entry))
    assert isinstance(back.memories, Packed) and not back.memories.decoded
    assert back.memories.ids == tuple(m.id for m in entry.memories)
    assert len(back.memories) == len(entry.memories)  # (counted without decoding)
    assert not back.memories.decoded
    assert tuple(back.memories) == tuple(entry.memories) and back.memories.decoded
    # the pass's memories: every cluster's, in order; a subset by cluster
    flat = [m for _, ms in res.memories.parts for m in ms]
    assert list(res.memories) == flat and res.memories == tuple(flat)
    one = res.memories.parts[0][0]
    assert list(res.memories.of({one})) == [m for m in flat if m.workitem == one]
