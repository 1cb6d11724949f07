"""Every error path returns a structured tool result {code, message, suggestion, recoverable}."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git
from tests.mcp.client import RpcFailure, Strict, call, error_of, text, tool_calls
from tests.mcp.conftest import Seeded

READ_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_work", {}), ("resume_work", {"goal": "oauth"}), ("ask", {"query": "oauth"}),
    ("timeline", {"work": "wi_abcd"}), ("recall", {"entity": "auth"}),
    ("correct", {"action": "rename", "refs": ["wi_abcd"], "title": "x"}),
]


def _err(result: Any) -> dict[str, Any]:
    sc = error_of(result)  # text only: no structuredContent on errors
    assert set(sc) == {"code", "message", "suggestion", "recoverable", "matches"}
    assert text(result).startswith(f"error: {sc['code']}: ")
    assert not text(result).lstrip().startswith("{")
    return sc


def test_uninitialized_store(repo: Path) -> None:
    for r in tool_calls(repo, READ_CALLS):
        e = _err(r)
        assert e["code"] == "not_initialized" and e["recoverable"] is True
        assert "looma init" in e["suggestion"]


def test_empty_store_after_init(repo: Path) -> None:
    from looma_git.api.ledger import init_repo
    from looma_git.gitrepo import find_repo

    init_repo(find_repo(repo))
    for r in tool_calls(repo, READ_CALLS):
        e = _err(r)
        assert e["code"] == "empty_store", e
        assert "looma ingest" in e["suggestion"] and e["recoverable"] is True


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    e = _err(call(plain, "list_work"))
    assert e["code"] == "not_a_repository" and e["recoverable"] is False
    assert "-C" in e["suggestion"]


def test_unknown_ids(seeded: Seeded) -> None:
    results = tool_calls(seeded.path, [
        ("timeline", {"work": "wi_ffffffff"}),
        ("resume_work", {"work": "wi_ffffffff"}),
        ("correct", {"action": "merge", "refs": ["wi_ffffffff", seeded.oauth]}),
        ("correct", {"action": "undo", "refs": ["fffffff"]}),
        ("correct", {"action": "reject", "refs": ["mem_ffffffff"]}),
    ])
    for r in results:
        e = _err(r)
        assert e["code"] == "not_found" and e["recoverable"] is True
        assert "list_work" in e["suggestion"] or "looma log" in (e["suggestion"] or "")


def test_ambiguous_ref_lists_the_matches(seeded: Seeded) -> None:
    # "sess-oauth" is a prefix of both of the OAuth item's sessions.
    e = _err(call(seeded.path, "correct", {
        "action": "split", "refs": [seeded.oauth],
        "parts": [{"title": "A", "members": ["sess-oauth"]}, {"title": "B", "members": ["x"]}]}))
    assert e["code"] == "ambiguous" and e["recoverable"] is True
    assert e["matches"] == ["claude-code:sess-oauth-1", "codex:sess-oauth-2"]
    assert "longer" in e["suggestion"]


def test_ambiguous_workitem_prefix(seeded: Seeded) -> None:
    from looma_git.api import ledger
    from looma_git.gitrepo import find_repo
    from looma_git.ledger.ops import OpDraft

    paths = find_repo(seeded.path)
    ledger.append(paths, [OpDraft("workitem.create", {"type": "workitem", "id": f"wi_abcd00000{i}"},
                                  {"title": f"twin {i}", "confidence": 0.5}) for i in (1, 2)],
                  actor="system")
    e = _err(call(seeded.path, "timeline", {"work": "wi_abcd"}))
    assert e["code"] == "ambiguous"
    assert [m.split()[0] for m in e["matches"]] == ["wi_abcd000001", "wi_abcd000002"]


@pytest.mark.parametrize("name,args,field", [
    ("correct", {"action": "merge", "refs": ["A", "B"]}, "refs.0"),  # letters: never via MCP
    ("correct", {"action": "rename", "refs": ["Implement OAuth Login"], "title": "x"}, "refs.0"),
    ("correct", {"action": "explode", "refs": ["wi_abcd"]}, "action"),
    ("correct", {"action": "merge", "refs": []}, "refs"),
    ("correct", {"action": "promote"}, "refs"),
    ("ask", {"query": ""}, "query"),
    ("ask", {"query": "x", "limit": 0}, "limit"),
    ("list_work", {"status": "sleeping"}, "status"),
    ("timeline", {}, "work"),
    ("resume_work", {"budget": 5}, "budget"),
])
def test_schema_violations_are_bad_arguments(seeded: Seeded, name: str, args: dict[str, Any],
                                             field: str) -> None:
    e = _err(call(seeded.path, name, args))
    assert e["code"] == "bad_arguments" and e["recoverable"] is True
    assert f"{field}:" in e["message"]


@pytest.mark.parametrize("args,needle", [
    ({"action": "merge", "refs": ["wi_abcd"]}, "merge takes refs=[from_id, into_id]"),
    ({"action": "rename", "refs": ["wi_abcd"]}, "rename takes refs=[work_id] and a non-empty"),
    ({"action": "merge", "refs": ["wi_abcd", "wi_dcba"], "title": "x"}, "only for action=rename"),
    ({"action": "split", "refs": ["wi_abcd"]}, "split takes refs=[work_id] and parts"),
    ({"action": "undo", "refs": ["wi_abcd"]}, "undo takes refs=[op_id]"),
    ({"action": "reject", "refs": ["abcdef0"]}, "reject takes refs=[id]"),
])
def test_action_argument_rules(seeded: Seeded, args: dict[str, Any], needle: str) -> None:
    head = git(seeded.path, "rev-parse", "refs/looma/ledger")
    e = _err(call(seeded.path, "correct", args))
    assert e["code"] == "bad_arguments" and needle in e["message"]
    assert git(seeded.path, "rev-parse", "refs/looma/ledger") == head  # nothing written


def test_merge_with_itself_is_rejected(seeded: Seeded) -> None:
    e = _err(call(seeded.path, "correct", {"action": "merge",
                                           "refs": [seeded.oauth, seeded.oauth[:8]]}))
    assert e["code"] == "bad_arguments" and "itself" in e["message"]


def test_unknown_tool_is_a_protocol_error(seeded: Seeded) -> None:
    with pytest.raises(RpcFailure) as exc:
        Strict(seeded.path).request("tools/call", {"name": "drop_database", "arguments": {}})
    assert exc.value.error["code"] == -32602 and "drop_database" in exc.value.error["message"]


@pytest.mark.parametrize("name,args", [
    ("list_work", {"stauts": "done"}), ("resume_work", {"goal": "x", "budjet": 500}),
    ("correct", {"action": "rename", "refs": ["wi_abcd"], "title": "x", "force": True}),
])
def test_unknown_arguments_are_refused(seeded: Seeded, name: str, args: dict[str, Any]) -> None:
    e = _err(call(seeded.path, name, args))
    assert e["code"] == "bad_arguments" and "Extra inputs are not permitted" in e["message"]
