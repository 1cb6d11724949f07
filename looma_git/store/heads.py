"""The ledger head, read the cheap way (ref files first, `git rev-parse` only when needed)."""

from __future__ import annotations

from looma_git.gitrepo import RepoPaths
from looma_git.store import git
from looma_git.store.refnames import LEDGER_REF


def ledger_head(paths: RepoPaths) -> str | None:
    """The current ledger commit, or None before the first write."""
    return git.resolve_ref(paths.common_dir, LEDGER_REF)
