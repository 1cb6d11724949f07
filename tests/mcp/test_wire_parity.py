"""MCP and the CLI speak one contract: each MCP result model extends the `--json` model that
means the same, and on a real ledger the fields both carry hold the same values."""

from __future__ import annotations

import json
from typing import Any

from looma_git.wire import ledger as cli_ledger
from looma_git.wire import mcp, read
from tests.helpers import cli
from tests.mcp.client import call
from tests.mcp.conftest import Seeded

# MCP model -> the CLI model it extends (the shared fields are declared once, there).
EXTENDS = {
    mcp.WorkItemRow: read.Rated, mcp.BundleWorkItem: read.Rated,
    mcp.ResumeMatchRow: read.Rated, mcp.AskFact: read.FactHead,
    mcp.RecallMemory: read.MemoryHead, mcp.TimelineRow: read.TimelineEntry,
    mcp.CorrectResult: cli_ledger.CorrectionOut, mcp.ToolErrorOut: cli_ledger.ErrorHead,
    mcp.ResumeResult: read.ResumeHead, mcp.RecallResult: read.RecallHead,
}


def test_mcp_models_extend_the_cli_models() -> None:
    for model, base in EXTENDS.items():
        assert issubclass(model, base), (model, base)
    # The heads are the CLI rows' own bases too: a field renamed on one side fails here.
    assert issubclass(read.WorkItemOut, read.Rated) and issubclass(read.ResumeMatchOut, read.Rated)
    assert issubclass(read.FactOut, read.FactHead)
    assert issubclass(read.RecallMemoryOut, read.MemoryHead)
    assert issubclass(read.ResumeOut, read.ResumeHead) and issubclass(read.RecallOut,
                                                                      read.RecallHead)
    assert issubclass(cli_ledger.ErrorBody, cli_ledger.ErrorHead)


def _cli_json(seeded: Seeded, *args: str) -> Any:
    """The CLI's document as MCP shows it: invisible characters stripped (MCP's one change
    to text, so hidden instructions never reach a model)."""
    from looma_git.mcp.text import clean

    return clean(json.loads(cli(seeded.path, *args, "--json").stdout))


def _head(doc: dict[str, Any], model: type) -> dict[str, Any]:
    return {k: doc[k] for k in model.model_fields}  # type: ignore[attr-defined]


def test_recall_carries_the_cli_values(seeded: Seeded) -> None:
    for entity in ("auth/oauth.py", "HEAD~1", "PKCE"):
        want = _cli_json(seeded, "recall", entity)
        got = call(seeded.path, "recall", {"entity": entity}).structured_content
        assert want["results"], entity
        assert (got["entity"], got["resolved"]) == (want["entity"], want["resolved"])
        assert len(got["results"]) == len(want["results"])
        for g, w in zip(got["results"], want["results"], strict=True):
            assert g["why"] == w["why"]
            assert _head(g["workitem"], read.Rated) == _head(w["workitem"], read.Rated)
            assert [_head(m, read.MemoryHead) for m in g["memories"]] == \
                [_head(m, read.MemoryHead) for m in w["memories"]]
            assert [m["evidence"] for m in g["memories"]] == [m["text"] for m in w["memories"]]
    by_rev = _cli_json(seeded, "recall", "HEAD~1")
    assert by_rev["resolved"] == [seeded.commits[0]]
    assert seeded.oauth in {h["workitem"]["id"] for h in by_rev["results"]}


def test_timeline_and_ask_carry_the_cli_values(seeded: Seeded) -> None:
    want = _cli_json(seeded, "timeline", seeded.oauth)
    got = call(seeded.path, "timeline", {"work": seeded.oauth}).structured_content
    assert len(want["entries"]) >= 4  # ops, commits, memories
    shared = [k for k in read.TimelineEntry.model_fields if k != "text"]
    assert [{k: e[k] for k in shared} for e in got["entries"]] == \
        [{k: e[k] for k in shared} for e in want["entries"]]
    assert [e["text"] or e["evidence"] for e in got["entries"]] == \
        [e["text"] for e in want["entries"]]
    want = _cli_json(seeded, "ask", "oauth tokens")
    got = call(seeded.path, "ask", {"query": "oauth tokens"}).structured_content
    assert want["facts"]
    assert [_head(f, read.FactHead) for f in got["facts"]] == \
        [_head(f, read.FactHead) for f in want["facts"]]


def test_correct_is_the_cli_correction_plus_the_actor(seeded: Seeded) -> None:
    got = call(seeded.path, "correct", {"action": "rename", "refs": [seeded.docs],
                                        "title": "Public API docs"}).structured_content
    op = _cli_json(seeded, "log", "-n", "1")["ops"][0]
    assert (got["op_id"], got["op"], got["target"]) == (op["id"], "workitem.rename", seeded.docs)
    assert got["actor"] == op["actor"]["name"] == "claude-code"
    blame = _cli_json(seeded, "blame", seeded.docs)["ops"]
    assert blame[-1]["id"] == got["op_id"]
    undo = cli(seeded.path, "correct", "undo", got["op_id"][:12], "--json").stdout
    assert set(json.loads(undo)) == set(cli_ledger.CorrectionOut.model_fields)


def test_resume_and_errors_carry_the_cli_values(seeded: Seeded) -> None:
    for goal in ("oauth login", "kubernetes helm chart"):
        want = _cli_json(seeded, "resume", goal)
        got = call(seeded.path, "resume_work", {"goal": goal}).structured_content
        assert (got["state"], got["goal"]) == (want["state"], want["goal"]), goal
        assert [c["id"] for c in got["candidates"]] == [c["id"] for c in want["candidates"]]
        assert [_head(c, read.Rated) for c in got["candidates"]] == \
            [_head(c, read.Rated) for c in want["candidates"]]
    proc = cli(seeded.path, "timeline", "wi_ffff", "--json", check=False)
    want = json.loads(proc.stdout)["error"]
    got = json.loads(call(seeded.path, "timeline", {"work": "wi_ffff"}).content[0].text
                     .splitlines()[-1])["error"]
    assert (got["code"], got["message"], got["matches"]) == \
        (want["code"], want["message"], want["matches"])


def test_mcp_reads_the_api_values_without_dumping_them(seeded: Seeded, monkeypatch) -> None:
    """The tools shape the api's typed values (wire/plain.py, what the CLI renders) by
    attribute: no `model_dump` of them and no JSON read back, yet the same rows come out."""
    from looma_git.wire import plain

    before = {name: call(seeded.path, name, args).structured_content for name, args in (
        ("list_work", {}), ("resume_work", {"goal": "oauth login"}), ("ask", {"query": "PKCE"}),
        ("timeline", {"work": seeded.oauth}), ("recall", {"entity": "auth/oauth.py"}))}

    def refuse(self: object, **kw: object) -> None:
        raise AssertionError(f"MCP dumped {type(self).__name__} instead of reading it")

    monkeypatch.setattr(plain._Wire, "model_dump", refuse)
    for name, args in (("list_work", {}), ("resume_work", {"goal": "oauth login"}),
                       ("ask", {"query": "PKCE"}), ("timeline", {"work": seeded.oauth}),
                       ("recall", {"entity": "auth/oauth.py"})):
        r = call(seeded.path, name, args)
        assert not r.is_error, r.content
        assert r.structured_content == before[name], name
