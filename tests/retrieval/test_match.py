"""Goal matching and resume outcomes on hand-built records."""

from __future__ import annotations

from looma_git.retrieval import match
from looma_git.retrieval.bundle import build
from looma_git.retrieval.records import ItemRecord, MemoryRecord


def item(id: str, title: str, files: tuple[str, ...], conf: float = 0.8,
         memories: tuple[MemoryRecord, ...] = ()) -> ItemRecord:
    return ItemRecord(id=id, title=title, kind="feature", status="active", lifecycle="active",
                      confidence=conf, band="high", files=files, aliases=(), branch=None,
                      summary="", sessions=(), commits=(), memories=memories, updated="",
                      promoted=True)


ITEMS = [
    item("wi_a", "Implement OAuth Login", ("auth/oauth.py", "auth/routes.py")),
    item("wi_c", "Fix Session Timeout on Refresh", ("auth/session.py",)),
    item("wi_e1", "Search Indexing", ("search/index.py",)),
    item("wi_e2", "Search Ranking", ("search/rank.py",)),
]


def test_confident() -> None:
    state, chosen = match.outcome(match.rank("oauth login", ITEMS))
    assert state == "confident" and chosen[0].item.id == "wi_a"


def test_ambiguous_near_tie() -> None:
    state, chosen = match.outcome(match.rank("search", ITEMS))
    assert state == "ambiguous"
    assert {m.item.id for m in chosen} == {"wi_e1", "wi_e2"}


def test_cold() -> None:
    state, chosen = match.outcome(match.rank("kubernetes helm chart", ITEMS))
    assert state == "cold" and chosen == []


def test_stemming_meets_paths() -> None:
    ranked = match.rank("session timeouts", ITEMS)
    assert ranked[0].item.id == "wi_c"


def test_bundle_keeps_protected_items_and_reports_overflow() -> None:
    mems = tuple(MemoryRecord(id=f"m{i}", kind="todo", text="x" * 200, workitem="wi_a",
                              confidence=0.5, band="medium", lifecycle="active", promoted=True,
                              evidence=()) for i in range(10))
    it = item("wi_a", "Implement OAuth Login", tuple(f"f{i}.py" for i in range(50)),
              memories=mems)
    b = build(it, {"branch": "main"}, [{"sha": "abc", "subject": "s"}] * 5, [], budget=100)
    assert len(b.todos) == 10  # protected: never dropped
    assert b.protected_over_budget
    assert b.overflow.get("files") == 50
