"""The agent registry, the only list of agents: name -> lazily imported Adapter class."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from looma_git.errors import UsageError

if TYPE_CHECKING:  # the registry stays import-light: `looma --help` reads the agent names
    from looma_git.ingest.base import Adapter


@dataclass(frozen=True)
class Agent:
    """One supported agent: its name, its adapter class and where its transcripts live."""

    name: str
    adapter: str  # "module:ClassName"; imported only when that agent is ingested
    default_roots: tuple[str, ...]  # relative to HOME; shown by `looma ingest --verbose`


# Adding an agent: a subpackage looma_git/ingest/<agent>/ with an Adapter class, and one line
# here (CONTRIBUTING.md "How to add an agent"). docs/adapters.md has the full discovery rules.
AGENTS: tuple[Agent, ...] = (
    Agent("claude-code", "looma_git.ingest.claude:ClaudeAdapter", ("~/.claude/projects",)),
    Agent("codex", "looma_git.ingest.codex:CodexAdapter", ("~/.codex/sessions",)),
    Agent("gemini-cli", "looma_git.ingest.gemini:GeminiAdapter", ("~/.gemini/tmp",)),
    Agent("cursor", "looma_git.ingest.cursor:CursorAdapter",
          ("~/.cursor", "~/.config/Cursor/User")),
    Agent("opencode", "looma_git.ingest.opencode:OpenCodeAdapter", ("~/.local/share/opencode",)),
    Agent("windsurf", "looma_git.ingest.windsurf:WindsurfAdapter",
          ("~/.codeium/windsurf", "~/.config/Windsurf/User")),
)

# agent name -> "module:ClassName" (tests swap an entry to simulate a missing adapter).
ADAPTERS: dict[str, str] = {a.name: a.adapter for a in AGENTS}
_ROOTS: dict[str, tuple[str, ...]] = {a.name: a.default_roots for a in AGENTS}


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


def default_roots(name: str) -> tuple[str, ...]:
    """Where `name` keeps its transcripts by default, as `~/...` paths (display only)."""
    return _ROOTS.get(name, ())
