"""Compatibility name for the transcript types, which live in `looma_git.domain.transcript`."""

from looma_git.domain.transcript import (
    ROLES,
    TOOL_KINDS,
    NormalizedEvent,
    ToolCall,
)

__all__ = ["ROLES", "TOOL_KINDS", "NormalizedEvent", "ToolCall"]
