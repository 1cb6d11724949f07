"""The adapter registry: agent name -> lazily imported Adapter class."""

from __future__ import annotations

import importlib

from looma_git.errors import UsageError
from looma_git.ingest.base import Adapter

# agent name -> "module:ClassName"; modules are imported only when that agent is ingested.
ADAPTERS: dict[str, str] = {
    "claude-code": "looma_git.ingest.claude:ClaudeAdapter",
    "codex": "looma_git.ingest.codex:CodexAdapter",
    "gemini-cli": "looma_git.ingest.gemini:GeminiAdapter",
    "cursor": "looma_git.ingest.cursor:CursorAdapter",
    "opencode": "looma_git.ingest.opencode:OpenCodeAdapter",
    "windsurf": "looma_git.ingest.windsurf:WindsurfAdapter",
}


class AdapterUnavailable(Exception):
    """A registered adapter whose module/class cannot be imported (not written yet, broken)."""


def get_adapter(name: str) -> Adapter:
    """A fresh instance of the adapter for `name`.

    Raises UsageError for an unknown agent name and AdapterUnavailable when the module or class
    is missing, so the engine can note it and carry on with the other agents.
    """
    target = ADAPTERS.get(name)
    if target is None:
        raise UsageError(f"unknown agent {name!r}", hint="agents: " + ", ".join(ADAPTERS))
    module_name, cls_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AdapterUnavailable(f"{name}: adapter module {module_name} unavailable: {exc}") \
            from exc
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise AdapterUnavailable(f"{name}: {module_name} has no {cls_name}")
    adapter: Adapter = cls()
    return adapter


def all_adapters() -> list[str]:
    """Every registered agent name, in registry order."""
    return list(ADAPTERS)
