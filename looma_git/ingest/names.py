"""Which file names the plain-file agents' discovery lists as transcripts: shared by the
adapters' discovery and the hook's scan check (hooks/scan.py), which must not import the
adapters (the hook path stays light)."""

from __future__ import annotations

CLAUDE_NOT_TRANSCRIPTS = frozenset({"journal.jsonl", "history.jsonl"})
CODEX_SUFFIXES = (".jsonl.zst", ".jsonl", ".json")


def listed(agent: str, name: str) -> bool:
    """Whether `agent`'s discovery may list a file of this name (in a directory it scans);
    True for an agent it does not know (the caller then looks closer)."""
    if agent == "claude-code":
        return name.endswith(".jsonl") and name not in CLAUDE_NOT_TRANSCRIPTS
    if agent == "codex":
        return name.startswith("rollout-") and name.endswith(CODEX_SUFFIXES)
    if agent == "gemini-cli":
        return name.endswith(".jsonl") or name == "logs.json" \
            or (name.startswith("session-") and name.endswith(".json"))
    return True
