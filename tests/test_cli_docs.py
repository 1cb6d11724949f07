"""docs/cli.md matches the click command tree (regenerate with LOOMA_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import os

from looma_git.cli.clidoc import render
from tests.helpers import REPO_ROOT


def test_cli_reference_is_current() -> None:
    path = REPO_ROOT / "docs" / "cli.md"
    text = render()
    if os.environ.get("LOOMA_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.read_text() == text, (
        "docs/cli.md is out of date: LOOMA_UPDATE_GOLDEN=1 pytest tests/test_cli_docs.py")
