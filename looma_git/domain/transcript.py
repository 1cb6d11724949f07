"""What an agent transcript normalises to: roles, tool calls and events; no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

# Roles of a NormalizedEvent.
ROLES = ("user", "assistant", "tool", "system", "summary")

# Kinds of a ToolCall.
TOOL_KINDS = ("edit", "write", "read", "shell", "search", "task", "web", "other")


@dataclass(frozen=True)
class ToolCall:
    """One tool invocation normalized from any agent's native shape.

    `paths` are as the agent gave them (absolute or relative to the session cwd);
    making them repo-relative is the ingest engine's job, not the adapter's.
    """

    name: str  # native tool name, e.g. "Edit", "exec_command", "apply_patch"
    kind: str  # one of TOOL_KINDS
    paths: tuple[str, ...] = ()
    command: str | None = None  # shell command line for kind == "shell"
    exit_code: int | None = None
    is_error: bool = False
    test_outcome: str | None = None  # "passed" | "failed" when the command ran tests
    call_id: str | None = None


@dataclass(frozen=True)
class NormalizedEvent:
    """One message/event of one agent session, in the shape every later stage reads."""

    event_id: str  # content hash; stable across re-ingests
    source: str  # agent name, one of looma_git.ingest.registry.AGENTS
    session_native_id: str
    project_root: str | None  # the session's cwd (or root) as recorded by the agent
    git_remote: str | None
    git_branch: str | None
    seq: int  # order within the session
    ts: str | None  # ISO-8601 UTC "YYYY-MM-DDTHH:MM:SS(.fff)Z"
    role: str  # one of ROLES
    agent_model: str | None
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    raw_json: str = ""
    schema_version: str = "1"
    extra: tuple[tuple[str, str], ...] = field(default=())  # small adapter-specific facts
    # The raw record by reference instead of `raw_json`: (byte offset, length) of each of its
    # lines in the source file, which stays on disk (see index/events.raw_record).
    raw_spans: tuple[tuple[int, int], ...] = ()
