"""What the fold emits for readers: frozen domain WorkItems, Memories, CommitLinks, SessionRefs."""

from __future__ import annotations

import dataclasses

import pytest

from looma_git.domain import Evidence, SessionRef, WorkItem
from looma_git.ledger.fold import fold
from looma_git.retrieval.records import from_ledger
from tests.ledger.test_fold import Ledger

WI = "workitem"
EV = {"quote": "make login work", "agent": "codex", "session": "s1", "event": "e1",
      "hash": "h1"}


def _ledger() -> tuple[Ledger, dict[str, str]]:
    led = Ledger()
    a = led.create("Login", files=["auth.py"], sessions=[{"agent": "codex", "id": "s1"}],
                   evidence=[EV], confidence=0.6, features={"file_overlap": 0.5})
    b = led.create("Login form", files=["form.py"],
                   sessions=[{"agent": "claude-code", "id": "s2"}, {"agent": "codex"}])
    noise = led.create("noise")
    big = led.create("big", files=["x.py", "y.py"])
    led.add("commit.link", {"type": "commit", "id": "1" * 40},
            {"workitem": a, "files": ["auth.py"], "subject": "Add login", "confidence": 0.8})
    led.add("memory.promote", {"type": "memory"},
            {"kind": "decision", "text": "use sessions", "workitem": b, "evidence": [EV, 7]})
    led.add("memory.promote", {"type": "memory"}, {"kind": "todo", "text": "gone",
                                                    "workitem": a})
    gone = next(m for m, mem in fold(led.ops).memories.items() if mem.text == "gone")
    led.add("memory.reject", {"type": "memory", "id": gone}, user=True)
    led.add("workitem.merge", {"type": WI, "id": a}, {"from": [b]}, user=True)
    led.add("node.false_positive", {"type": WI, "id": noise}, user=True)
    led.add("workitem.split", {"type": WI, "id": big},
            {"by": "files", "parts": [{"title": "X", "files": ["x.py"]}, {"files": ["y.py"]}]},
            user=True)
    return led, {"a": a, "b": b, "noise": noise, "big": big}


def test_listed_work_items_are_the_live_unsplit_ones_with_links_and_memories() -> None:
    led, ids = _ledger()
    st = fold(led.ops)
    items = st.work_items()
    assert all(isinstance(w, WorkItem) for w in items)
    got = {w.id for w in items}
    assert ids["a"] in got and not got & {ids["b"], ids["noise"], ids["big"]}
    assert {w.title for w in items} >= {"X", "big (2)"}
    a = next(w for w in items if w.id == ids["a"])
    # the merged WorkItem's sessions, and its decision, now belong to the survivor
    assert a.sessions == (SessionRef("claude-code", "s2"), SessionRef("codex", "s1"))
    assert [m.text for m in a.memories] == ["use sessions"]  # the rejected todo is gone
    assert a.memories[0].evidence == (Evidence("make login work", "codex", "s1", "e1", "h1"),)
    assert [(c.sha, c.subject, c.by_user) for c in a.commits] == [("1" * 40, "Add login", False)]
    assert a.commits[0].title == "Login" and a.decision == "promote" and a.confidence == 1.0
    assert a.evidence[0].session_ref == SessionRef("codex", "s1")
    assert a.session_keys == {"claude-code:s2", "codex:s1"} and a.live
    big = st.work_item(ids["big"])
    assert big is not None and big.live and big.split_into and big.status == "abandoned"
    assert not st.work_item(ids["noise"]).live  # type: ignore[union-attr]
    everything = {w.id for w in st.work_items(listed=False)}
    assert everything == set(st.workitems)
    assert st.work_item(ids["b"]) == a  # followed through the merge
    assert st.work_item("wi_unknown") is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.title = "x"  # type: ignore[misc]


def test_domain_items_carry_what_retrieval_records_read() -> None:
    """The mapping retrieval can adopt: each ItemRecord field from the domain WorkItem."""
    led, _ = _ledger()
    st = fold(led.ops)
    items = {w.id: w for w in st.work_items()}
    records = from_ledger(st)
    assert set(items) == {r.id for r in records}
    for r in records:
        w = items[r.id]
        assert (r.title, r.kind, r.status, r.confidence, r.band, r.files, r.aliases, r.branch,
                r.summary, r.features) == (w.title, w.kind, w.status, w.confidence, w.band,
                                           w.files, w.aliases, w.branch, w.summary, w.features)
        assert [c.sha for c in r.commits] == [c.sha for c in w.commits]
        assert r.updated == (w.last_active or w.updated)
        assert {s for s in r.sessions if s[0] != "None" and s[1] != "None"} == {
            (s.agent, s.id) for s in w.sessions}


def test_session_ref_reads_every_way_a_session_is_written() -> None:
    ref = SessionRef("codex", "0199:ab")
    assert SessionRef.from_key(ref.key) == ref and ref.key == "codex:0199:ab"
    assert SessionRef.from_mapping(ref.as_dict()) == ref
    assert SessionRef.from_mapping({"agent": "codex"}) is None
    assert SessionRef.from_mapping({"agent": "codex", "id": 5}) is None
    assert Evidence.from_mapping({"quote": 3, "start": True, "end": 9}) == Evidence(
        "", "", "", "", "", 0, 9)
