"""The library surface the CLI, MCP server and hooks call: one module per area; no env, no printing."""
