"""Payload values of the wrong type (only a foreign or hostile clone writes them) never stop a
fold: each is ignored or becomes a warning, and the domain values keep their declared types."""

from __future__ import annotations

import random
from typing import Any

import pytest

from looma_git.ledger.fold import fold
from looma_git.ledger.projections import note_texts, projection_files
from tests.ledger.test_fold import Ledger

JUNK: list[Any] = [None, 5, 0.5, True, "", "text", [], ["x"], [1, {"a": 1}], {}, {"a": [1]}]
WI = "workitem"


def _base() -> tuple[Ledger, str, str]:
    led = Ledger()
    a = led.create("A", files=["a.py"], sessions=[{"agent": "codex", "id": "s1"}])
    b = led.create("B", files=["b.py"])
    return led, a, b


@pytest.mark.parametrize("junk", JUNK, ids=repr)
def test_every_field_of_every_kind_takes_junk(junk: Any) -> None:
    led, a, b = _base()
    sha = "1" * 40
    for field in ("files", "aliases", "evidence", "sessions", "features", "title", "branch",
                  "confidence", "summary", "status"):
        led.add("workitem.update", {"type": WI, "id": a}, {field: junk})
        led.add("workitem.create", {"type": WI}, {"title": "C", field: junk})
    led.add("commit.link", {"type": "commit", "id": sha},
            {"workitem": a, "files": junk, "why": junk, "subject": "Add a", "branch": junk})
    led.add("commit.link", {"type": "commit", "id": sha}, {"workitem": junk})
    led.add("commit.rewrite", {"type": "commit", "id": sha}, {"old": sha, "new": junk})
    for field in ("kind", "text", "workitem", "said_at", "evidence", "features", "lifecycle"):
        led.add("memory.promote", {"type": "memory"},
                {"kind": "decision", "text": "use X", "workitem": a, field: junk})
    led.add("workitem.merge", {"type": WI, "id": b}, {"from": junk}, user=True)
    led.add("workitem.split", {"type": WI, "id": a},
            {"parts": [{"files": junk, "sessions": junk, "title": junk}, junk]}, user=True)
    led.add("workitem.rename", {"type": WI, "id": b}, {"title": junk}, user=True)
    st = fold(led.ops)
    assert projection_files(st) and isinstance(note_texts(st), dict)
    for w in st.work_items(listed=False):
        assert isinstance(w.title, str) and isinstance(w.summary, str)
        assert w.branch is None or isinstance(w.branch, str)
        assert all(isinstance(v, float) for _, v in w.features)
        for m in w.memories:
            assert isinstance(m.text, str) and isinstance(m.said_at, str)
        for c in w.commits:
            assert all(isinstance(v, float) for _, v in c.why)


def test_a_merge_from_a_number_is_a_warning() -> None:
    led, a, b = _base()
    led.add("workitem.merge", {"type": WI, "id": b}, {"from": 7}, user=True)
    st = fold(led.ops)
    assert st.workitems[a].merged_into is None
    assert any("`from` is not a list" in w for w in st.warnings)


def test_random_junk_never_raises() -> None:
    rnd = random.Random(20)
    kinds = ["workitem.create", "workitem.update", "workitem.merge", "workitem.split",
             "workitem.rename", "node.false_positive", "memory.promote", "memory.update",
             "memory.reject", "commit.link", "commit.unlink", "commit.rewrite"]
    keys = ["title", "files", "from", "parts", "workitem", "old", "new", "text", "said_at",
            "why", "features", "sessions", "evidence", "branch", "kind", "observe"]
    for _ in range(30):
        led, a, b = _base()
        for _ in range(25):
            target = rnd.choice([a, b, None, "1" * 40])
            payload = {k: rnd.choice([*JUNK, a, b]) for k in rnd.sample(keys, 4)}
            led.add(rnd.choice(kinds), {"type": WI, "id": target}, payload,
                    user=rnd.random() < 0.5)
        st = fold(led.ops)
        projection_files(st)
        st.work_items(listed=False)
