"""Fold semantics: user beats system, undo (and undo of undo), merge/split, conflicts, order."""

from __future__ import annotations

import random
from typing import Any

from looma_git.ledger.fold import fold
from looma_git.ledger.ops import Actor, Op, OpDraft, build_op
from looma_git.ledger.projections import note_texts, projection_files

USER = Actor(kind="user", name="Jane", email="jane@example.com")
SYS = Actor(kind="system", name="looma", email="looma@localhost")


class Ledger:
    def __init__(self) -> None:
        self.ops: list[Op] = []

    def add(self, op: str, target: dict[str, Any], payload: dict[str, Any] | None = None, *,
            user: bool = False, inverse_of: str | None = None, lamport: int | None = None,
            clone: str = "c_0000000000000001") -> Op:
        lam = lamport if lamport is not None else max((o.lamport for o in self.ops), default=0) + 1
        o = build_op(OpDraft(op, target, payload or {}, None, inverse_of), lamport=lam,
                     ts="2026-01-01T00:00:00Z", actor=USER if user else SYS, clone=clone)
        self.ops.append(o)
        return o

    def create(self, title: str, **payload: Any) -> str:
        o = self.add("workitem.create", {"type": "workitem"}, {"title": title, **payload})
        return "wi_" + o.id[:10]


def test_rename_pins_title_against_later_system_update() -> None:
    led = Ledger()
    w = led.create("auth stuff", confidence=0.4)
    led.add("workitem.rename", {"type": "workitem", "id": w}, {"title": "OAuth Login"}, user=True)
    led.add("workitem.update", {"type": "workitem", "id": w}, {"title": "Auth v2",
                                                                "confidence": 0.9})
    st = fold(led.ops)
    assert st.workitems[w].title == "OAuth Login"
    assert st.workitems[w].confidence == 0.9
    assert st.constraints.pinned_titles[w] == "OAuth Login"


def test_false_positive_never_returns() -> None:
    led = Ledger()
    w = led.create("noise", confidence=0.7)
    led.add("node.false_positive", {"type": "workitem", "id": w}, user=True)
    led.add("workitem.update", {"type": "workitem", "id": w}, {"confidence": 0.99})
    led.add("commit.link", {"type": "commit", "id": "a" * 40}, {"workitem": w, "by": "hook"})
    led.add("node.false_positive", {"type": "candidate", "id": "cand_1"}, user=True)
    led.add("memory.promote", {"type": "memory", "id": "cand_1"}, {"kind": "todo", "text": "x"})
    st = fold(led.ops)
    assert st.workitems[w].false_positive and st.workitems[w].confidence == 0.0
    assert st.live_links() == [] and "cand_1" not in st.memories
    assert st.constraints.is_false_positive("cand_1")


def test_undo_and_undo_of_undo() -> None:
    led = Ledger()
    w = led.create("x")
    r = led.add("workitem.rename", {"type": "workitem", "id": w}, {"title": "Y"}, user=True)
    u = led.add("undo", {"type": "op", "id": r.id}, inverse_of=r.id, user=True)
    assert fold(led.ops).workitems[w].title == "x"
    led.add("undo", {"type": "op", "id": u.id}, inverse_of=u.id, user=True)
    assert fold(led.ops).workitems[w].title == "Y"


def test_undo_of_merge_restores_both_items_with_links() -> None:
    led = Ledger()
    a = led.create("A", files=["a.py"], sessions=[{"agent": "codex", "id": "s1"}])
    b = led.create("B", files=["b.py"])
    led.add("commit.link", {"type": "commit", "id": "1" * 40}, {"workitem": a, "files": ["a.py"]})
    before = fold(led.ops)
    m = led.add("workitem.merge", {"type": "workitem", "id": b}, {"from": [a]}, user=True)
    merged = fold(led.ops)
    assert merged.workitems[a].merged_into == b
    assert merged.workitems[b].files == ("a.py", "b.py") and merged.workitems[b].confidence == 1.0
    assert [(lk.sha, lk.workitem) for lk in merged.live_links()] == [("1" * 40, b)]
    assert merged.constraints.must(a, b)
    # a later system link addressed to the merged-away id follows merged_into
    led.add("commit.link", {"type": "commit", "id": "2" * 40}, {"workitem": a})
    assert ("2" * 40, b) in fold(led.ops).links
    led.ops.pop()
    led.add("undo", {"type": "op", "id": m.id}, inverse_of=m.id, user=True)
    restored = fold(led.ops)
    assert restored.workitems[a].merged_into is None
    assert restored.workitems[a].sessions == before.workitems[a].sessions
    assert [(lk.sha, lk.workitem) for lk in restored.live_links()] == [("1" * 40, a)]


