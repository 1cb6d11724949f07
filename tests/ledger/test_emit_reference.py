"""The optimised emitter and projection renderers produce the reference bytes exactly."""

from __future__ import annotations

from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.ledger import yamlio
from looma_git.ledger.fold import fold
from looma_git.ledger.ops import Actor, OpDraft, build_op
from looma_git.ledger.projections import memory_bytes, memory_doc, workitem_bytes, workitem_doc
from tests.ledger import reference_yaml as ref
from tests.ledger.test_yamlio import NASTY

_CS: tuple[Literal["Cs"]] = ("Cs",)
_text = st.text(st.characters(exclude_categories=_CS), max_size=30)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63),
                     st.floats(allow_nan=False, allow_infinity=False), _text,
                     st.sampled_from(NASTY), st.text("0123456789abcdef", min_size=64, max_size=64))
_values = st.recursive(_scalars, lambda c: st.lists(c, max_size=6) | st.tuples(c, c)
                       | st.dictionaries(_text, c, max_size=5), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(st.characters(exclude_categories=_CS), min_size=1,
                               max_size=12), _values, min_size=1, max_size=8))
def test_dump_matches_reference(doc: dict) -> None:
    assert yamlio.dump(doc) == ref.dump(doc)
    assert yamlio.dump(doc) == ref.dump(doc)  # second time through the string cache


def test_nasty_and_long_values_match_reference() -> None:
    doc = {"s": NASTY, "long": ["x" * 150, "y" * 99], "m": {k or "e": [k] * 30 for k in NASTY},
           "ids": ["0" * 64] * 5, "t": tuple(NASTY), "big": {"k": list(range(60))}}
    assert yamlio.dump(doc) == ref.dump(doc)


def test_projection_bytes_match_asdict_reference() -> None:
    actor = Actor(kind="system", name="looma", email="looma@localhost")
    user = Actor(kind="user", name="U", email="u@e.com")
    ops = []
    lam = 0

    def add(draft: OpDraft, who: Actor = actor) -> str:
        nonlocal lam
        lam += 1
        op = build_op(draft, lamport=lam, ts="2026-01-01T00:00:00Z", actor=who, clone="c_1")
        ops.append(op)
        return op.id

    first = add(OpDraft("workitem.create", {"type": "workitem"}, {
        "title": "OAuth: login", "files": ["b.py", "a.py"], "features": {"x": 0.5, "a": 1},
        "evidence": [{"agent": "claude", "session": "s1", "quote": "yes"}] * 3,
        "sessions": [{"agent": "claude", "id": "s1"}], "confidence": 0.83}))
    wid = "wi_" + first[:10]
    add(OpDraft("workitem.rename", {"type": "workitem", "id": wid}, {"title": "no"}), user)
    add(OpDraft("workitem.split", {"type": "workitem", "id": wid},
                {"parts": [{"title": "p1", "files": ["a.py"], "sessions": [{"agent": "claude",
                                                                          "id": "s1"}]},
                           {"files": ["b.py"]}]}), user)
    add(OpDraft("memory.promote", {"type": "memory"},
                {"kind": "decision", "text": "multi\nline: yes", "workitem": wid,
                 "features": {"z": 0.1}, "evidence": [{"event": "e1"}]}))
    state = fold(ops)
    assert len(state.workitems) == 3 and state.memories
    for wi in state.workitems.values():
        assert workitem_bytes(wi) == ref.dump(workitem_doc(wi))
    for mem in state.memories.values():
        assert memory_bytes(mem) == ref.dump(memory_doc(mem))
