"""Which Codex rollout records and texts carry conversation: the quiet, noise and
harness-injected kinds the replay (codex/records.py) drops or counts."""

from __future__ import annotations

import re

CWD_RE = re.compile(r"<cwd>(.*?)</cwd>", re.DOTALL)
WRAPPER_RE = re.compile(r"^<([A-Za-z_][\w -]*)>.*</\1>$", re.DOTALL)
INJECTED_PREFIXES = (
    ("<environment_context>", "environment_context"),
    ("<user_instructions>", "user_instructions"),
    ("# AGENTS.md instructions", "agents_md"),
    ("<INSTRUCTIONS>", "agents_md"),
    ("<permissions instructions>", "permissions"),
)
TEXT_TYPES = {"input_text", "output_text", "text"}
# event_msg types that carry nothing an event needs (metadata, lifecycle, UI echoes).
QUIET_EVENTS = {
    "token_count", "task_started", "task_complete", "turn_started", "turn_complete",
    "turn_aborted", "context_compacted", "thread_rolled_back", "entered_review_mode",
    "exited_review_mode", "collab_waiting_begin", "collab_waiting_end", "exec_command_begin",
    "patch_apply_begin", "mcp_tool_call_begin", "web_search_begin", "session_configured",
    "shutdown_complete", "plan_update", "turn_diff", "item_started", "item_completed",
    "undo_started", "undo_completed", "view_image_tool_call", "mcp_list_tools_response",
    "list_custom_prompts_response", "get_history_entry_response", "exec_approval_request",
    "apply_patch_approval_request", "collab_agent_spawn_begin", "raw_response_item",
    "thread_settings_applied", "thread_name_updated", "goal_updated",
}
# Top-level rollout record types that carry no conversation (0.16x+): consumed silently.
QUIET_RECORDS = {"world_state", "token_usage_record", "inter_agent_communication_metadata"}
NOISE_EVENTS = {"agent_reasoning": "reasoning", "agent_reasoning_raw_content": "reasoning",
                "agent_reasoning_section_break": "reasoning", "background_event": "background",
                "stream_error": "stream_error", "web_search_end": "duplicate_result"}


def injected_reason(text: str) -> str | None:
    """Why a user-role text is harness-injected context rather than something the user typed."""
    stripped = text.strip()
    for prefix, reason in INJECTED_PREFIXES:
        if stripped.startswith(prefix):
            return reason
    if WRAPPER_RE.match(stripped):
        return "wrapper_tag"
    return None
