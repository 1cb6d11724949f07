"""Drive the real MCP server in-process (`Client(server)`, no subprocess) from sync tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio


def tool_calls(repo: Path | str, calls: list[tuple[str, dict[str, Any]]],
               client: str | None = "claude-code") -> list[Any]:
    """Run `calls` in one MCP session against a server for `repo`; return the results."""
    from mcp import Client
    from mcp.types import Implementation

    from looma_git.mcp.server import build_server

    server = build_server(repo)
    info = Implementation(name=client, version="1.0") if client is not None else None
    out: list[Any] = []

    async def main() -> None:
        async with Client(server, client_info=info) as c:
            for name, args in calls:
                out.append(await c.call_tool(name, args))

    anyio.run(main)
    return out


def call(repo: Path | str, name: str, args: dict[str, Any] | None = None,
         client: str | None = "claude-code") -> Any:
    """One tool call in its own session."""
    return tool_calls(repo, [(name, args or {})], client)[0]


def list_tools(repo: Path | str) -> list[Any]:
    from mcp import Client

    from looma_git.mcp.server import build_server

    out: list[Any] = []

    async def main() -> None:
        async with Client(build_server(repo)) as c:
            out.extend((await c.list_tools()).tools)

    anyio.run(main)
    return out


def text(result: Any) -> str:
    """The text content of a tool result."""
    return "\n".join(block.text for block in result.content)
