"""The op-kind registry: one module per kind, every module registered, and what kinds declare."""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import looma_git.ledger.ops as ops_pkg
from looma_git.ledger.fold import fold
from looma_git.ledger.ops import KINDS, OP_TYPES, Actor, OpDraft, build_op, timeline_text
from looma_git.ledger.ops.registry import CONFLICTS, INTENTS, touched

USER = Actor(kind="user", name="Jane", email="jane@example.com")
_SHARED = {"envelope", "kind", "registry", "values"}
FORMAT_DOC = Path(__file__).resolve().parents[2] / "docs" / "format.md"


def _op(kind: str, target: dict, payload: dict | None = None, lamport: int = 1):
    return build_op(OpDraft(kind, target, payload or {}), lamport=lamport,
                    ts="2026-01-01T00:00:00Z", actor=USER, clone="c_0000000000000001")


def test_every_kind_module_is_registered_under_its_own_name() -> None:
    modules = {m.name for m in pkgutil.iter_modules(ops_pkg.__path__)} - _SHARED
    assert modules == {k.replace(".", "_") for k in OP_TYPES}
    for name, kind in KINDS.items():
        assert kind.name == name and kind.apply.__module__.endswith("." + name.replace(".", "_"))


def test_kinds_are_the_ones_docs_format_lists() -> None:
    line = next(ln for ln in FORMAT_DOC.read_text().splitlines() if ln.startswith("- Op types:"))
    documented = set()
    for group in re.findall(r"`([^`]+)`", line):
        head, _, verbs = group.partition(".")
        documented |= {f"{head}.{v}" for v in verbs.split("|")} if verbs else {head}
    assert documented == set(OP_TYPES)


def test_conflicts_are_symmetric_pairs_of_the_three_intents() -> None:
    assert CONFLICTS == {("workitem.rename", "workitem.rename"): "rename",
                         ("workitem.merge", "workitem.split"): "merge_split",
                         ("workitem.split", "workitem.split"): "split"}
    assert set(INTENTS) == {"workitem.rename", "workitem.merge", "workitem.split"}


def test_created_ids_and_touched() -> None:
    create = _op("workitem.create", {"type": "workitem"}, {"title": "x"})
    assert create.created_id() == "wi_" + create.id[:10]
    chosen = _op("workitem.create", {"type": "workitem", "id": "wi_mine"})
    assert chosen.created_id() == "wi_mine"
    mem = _op("memory.promote", {"type": "memory"}, {"text": "t"})
    assert mem.created_id() == "mem_" + mem.id[:10]
    assert _op("memory.promote", {"type": "memory", "id": "mem_x"}).created_id() is None
    assert _op("workitem.rename", {"type": "workitem", "id": "wi_a"}).created_id() is None
    merge = _op("workitem.merge", {"type": "workitem", "id": "wi_b"}, {"from": ["wi_a", 3]})
    assert touched(merge) == ["wi_b", "wi_a"]
    assert touched(_op("undo", {"type": "op"})) == []


def test_timeline_lines() -> None:
    w = {"type": "workitem", "id": "wi_a"}
    assert timeline_text(_op("workitem.rename", w, {"title": "New"})) == "renamed to 'New'"
    assert timeline_text(_op("workitem.update", w, {"status": "done"})) == "status -> done"
    assert timeline_text(_op("workitem.update", w, {"title": "t"})) is None
    assert timeline_text(_op("workitem.merge", w, {"from": []})) == "workitem.merge"
    assert timeline_text(_op("commit.link", {"type": "commit", "id": "a" * 40})) is None
    assert timeline_text(_op("memory.promote", {"type": "memory"})) is None


def test_a_bad_payload_is_a_warning_of_its_kind_not_an_error() -> None:
    bad = [_op("workitem.rename", {"type": "workitem", "id": "wi_none"}, {"title": 3}, 1),
           _op("commit.rewrite", {"type": "commit", "id": "a" * 40}, {"new": 5}, 2),
           _op("memory.update", {"type": "memory", "id": "mem_none"}, {}, 3)]
    st = fold(bad)
    assert [w.split(" (")[1].split(")")[0] for w in st.warnings] == [
        "workitem.rename", "commit.rewrite", "memory.update"]
