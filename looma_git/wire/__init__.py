"""Every JSON shape looma emits: `--json` outputs (wire/cli.py) and MCP tool results (wire/mcp.py).

Importing this package imports nothing (no pydantic): the MCP server's `initialize` and
`looma --help` stay light; the models load with the module that needs them.
"""
