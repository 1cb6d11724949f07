"""A teammate's op with a field of the wrong type never stops the read path: the records
retrieval builds from the fold keep their declared types (resume, work and ask read them)."""

from __future__ import annotations

from typing import Any

import pytest

from looma_git.ledger.fold import fold
from looma_git.retrieval import match
from looma_git.retrieval.records import from_ledger
from tests.ledger.test_fold import Ledger

JUNK: list[Any] = [None, 5, 0.5, True, "", [], ["x"], [1, {"a": 1}], {}, {"a": [1]}]


@pytest.mark.parametrize("junk", JUNK, ids=repr)
def test_records_from_a_hostile_ledger_are_typed(junk: Any) -> None:
    led = Ledger()
    a = led.create("Add OAuth login", files=["auth/oauth.py"],
                   sessions=[{"agent": "codex", "id": "s1"}])
    led.create("Fix export", files=["export.py"])
    for field in ("title", "summary", "branch", "kind", "status", "files", "aliases",
                  "evidence", "sessions", "features", "confidence"):
        led.add("workitem.create", {"type": "workitem"}, {"title": "C", field: junk})
    led.add("workitem.update", {"type": "workitem", "id": a}, {"summary": junk})
    for field in ("kind", "text", "evidence", "lifecycle", "said_at"):
        led.add("memory.promote", {"type": "memory"},
                {"kind": "decision", "text": "use authlib", "workitem": a, field: junk})
    records = from_ledger(fold(led.ops))
    assert records
    for r in records:
        assert isinstance(r.title, str) and isinstance(r.summary, str)
        assert isinstance(r.text_fields(), str)
        assert all(isinstance(f, str) for f in r.files)
        assert all(isinstance(m.text, str) for m in r.memories)
    # and a goal is matched over them as over any ledger
    ranked = match.rank("oauth login", records)
    assert ranked and ranked[0].item.id == a
