"""docs/cli.md and man/man1/*.1 match the click command tree (regenerate with
LOOMA_UPDATE_GOLDEN=1), and are the text `--help` prints."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from looma_git.cli import clidoc
from tests.golden import UPDATE
from tests.helpers import REPO_ROOT, cli


def test_cli_reference_is_current() -> None:
    path = REPO_ROOT / "docs" / "cli.md"
    if UPDATE:
        clidoc.write_all(REPO_ROOT)
    assert path.read_text() == clidoc.render(), (
        "docs/cli.md is out of date: LOOMA_UPDATE_GOLDEN=1 pytest tests/test_cli_docs.py")
    mandir = REPO_ROOT / "man" / "man1"
    pages = clidoc.man_pages()
    assert sorted(p.name for p in mandir.glob("*.1")) == sorted(pages)
    for name, text in pages.items():
        assert (mandir / name).read_text() == text, f"man/man1/{name} is out of date"


def test_reference_is_what_help_prints(tmp_path) -> None:
    text = clidoc.render()
    assert "Usage: looma looma" not in text
    assert "\n  --help " not in text  # the CLI shows `-h, --help`
    for args in (["--help"], ["correct", "split", "--help"], ["resume", "-h"]):
        shown = cli(tmp_path, *args).stdout.rstrip()
        assert shown in text, args
    assert "## Exit codes" in text and "| 130 |" in text


def test_every_command_has_a_man_page_and_git_looma_one() -> None:
    pages = clidoc.man_pages()
    for path, _cmd, _ctx in clidoc.walk():
        assert f"{'-'.join(path)}.1" in pages
    assert "git-looma.1" in pages and ".B git looma" in pages["git-looma.1"]


@pytest.mark.skipif(not shutil.which("man"), reason="man is not installed")
def test_man_renders_the_pages() -> None:
    for name in ("looma.1", "git-looma.1", "looma-correct-split.1"):
        proc = subprocess.run(["man", "-l", str(REPO_ROOT / "man" / "man1" / name)],
                              capture_output=True, text=True, env=dict(os.environ, MANWIDTH="80",
                                                                       MANPAGER="cat"))
        assert proc.returncode == 0 and "EXIT STATUS" in proc.stdout, proc.stderr


def test_looma_help_command(tmp_path) -> None:
    out = cli(tmp_path, "help", "correct", "split").stdout
    assert out.startswith("Usage: looma correct split")
    proc = cli(tmp_path, "help", "nosuch", check=False)
    assert proc.returncode == 7
