"""`correct`: each action appends one user op naming the MCP client, read back with real git."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git
from tests.mcp.client import call, text, tool_calls
from tests.mcp.conftest import Seeded


def _op_yaml(repo: Path, op_id: str) -> str:
    """The op file as git stores it on refs/looma/ledger."""
    return git(repo, "show", f"refs/looma/ledger:ops/{op_id[:2]}/{op_id}.yaml")


def _titles(repo: Path) -> dict[str, str]:
    r = call(repo, "list_work")
    return {w["id"]: w["title"] for w in r.structured_content["workitems"]}


def test_rename_records_the_mcp_client_as_actor_and_undo_restores(seeded: Seeded) -> None:
    head = git(seeded.path, "rev-parse", "refs/looma/ledger")
    r = call(seeded.path, "correct", {"action": "rename", "refs": [seeded.refresh],
                                      "title": "Refresh OAuth tokens",
                                      "rationale": "clearer name"})
    assert not r.is_error, text(r)
    sc = r.structured_content
    assert sc["op"] == "workitem.rename" and sc["target"] == seeded.refresh
    assert sc["actor"] == "claude-code"
    assert sc["undo"] == f"correct(action='undo', refs=['{sc['op_id'][:12]}'])"
    # Real git: one new ledger commit, authored by the client on behalf of the git user.
    assert git(seeded.path, "rev-parse", "refs/looma/ledger^") == head
    assert git(seeded.path, "log", "-1", "--format=%an <%ae>", "refs/looma/ledger") == \
        "claude-code <test@example.com>"
    op = _op_yaml(seeded.path, sc["op_id"])
    assert "kind: user" in op and "name: claude-code" in op and "clearer name" in op
    assert _titles(seeded.path)[seeded.refresh] == "Refresh OAuth tokens"

    u = call(seeded.path, "correct", {"action": "undo", "refs": [sc["op_id"][:12]]})
    assert not u.is_error, text(u)
    assert u.structured_content["op"] == "undo" and u.structured_content["target"] == sc["op_id"]
    from ruamel.yaml import YAML

    undo_op = YAML(typ="safe").load(_op_yaml(seeded.path, u.structured_content["op_id"]))
    assert undo_op["inverse_of"] == sc["op_id"]
    assert _titles(seeded.path)[seeded.refresh] == "Token refresh"


def test_merge_fuses_first_into_second(seeded: Seeded) -> None:
    r = call(seeded.path, "correct", {"action": "merge", "refs": [seeded.refresh, seeded.oauth]})
    assert not r.is_error, text(r)
    assert r.structured_content["op"] == "workitem.merge"
    assert r.structured_content["target"] == seeded.oauth
    titles = _titles(seeded.path)
    assert seeded.refresh not in titles and seeded.oauth in titles
    # The refresh commit's note now names the surviving WorkItem.
    note = git(seeded.path, "notes", "--ref=looma", "show", seeded.commits[1])
    assert seeded.oauth in note


def test_split_by_files(seeded: Seeded) -> None:
    r = call(seeded.path, "correct", {
        "action": "split", "refs": [seeded.oauth], "by": "files",
        "parts": [{"title": "OAuth core", "members": ["auth/oauth.py"]},
                  {"title": "OAuth routes", "members": ["auth/routes.py"]}]})
    assert not r.is_error, text(r)
    assert r.structured_content["op"] == "workitem.split"
    titles = set(_titles(seeded.path).values())
    assert {"OAuth core", "OAuth routes"} <= titles and "Implement OAuth Login" not in titles


def test_false_positive_removes_a_workitem(seeded: Seeded) -> None:
    r = call(seeded.path, "correct", {"action": "false_positive", "refs": [seeded.docs],
                                      "rationale": "not real work"})
    assert not r.is_error, text(r)
    assert r.structured_content["op"] == "node.false_positive"
    assert seeded.docs not in _titles(seeded.path)


def test_reject_and_promote_a_memory(seeded: Seeded) -> None:
    rej, promo = tool_calls(seeded.path, [
        ("correct", {"action": "reject", "refs": [seeded.todo]}),
        ("correct", {"action": "promote", "refs": [seeded.decision]})])
    assert rej.structured_content["op"] == "memory.reject", text(rej)
    assert promo.structured_content["op"] == "memory.promote", text(promo)
    b = call(seeded.path, "resume_work", {"work": seeded.oauth}).structured_content["bundle"]
    assert b["todos"] == []
    assert b["decisions"][0]["confidence"] == 1.0


@pytest.mark.parametrize("client,expected", [
    (None, "mcp-client"),  # the SDK's own default clientInfo.name
    ("Evil\nName <x@y>", "EvilName x@y"),  # cannot break the commit author line
])
def test_actor_name_is_sanitized(seeded: Seeded, client: str | None, expected: str) -> None:
    r = call(seeded.path, "correct", {"action": "rename", "refs": [seeded.docs],
                                      "title": "API docs"}, client=client)
    assert r.structured_content["actor"] == expected, text(r)
    assert git(seeded.path, "log", "-1", "--format=%an", "refs/looma/ledger") == expected