def test_split_creates_parts_with_cannot_link() -> None:
    led = Ledger()
    w = led.create("big", files=["a.py", "b.py"])
    led.add("commit.link", {"type": "commit", "id": "3" * 40}, {"workitem": w, "files": ["b.py"]})
    s = led.add("workitem.split", {"type": "workitem", "id": w},
                {"by": "files", "parts": [{"title": "A part", "files": ["a.py"]},
                                          {"title": "B part", "files": ["b.py"]}]}, user=True)
    st = fold(led.ops)
    parts = st.workitems[w].split_into
    assert len(parts) == 2 and st.workitems[w].status == "abandoned"
    assert st.constraints.cannot(parts[0], parts[1])
    assert st.constraints.partitions[parts[1]]["files"] == ["b.py"]
    assert [lk.workitem for lk in st.live_links()] == [parts[1]]
    assert all(st.workitems[p].split_from == w for p in parts)
    assert parts[0].startswith("wi_") and s.id[:10] not in parts[0]


def test_user_unlink_blocks_later_system_link() -> None:
    led = Ledger()
    w = led.create("w")
    sha = "4" * 40
    led.add("commit.link", {"type": "commit", "id": sha}, {"workitem": w})
    led.add("commit.unlink", {"type": "commit", "id": sha}, {"workitem": w}, user=True)
    led.add("commit.link", {"type": "commit", "id": sha}, {"workitem": w})
    st = fold(led.ops)
    assert st.live_links() == [] and (sha, w) in st.constraints.unlinked
    led.add("commit.rewrite", {"type": "commit", "id": sha}, {"old": sha, "new": "5" * 40})
    led.add("commit.link", {"type": "commit", "id": "6" * 40}, {"workitem": w})
    led.add("commit.rewrite", {"type": "commit", "id": "6" * 40}, {"old": "6" * 40,
                                                                    "new": "7" * 40})
    assert [lk.sha for lk in fold(led.ops).live_links()] == ["7" * 40]


def test_memory_force_reject_and_promote() -> None:
    led = Ledger()
    p = led.add("memory.promote", {"type": "memory"}, {"kind": "decision", "text": "use pg",
                                                        "confidence": 0.7})
    mid = "mem_" + p.id[:10]
    led.add("memory.reject", {"type": "memory", "id": mid}, user=True)
    led.add("memory.update", {"type": "memory", "id": mid}, {"confidence": 0.95})
    st = fold(led.ops)
    assert st.memories[mid].forced == "reject" and st.memories[mid].confidence == 0.0
    led.add("memory.promote", {"type": "memory", "id": mid}, user=True)
    led.add("memory.update", {"type": "memory", "id": mid}, {"lifecycle": "superseded",
                                                             "superseded_by": "mem_x"})
    st = fold(led.ops)
    assert st.memories[mid].confidence == 1.0 and st.memories[mid].lifecycle == "superseded"


def test_concurrent_renames_conflict_and_later_wins() -> None:
    led = Ledger()
    w = led.create("x")
    r1 = led.add("workitem.rename", {"type": "workitem", "id": w}, {"title": "A", "prev": []},
                 user=True, lamport=5, clone="c_aaaaaaaaaaaaaaaa")
    r2 = led.add("workitem.rename", {"type": "workitem", "id": w}, {"title": "B", "prev": []},
                 user=True, lamport=5, clone="c_bbbbbbbbbbbbbbbb")
    st = fold(led.ops)
    winner = max((r1, r2), key=lambda o: o.sort_key)
    assert st.workitems[w].title == winner.payload["title"]
    assert len(st.conflicts) == 1 and st.conflicts[0].winner == winner.id
    # a causally later rename (it saw both) is not a conflict
    led.add("workitem.rename", {"type": "workitem", "id": w},
            {"title": "C", "prev": sorted([r1.id, r2.id])}, user=True)
    assert len(fold(led.ops).conflicts) == 1


def test_same_ops_any_order_same_state_and_projections() -> None:
    led = Ledger()
    a, b = led.create("A"), led.create("B")
    led.add("commit.link", {"type": "commit", "id": "8" * 40}, {"workitem": a, "files": ["x"]})
    led.add("workitem.merge", {"type": "workitem", "id": b}, {"from": [a]}, user=True)
    led.add("workitem.rename", {"type": "workitem", "id": b}, {"title": "Z"}, user=True)
    ref = fold(led.ops)
    for seed in range(5):
        shuffled = led.ops[:]
        random.Random(seed).shuffle(shuffled)
        st = fold(shuffled)
        assert projection_files(st) == projection_files(ref)
        assert note_texts(st) == note_texts(ref)


