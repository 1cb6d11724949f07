"""`looma demo` (the README's first command) runs offline and shows every step."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, looma


def test_demo_end_to_end(tmp_path: Path) -> None:
    proc = looma(tmp_path, "demo", "--dir", str(tmp_path / "demo"), timeout=300)
    out = proc.stdout
    for needle in ("$ looma ingest", "claude-code", "codex", "gemini-cli", "cursor", "opencode",
                   "confident:", "ambiguous:", "renamed", "# looma-note v1",
                   "(teammate) looma work", "Done. Explore:"):
        assert needle in out, needle
    repo = tmp_path / "demo" / "repo"
    assert git(repo, "notes", "--ref=looma", "list")
    assert git(repo, "fsck", "--strict", check=True) == ""
    clone = tmp_path / "demo" / "teammate-clone"
    assert git(clone, "rev-parse", "refs/looma/ledger") == git(repo, "rev-parse",
                                                               "refs/looma/ledger")
    teammate = out.split("(teammate) looma work")[1]
    assert "[conf " in teammate and "Search ranking" in teammate
