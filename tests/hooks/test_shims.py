"""The packaged template, its rendering and the reference copy in top-level hooks/."""

from __future__ import annotations

import stat
import subprocess

import pytest

from looma_git.hooks import shims
from tests.golden import UPDATE, check_text
from tests.helpers import REPO_ROOT

REFERENCE = REPO_ROOT / "hooks" / "looma-shim"


def test_reference_copy_matches_template_render() -> None:
    expected = shims.render(shims.PLACEHOLDER_PYTHON)
    if UPDATE:
        REFERENCE.write_text(expected)
        REFERENCE.chmod(0o755)
    check_text(REFERENCE, expected, "hooks/looma-shim drifted from looma_git/hooks/templates/shim.sh")
    assert REFERENCE.stat().st_mode & stat.S_IXUSR
    # One shim for every hook: nothing else in hooks/ but the README.
    assert sorted(p.name for p in REFERENCE.parent.iterdir()) == ["README.md", "looma-shim"]


def test_render_is_valid_posix_sh() -> None:
    text = shims.render("/opt/it's here/python")
    proc = subprocess.run(["sh", "-n"], input=text, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert "@PYTHON@" not in text and "@HOOK@" not in text
    assert shims.is_looma_shim(text.encode())
    assert shims.baked_python(text) == "/opt/it's here/python"


def test_the_quoted_interpreter_survives_the_shell() -> None:
    text = shims.render("/opt/it's here/python")
    line = next(ln for ln in text.splitlines() if ln.startswith("LOOMA_PYTHON="))
    out = subprocess.run(["sh", "-c", f'{line}\nprintf %s "$LOOMA_PYTHON"'], text=True,
                         capture_output=True, check=True).stdout
    assert out == "/opt/it's here/python"


@pytest.mark.parametrize(("path", "name"), [
    ("/r/.git/hooks/post-commit", "post-commit"),
    ("/r/.git/hooks/pre-push.legacy", "pre-push"),  # pre-commit's slot
    ("/r/.git/hooks/post-merge.looma", "post-merge"),  # our slot beside lefthook
    ("post-rewrite", "post-rewrite"),
])
def test_the_hook_name_comes_from_dollar_zero(path: str, name: str) -> None:
    text = shims.render("/x/python")
    head = text.split("# Per-worktree git dir")[0]
    out = subprocess.run(["sh", "-c", head + 'printf "%s|%s" "$LOOMA_HOOK" "$looma_dir"', path],
                         text=True, capture_output=True, check=True).stdout
    hook, _, where = out.partition("|")
    assert hook == name
    assert where == (path.rsplit("/", 1)[0] if "/" in path else ".")


def test_foreign_content_is_not_ours() -> None:
    assert not shims.is_looma_shim(b"#!/bin/sh\necho hi\n")
    assert not shims.is_looma_shim(b"")
    assert shims.baked_python("#!/bin/sh\n") is None


def test_bad_interpreter_is_rejected() -> None:
    with pytest.raises(ValueError):
        shims.render("/usr/bin/py\nthon")


def test_post_commit_path_runs_no_python() -> None:
    # Until the detached launch, the post-commit path may only use git, date, mkdir, find.
    text = shims.render("/x/python")
    body = text.split("looma_alive() {")[0]
    code = [ln for ln in body.splitlines() if not ln.lstrip().startswith("#")]
    assert not [ln for ln in code if "python" in ln.replace("LOOMA_PYTHON", "").lower()
                and not ln.startswith("LOOMA_PYTHON=")]
