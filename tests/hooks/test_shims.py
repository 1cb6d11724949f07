"""The packaged template, its rendering and the reference copies in top-level hooks/."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from looma_git.hooks import shims
from tests.helpers import REPO_ROOT

REFERENCE = REPO_ROOT / "hooks"


@pytest.mark.parametrize("hook", shims.HOOK_NAMES)
def test_reference_copy_matches_template_render(hook: str) -> None:
    expected = shims.render(hook, shims.PLACEHOLDER_PYTHON)
    path = REFERENCE / hook
    if os.environ.get("LOOMA_UPDATE_GOLDEN") == "1":
        path.write_text(expected)
        path.chmod(0o755)
    assert path.read_text() == expected, (
        f"hooks/{hook} drifted from looma_git/hooks/templates/shim.sh; "
        "regenerate with LOOMA_UPDATE_GOLDEN=1")
    assert path.stat().st_mode & stat.S_IXUSR


@pytest.mark.parametrize("hook", shims.HOOK_NAMES)
def test_render_is_valid_posix_sh(hook: str) -> None:
    text = shims.render(hook, "/opt/it's here/python")
    proc = subprocess.run(["sh", "-n"], input=text, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert "@HOOK@" not in text and "@PYTHON@" not in text
    assert shims.is_looma_shim(text.encode())
    assert shims.baked_python(text) == "/opt/it's here/python"


def test_the_quoted_interpreter_survives_the_shell() -> None:
    text = shims.render("post-commit", "/opt/it's here/python")
    line = next(ln for ln in text.splitlines() if ln.startswith("LOOMA_PYTHON="))
    out = subprocess.run(["sh", "-c", f'{line}\nprintf %s "$LOOMA_PYTHON"'], text=True,
                         capture_output=True, check=True).stdout
    assert out == "/opt/it's here/python"


def test_foreign_content_is_not_ours() -> None:
    assert not shims.is_looma_shim(b"#!/bin/sh\necho hi\n")
    assert not shims.is_looma_shim(b"")
    assert shims.baked_python("#!/bin/sh\n") is None


def test_unknown_hook_and_bad_interpreter_are_rejected() -> None:
    with pytest.raises(ValueError):
        shims.render("pre-commit", "/usr/bin/python3")
    with pytest.raises(ValueError):
        shims.render("post-commit", "/usr/bin/py\nthon")


def test_post_commit_path_runs_no_python() -> None:
    # Until the detached launch, the post-commit path may only use git, date, mkdir.
    text = shims.render("post-commit", "/x/python")
    body = text.split("looma_drain() {")[0]
    code = [ln for ln in body.splitlines() if not ln.lstrip().startswith("#")]
    assert not [ln for ln in code if "python" in ln.replace("LOOMA_PYTHON", "").lower()
                and not ln.startswith("LOOMA_PYTHON=")]
