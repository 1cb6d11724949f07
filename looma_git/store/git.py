"""The one runner of the `git` binary: every git subprocess in looma's core goes through here."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import IO, Any

Where = Path | str | None


def _argv(args: tuple[str, ...], git_dir: Where) -> list[str]:
    return ["git", *([f"--git-dir={git_dir}"] if git_dir is not None else []), *args]


def run(cwd: Where, *args: str, git_dir: Where = None, input: str | None = None,
        errors: str | None = None, timeout: float | None = None,
        stdin: int | IO[Any] | None = None) -> subprocess.CompletedProcess[str]:
    """`git ARGS` in `cwd` (or with `--git-dir=git_dir`), text captured, never raising on a
    non-zero exit (callers read `returncode`). OSError when git cannot be started."""
    return subprocess.run(_argv(args, git_dir), cwd=cwd, capture_output=True, text=True,
                          input=input, errors=errors, timeout=timeout, check=False,
                          stdin=stdin if input is None else None)


def run_bytes(cwd: Where, *args: str, git_dir: Where = None, input: bytes | None = None
              ) -> subprocess.CompletedProcess[bytes]:
    """`run` with bytes in and out (patches, -z listings of arbitrary file names)."""
    return subprocess.run(_argv(args, git_dir), cwd=cwd, capture_output=True, input=input,
                          check=False)


def out(cwd: Where, *args: str, git_dir: Where = None, input: str | None = None) -> str:
    """stdout of `git ARGS` ("" when it fails; undecodable bytes replaced)."""
    proc = run(cwd, *args, git_dir=git_dir, input=input, errors="replace")
    return proc.stdout if proc.returncode == 0 else ""


def popen(*args: str, git_dir: Where = None, cwd: Where = None,
          **kwargs: Any) -> subprocess.Popen[bytes]:
    """A streaming `git ARGS` (pack data through stdin/stdout); the caller waits on it."""
    return subprocess.Popen(_argv(args, git_dir), cwd=cwd, **kwargs)


def config_get(cwd: Where, key: str, *, git_dir: Where = None) -> str | None:
    """`git config --get KEY`: its value, or None when unset (or empty)."""
    proc = run(cwd, "config", "--get", key, git_dir=git_dir)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def config_get_all(cwd: Where, key: str, *, git_dir: Where = None) -> list[str]:
    """`git config --get-all KEY`: every value, [] when unset."""
    proc = run(cwd, "config", "--get-all", key, git_dir=git_dir)
    return [line for line in proc.stdout.splitlines() if line] if proc.returncode == 0 else []


def config(cwd: Where, *args: str, git_dir: Where = None) -> subprocess.CompletedProcess[str]:
    """`git config ARGS` (writes and unusual reads); the caller checks `returncode`."""
    return run(cwd, "config", *args, git_dir=git_dir)


def rev_parse_commit(rev: str, *, cwd: Where = None, git_dir: Where = None) -> str | None:
    """The commit `rev` names (in the work tree `cwd`, or the repository at `git_dir`)."""
    proc = run(cwd, "rev-parse", "-q", "--verify", rev + "^{commit}", git_dir=git_dir)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


_HEXSHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def ref_file(common_dir: Path, ref: str) -> str | None:
    """A ref read from its loose file or packed-refs (what git itself reads), or None when
    neither names it (a reftable store, or no such ref: then ask git)."""
    try:
        value = (common_dir / ref).read_text().strip()
        return value if _HEXSHA.match(value) else None
    except OSError:
        pass
    try:
        with open(common_dir / "packed-refs") as fh:
            for line in fh:
                sha, _, name = line.rstrip("\n").partition(" ")
                if name == ref and _HEXSHA.match(sha):
                    return sha
    except OSError:
        pass
    return None


def resolve_ref(common_dir: Path, ref: str) -> str | None:
    """The commit a ref names without starting git when the files tell (the hot read path:
    every query checks the ledger head), else one `git rev-parse`; None when absent."""
    found = ref_file(common_dir, ref)
    return found if found is not None else rev_parse_commit(ref, git_dir=common_dir)


def is_ancestor(git_dir: Where, a: str, b: str) -> bool:
    """Whether commit `a` is `b` or one of its ancestors (git's commit-graph makes it cheap)."""
    return run(None, "merge-base", "--is-ancestor", a, b, git_dir=git_dir).returncode == 0
