"""The words the domain uses for kinds, statuses, lifecycles, bands and link origins."""

from __future__ import annotations

WORKITEM_KINDS = ("feature", "bugfix", "refactor", "migration", "investigation", "chore")
WORKITEM_STATUSES = ("active", "done", "abandoned")
MEMORY_KINDS = ("decision", "todo", "bug", "architecture")
LIFECYCLES = ("active", "superseded", "expired", "invalidated")
# Confidence bands (thresholds in pipeline/confidence.py); "none" is what a person's
# rejection or false-positive mark leaves.
BANDS = ("high", "medium", "low", "none")
LINK_BY = ("hook", "backfill", "user", "relink")
# What a person decided about a WorkItem or memory; None: nothing, the score stands.
DECISIONS = ("promote", "reject")