def test_a_fold_in_batches_is_the_fold_of_all_ops() -> None:
    """The cached fold folds each append's batch and derives after it; a full fold derives
    once. Both must give one state (found by tests/ledger/test_fold_cache.py's steps test)."""
    from looma_git.ledger.fold import Folder, effective_ops

    led = Ledger()
    w = led.create("Effort 7", observe={"sessions": [{
        "agent": "claude-code", "id": "s7", "first": "2026-01-07T10:00:00Z",
        "last": "2026-01-07T11:00:00Z", "files": {"f7.txt": 2},
        "prompt": "please add feature number 7 to the search page"}]})
    led.add("workitem.rename", {"type": "workitem", "id": w}, {"title": "Renamed"}, user=True)
    # a merged-away WorkItem's title becomes the survivor's alias: the same in both folds
    v = led.create("Effort 8", observe={"sessions": [{
        "agent": "codex", "id": "s8", "first": "2026-01-08T10:00:00Z",
        "last": "2026-01-08T11:00:00Z", "files": {"f8.txt": 1},
        "prompt": "make the search page remember the last query"}]})
    u = led.create("Effort 9", observe={"sessions": [{
        "agent": "codex", "id": "s9", "first": "2026-01-09T10:00:00Z",
        "last": "2026-01-09T11:00:00Z", "files": {"f8.txt": 1},
        "prompt": "keep the last search query across reloads"}]})
    led.add("workitem.merge", {"type": "workitem", "id": v}, {"from": [u]}, user=True)
    # a commit linked again with another time (rewritten): its old time is not last_active
    for ts in ("2026-03-01T12:00:00Z", "2026-01-10T12:00:00Z"):
        led.add("commit.link", {"type": "commit", "id": "c" * 40},
                {"workitem": v, "subject": "remember the last search query", "ts": ts})
    batched = Folder()
    for op in effective_ops(led.ops):
        batched.apply([op])
        batched.finish()
    whole = fold(led.ops)
    assert batched.state.workitems[w].aliases == whole.workitems[w].aliases
    assert "Effort 7" in whole.workitems[w].aliases  # the replaced title stays findable
    assert whole.workitems[v].last_active == "2026-01-10T12:00:00Z"
    assert projection_files(batched.state) == projection_files(whole)


def test_a_merge_keeps_the_absorbed_items_last_active() -> None:
    """Only create/update ops set a WorkItem's own `last_active`; a merge must not drop the
    absorbed one's (derive takes the latest of it and the evidence's times)."""
    from looma_git.ledger.fold import Folder, effective_ops

    led = Ledger()
    old = led.create("Old", last_active="2026-01-02T00:00:00Z")
    late = led.create("Late", last_active="2026-05-01T00:00:00Z")
    seen = led.create("Seen", last_active="2026-02-01T00:00:00Z", observe={"sessions": [{
        "agent": "codex", "id": "s1", "first": "2026-01-03T10:00:00Z",
        "last": "2026-01-03T11:00:00Z", "files": {"a.py": 1}, "prompt": "fix the parser"}]})
    led.add("workitem.merge", {"type": "workitem", "id": old}, {"from": [late]}, user=True)
    led.add("workitem.merge", {"type": "workitem", "id": seen}, {"from": [old]})
    whole = fold(led.ops)
    assert whole.workitems[seen].last_active == "2026-05-01T00:00:00Z"
    assert whole.workitems[seen].op_last_active == "2026-05-01T00:00:00Z"
    batched = Folder()
    for op in effective_ops(led.ops):
        batched.apply([op])
        batched.finish()
    assert projection_files(batched.state) == projection_files(whole)


def test_split_parts_inherit_the_sources_last_active() -> None:
    led = Ledger()
    w = led.create("big", files=["a.py", "b.py"], last_active="2026-04-01T00:00:00Z")
    led.add("workitem.split", {"type": "workitem", "id": w},
            {"by": "files", "parts": [{"title": "A part", "files": ["a.py"]},
                                      {"title": "B part", "files": ["b.py"]}]}, user=True)
    st = fold(led.ops)
    parts = st.workitems[w].split_into
    assert len(parts) == 2
    assert [st.workitems[p].last_active for p in parts] == ["2026-04-01T00:00:00Z"] * 2
    assert [st.workitems[p].op_last_active for p in parts] == ["2026-04-01T00:00:00Z"] * 2
