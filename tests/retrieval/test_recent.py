"""Resume without a goal: branch first, then the latest activity, near-ties ambiguous."""

from __future__ import annotations

from looma_git.retrieval.recent import most_recent
from looma_git.retrieval.records import ItemRecord


def item(id: str, updated: str, branch: str | None = None) -> ItemRecord:
    return ItemRecord(id=id, title=id, kind="feature", status="active", lifecycle="active",
                      confidence=0.5, band="medium", files=(), aliases=(), branch=branch,
                      summary="", sessions=(), commits=(), memories=(), updated=updated,
                      promoted=True)


def test_latest_wins() -> None:
    state, got = most_recent([item("a", "2026-03-01T10:00:00Z"),
                              item("b", "2026-03-05T10:00:00Z")], "main")
    assert state == "confident" and [x.id for x in got] == ["b"]


def test_same_hour_is_ambiguous() -> None:
    state, got = most_recent([item("a", "2026-03-05T09:40:00Z"),
                              item("b", "2026-03-05T10:00:00Z")], None)
    assert state == "ambiguous" and {x.id for x in got} == {"a", "b"}


def test_checked_out_branch_wins() -> None:
    state, got = most_recent([item("a", "2026-03-01T10:00:00Z", "feat/oauth"),
                              item("b", "2026-03-05T10:00:00Z")], "feat/oauth")
    assert state == "confident" and got[0].id == "a"


def test_nothing_is_cold() -> None:
    assert most_recent([], "main") == ("cold", [])
