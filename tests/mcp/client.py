"""A strict in-process MCP client: drives looma's real dispatcher message by message and checks
every result the way the TypeScript SDK client does (structuredContent validated against the
tool's declared outputSchema; error results carry none), plus looma's own byte budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from mcp.types import CallToolResult, Tool

from looma_git.mcp.shape import DEFAULT_BUDGET, TOKEN_BYTES

PROTOCOL = "2025-11-25"


_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator for `schema`, the schema itself checked against the 2020-12 metaschema once
    per test session (`jsonschema.validate` checks it again on every call: most of the cost)."""
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        jsonschema.Draft202012Validator.check_schema(schema)
        _VALIDATORS[key] = jsonschema.Draft202012Validator(schema)
    return _VALIDATORS[key]


class Strict:
    """One MCP session against a server for `repo`, validating everything it receives."""

    def __init__(self, repo: Path | str | None, client: str | None = "claude-code",
                 roots: list[str] | None = None) -> None:
        from looma_git.mcp.server import build_dispatcher

        self.dispatcher, _ = build_dispatcher(repo)
        self._id = 0
        caps: dict[str, Any] = {"roots": {"listChanged": True}} if roots is not None else {}
        params: dict[str, Any] = {"protocolVersion": PROTOCOL, "capabilities": caps}
        if client is not None:
            params["clientInfo"] = {"name": client, "version": "1.0"}
        init = self.request("initialize", params)
        assert init["protocolVersion"] == PROTOCOL
        self.notify("notifications/initialized")
        for req in self.dispatcher.take_outgoing():  # answer roots/list like a client would
            assert req["method"] == "roots/list"
            self.dispatcher.handle({"jsonrpc": "2.0", "id": req["id"], "result": {
                "roots": [{"uri": u} for u in roots or []]}})
        self.tools = {t["name"]: t for t in self.request("tools/list")["tools"]}
        for t in self.tools.values():
            Tool.model_validate(t)  # the SDK's own type accepts the listing
            _validator(t["inputSchema"])
            _validator(t["outputSchema"])

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            msg["params"] = params
        raw = json.loads(json.dumps(self.dispatcher.handle(msg)))  # what crosses the wire
        assert raw["id"] == self._id
        if "error" in raw:
            raise RpcFailure(raw["error"])
        return raw["result"]

    def notify(self, method: str) -> None:
        assert self.dispatcher.handle({"jsonrpc": "2.0", "method": method}) is None

    def call(self, name: str, args: dict[str, Any] | None = None) -> CallToolResult:
        raw = self.request("tools/call", {"name": name, "arguments": args or {}})
        check_result(self.tools[name], raw, args or {})
        return CallToolResult.model_validate(raw)


class RpcFailure(Exception):
    """A JSON-RPC error response."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


def check_result(tool: dict[str, Any], raw: dict[str, Any], args: dict[str, Any]) -> None:
    """What a strict client checks, plus the budget of both forms."""
    assert raw["content"] and all(c["type"] == "text" for c in raw["content"])
    if raw.get("isError"):
        assert "structuredContent" not in raw, "error results must not carry structuredContent"
        body = raw["content"][0]["text"].splitlines()[-1]
        err = json.loads(body)["error"]
        assert {"code", "message", "recoverable"} <= set(err)
        return
    sc = raw.get("structuredContent")
    assert sc is not None, "a tool with an outputSchema must return structuredContent"
    error = jsonschema.exceptions.best_match(_validator(tool["outputSchema"]).iter_errors(sc))
    if error is not None:
        raise error
    budget = args.get("budget", 2000 if tool["name"] == "resume_work" else DEFAULT_BUDGET)
    cap = budget * TOKEN_BYTES
    assert len(json.dumps(sc, ensure_ascii=False, separators=(",", ":")).encode()) <= cap
    assert len(raw["content"][0]["text"].encode()) <= cap


def tool_calls(repo: Path | str | None, calls: list[tuple[str, dict[str, Any]]],
               client: str | None = "claude-code") -> list[CallToolResult]:
    """Run `calls` in one MCP session against a server for `repo`; return the results."""
    s = Strict(repo, client)
    return [s.call(name, args) for name, args in calls]


def call(repo: Path | str | None, name: str, args: dict[str, Any] | None = None,
         client: str | None = "claude-code") -> CallToolResult:
    """One tool call in its own session."""
    return tool_calls(repo, [(name, args or {})], client)[0]


def list_tools(repo: Path | str | None) -> list[Tool]:
    return [Tool.model_validate(t) for t in Strict(repo).tools.values()]


def text(result: Any) -> str:
    """The text content of a tool result."""
    return "\n".join(block.text for block in result.content)


def error_of(result: Any) -> dict[str, Any]:
    """The structured error a tool error result carries in its text."""
    assert result.is_error, text(result)
    assert result.structured_content is None
    return dict(json.loads(text(result).splitlines()[-1])["error"])
