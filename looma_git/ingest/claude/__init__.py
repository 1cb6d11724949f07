"""The Claude Code adapter: `~/.claude/projects/**.jsonl` records -> NormalizedEvents."""

from __future__ import annotations

from pathlib import Path

from looma_git.ingest.base import Cursor, DiscoveryEnv, ReadResult, Skip, Source
from looma_git.ingest.claude import discovery
from looma_git.ingest.claude.reader import Reader
from looma_git.ingest.claude.records import AGENT

__all__ = ["AGENT", "ClaudeAdapter", "default_roots"]


class ClaudeAdapter:
    """Claude Code JSONL transcripts (TRANSCRIPTS.md §1): streaming-split replies merged by
    `message.id`, tool results attached to their calls, subagent files as child sessions."""

    name = AGENT

    def __init__(self) -> None:
        self.discovery_skips: list[Skip] = []

    def discover(self, env: DiscoveryEnv) -> list[Source]:
        """Session and subagent files under every Claude projects root."""
        self.discovery_skips = []
        return discovery.discover(env, self.discovery_skips)

    def read(self, source: Source, cursor: Cursor | None) -> ReadResult:
        """Events after `cursor`; re-reads from the start of any still-open reply group."""
        return Reader(source, cursor).run()


def default_roots(env: DiscoveryEnv) -> list[Path]:
    """The projects roots discovery would scan under `env` (for `looma status` and docs)."""
    return discovery.project_roots(env)
