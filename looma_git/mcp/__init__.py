"""The MCP server over the api (optional extra)."""
