"""Every tool advertises a title, behaviour annotations, and input and output schemas."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.client import list_tools

READ_TOOLS = {"resume_work", "ask", "list_work", "timeline", "recall"}


def test_every_tool_has_title_annotations_and_schemas(repo: Path) -> None:
    tools = {t.name: t for t in list_tools(repo)}
    assert set(tools) == READ_TOOLS | {"correct"}
    for name, t in tools.items():
        assert t.title and t.description, name
        assert t.input_schema["type"] == "object", name
        assert t.output_schema and t.output_schema.get("properties"), name
        a = t.annotations
        assert a is not None and a.open_world_hint is False, name
        if name in READ_TOOLS:
            assert (a.read_only_hint, a.idempotent_hint) == (True, True), name
        else:
            assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == \
                (False, False, False)


def test_input_schemas_are_typed(repo: Path) -> None:
    tools = {t.name: t for t in list_tools(repo)}
    correct = tools["correct"].input_schema
    props = correct["properties"]
    assert props["action"]["enum"] == ["merge", "split", "rename", "false_positive", "promote",
                                       "reject", "undo"]
    assert props["refs"]["items"]["pattern"].startswith("^")
    assert (props["refs"]["minItems"], props["refs"]["maxItems"]) == (1, 2)
    assert set(correct["required"]) == {"action", "refs"}
    assert "ctx" not in props  # the Context parameter is injected, never client-supplied
    assert props["by"]["enum"] == ["sessions", "files"]
    ask = tools["ask"].input_schema["properties"]
    assert ask["query"]["minLength"] == 1 and (ask["limit"]["minimum"], ask["limit"]["maximum"]) \
        == (1, 50)
    assert tools["timeline"].input_schema["properties"]["work"]["pattern"] == "^wi_[0-9a-f]{4,64}$"


def test_output_schemas_carry_confidence_and_provenance(repo: Path) -> None:
    tools = {t.name: t for t in list_tools(repo)}
    ask = tools["ask"].output_schema
    fact = ask["$defs"]["AskFact"]["properties"]
    assert {"confidence", "band", "source", "status"} <= set(fact)
    assert "Provenance" in ask["$defs"]
    resume = tools["resume_work"].output_schema
    assert resume["properties"]["state"]["enum"] == ["confident", "ambiguous", "cold"]
    assert {"confidence", "band"} <= set(resume["$defs"]["MemoryFact"]["properties"])
    work = tools["list_work"].output_schema["$defs"]["WorkItemRow"]["properties"]
    assert {"confidence", "band", "sessions", "commits"} <= set(work)
    assert {"op_id", "actor", "undo"} <= set(tools["correct"].output_schema["properties"])
