"""Locating a repository: work tree, git dir, common dir, looma's state dir."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from looma_git.errors import NotARepositoryError
from looma_git.store import git


@dataclass(frozen=True)
class RepoPaths:
    """Where a repository lives. `common_dir` is shared by all linked worktrees."""

    worktree: Path | None  # None for a bare repository
    git_dir: Path
    common_dir: Path

    @property
    def is_bare(self) -> bool:
        return self.worktree is None

    @property
    def state_dir(self) -> Path:
        """`<git-common-dir>/looma`: local, never shared, a cache of ledger + transcripts."""
        return self.common_dir / "looma"

    @property
    def store_db(self) -> Path:
        return self.state_dir / "store.db"


def find_repo(start: str | os.PathLike[str] | None = None) -> RepoPaths:
    """Resolve the repository containing `start` (default: cwd) with one `git rev-parse`."""
    try:
        cwd = Path(start) if start is not None else Path.cwd()
    except FileNotFoundError as exc:  # the shell's cwd was deleted under it
        raise NotARepositoryError("the current directory no longer exists",
                                  hint="cd into the repository again") from exc
    if not cwd.is_dir():
        raise NotARepositoryError(f"cannot change to '{cwd}': no such directory",
                                  hint="check the path given to -C")
    try:
        proc = git.run(cwd, "rev-parse", "--is-bare-repository", "--absolute-git-dir",
                       "--git-common-dir", "--show-toplevel")
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise NotARepositoryError(f"cannot run git in '{cwd}': {exc.strerror}") from exc
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 and "dubious ownership" in proc.stderr:
        # git refuses a repository another user owns; its own message says how to allow it.
        msg = proc.stderr.strip().removeprefix("fatal: ")
        first, _, rest = msg.partition("\n")
        hint = next((ln.strip() for ln in rest.splitlines()
                     if "safe.directory" in ln and ln.strip().startswith("git ")), None)
        raise NotARepositoryError(
            f"git refuses this repository: {first}",
            hint=(f"if you trust it: {hint}" if hint else rest.strip() or None))
    if proc.returncode != 0 and len(lines) < 3:
        raise NotARepositoryError(
            f"not a git repository: {cwd}",
            hint="run looma inside a git repository (or `git init` first)",
        )
    bare = lines[0].strip() == "true"
    git_dir = Path(lines[1])
    common = Path(lines[2])
    if not common.is_absolute():
        common = (cwd / common).resolve()
    worktree = None if bare or len(lines) < 4 else Path(lines[3])
    return RepoPaths(worktree=worktree, git_dir=git_dir, common_dir=common.resolve())


def require_worktree(paths: RepoPaths) -> Path:
    """The work tree, or a clear error in a bare repository."""
    if paths.worktree is None:
        raise NotARepositoryError(
            f"{paths.common_dir} is a bare repository; looma needs a work tree",
            hint="run looma in a clone with a working tree",
        )
    return paths.worktree
