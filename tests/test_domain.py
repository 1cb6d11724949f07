"""The domain package stays pure: frozen dataclasses, no I/O, no import of any other layer."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

DOMAIN = Path(__file__).resolve().parent.parent / "looma_git" / "domain"
ALLOWED = {"__future__", "dataclasses", "typing", "collections.abc"}


def test_domain_imports_only_itself_and_pure_stdlib() -> None:
    bad = []
    for path in sorted(DOMAIN.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{path.name}: {n}" for n in names
                    if n not in ALLOWED and not n.startswith("looma_git.domain")]
    assert not bad, bad


def test_every_domain_dataclass_is_frozen() -> None:
    classes = []
    for path in sorted(DOMAIN.glob("*.py")):
        mod = importlib.import_module(f"looma_git.domain.{path.stem}".removesuffix(".__init__"))
        classes += [v for v in vars(mod).values()
                    if isinstance(v, type) and dataclasses.is_dataclass(v)
                    and v.__module__ == mod.__name__]
    assert len(classes) >= 7
    assert all(c.__dataclass_params__.frozen for c in classes), classes  # type: ignore[attr-defined]


PKG = DOMAIN.parent
RECORDS = {"ItemRecord", "MemoryRecord", "LinkRecord"}


def _calls(path: Path, names: set[str]) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else ""
            if name in names:
                out.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {name}(...)")
    return out


def test_a_workitem_record_is_only_ever_the_projection_of_a_domain_workitem() -> None:
    """Retrieval's records are made by their `of` constructors from domain values (the fold's
    or a local candidate's); only the snapshot restores saved ones. No module builds a
    WorkItem-shaped record of its own from rows or dicts."""
    found = [c for path in sorted(PKG.rglob("*.py"))
             if path.relative_to(PKG).as_posix() not in ("retrieval/records.py",
                                                          "retrieval/snapshot.py")
             for c in _calls(path, RECORDS)]
    assert not found, found
    snapshot = _calls(PKG / "retrieval" / "snapshot.py", RECORDS)
    assert all("LinkRecord" in c for c in snapshot), snapshot  # (sha, confidence, by) restored


def test_resolution_working_shapes_have_one_definition_each() -> None:
    """The pipeline's resolution states (docs/architecture.md) are not WorkItems and their
    names mean one thing: each class name is defined once in the package."""
    names = {"WorkItem", "Memory", "CommitLink", "Evidence", "Seed", "Cluster", "WorkItemView",
             "Target", "ItemRecord", "MemoryRecord", "LinkRecord", "OpTarget"}
    where: dict[str, list[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in names:
                where.setdefault(node.name, []).append(path.relative_to(PKG).as_posix())
    assert {n: w for n, w in where.items() if len(w) != 1} == {}
    assert set(where) == names


def test_a_local_candidate_projects_like_a_ledger_workitem() -> None:
    from looma_git.retrieval.records import ItemRecord, local_memory, local_work_item

    ev = {"quote": "add the oauth login", "agent": "codex", "session": "s1", "event": "e1",
          "hash": "h", "start": 0, "end": 19}
    mem = local_memory("mem_1", {"kind": "todo", "text": "handle refresh", "workitem": "c1",
                                 "confidence": {"value": 0.8}, "evidence": [ev], "ts": "t"})
    w = local_work_item("c1", {"title": "OAuth", "files": ["a.py", 3], "branch": "feat/x",
                               "evidence": [ev, ev, "junk"]}, (mem,))
    r = ItemRecord.of(w)
    assert (r.status, r.promoted, r.confidence, r.band, r.files) == (
        "candidate", False, 0.0, "low", ("a.py",))
    assert r.prompts == ("add the oauth login",) and r.branches == ("feat/x",)
    (m,) = r.memories
    assert (m.promoted, m.band, m.said_at, m.workitem) == (False, "high", "t", "c1")
    assert m.evidence == ({k: ev[k] for k in ("quote", "agent", "session", "event", "hash")},)
