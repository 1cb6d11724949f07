"""Tool-call paths made repository-relative; anything escaping the repository stays raw only."""

from __future__ import annotations

import ntpath
import os

from looma_git.ingest.attribution import Attributor


class PathResolver:
    """Maps a path an agent recorded (absolute, or relative to the session cwd) to a
    repo-relative POSIX path, or None when it escapes the repository (`..`, a symlink out,
    another root, a nested repository)."""

    def __init__(self, attributor: Attributor) -> None:
        self.attr = attributor
        self._cache: dict[tuple[str, str | None], str | None] = {}

    def relpath(self, raw: str, cwd: str | None) -> str | None:
        """The repo-relative path for `raw` seen in a session whose cwd is `cwd`, else None."""
        key = (raw, cwd)
        if key in self._cache:
            return self._cache[key]
        result = self._resolve(raw, cwd)
        self._cache[key] = result
        return result

    def _resolve(self, raw: str, cwd: str | None) -> str | None:
        if not raw or "\x00" in raw or len(raw) > 4096:
            return None
        path = raw
        if path.startswith("file://"):
            path = path[len("file://"):]
        if ntpath.isabs(path) and not os.path.isabs(path):
            return None  # a Windows path on a POSIX host: another machine's root
        if not os.path.isabs(path):
            if not cwd or not os.path.isabs(cwd):
                return None
            path = os.path.join(cwd, path)
        norm = os.path.normpath(path)
        real = os.path.realpath(norm)
        lex_root = self.attr.deepest_root(norm, real=False)
        real_root = self.attr.deepest_root(real, real=True)
        if real_root is None:
            if lex_root is not None and not os.path.lexists(norm) and \
                    not _has_symlink_prefix(norm, lex_root):
                # The file is gone now (deleted later) but was lexically inside: keep it.
                return self._rel(norm, lex_root)
            return None  # escapes: `..`, symlink out, or another root altogether
        if lex_root is not None:
            # Prefer the path as recorded when it is inside and resolves inside.
            return self._rel(norm, lex_root)
        return self._rel(real, real_root)

    def _rel(self, path: str, root: str) -> str | None:
        rel = os.path.relpath(path, root)
        if rel == "." or rel.startswith(".."):
            return None
        parts = rel.split(os.sep)
        if ".git" in parts:
            return None  # git's own files are never work files
        directory = os.path.dirname(path)
        if self.attr.in_nested_repo(directory, root):
            return None
        return "/".join(parts)


def _has_symlink_prefix(path: str, root: str) -> bool:
    """True when some existing ancestor of `path` below `root` is a symlink."""
    d = os.path.dirname(path)
    while d.startswith(root) and d != root:
        if os.path.islink(d):
            return True
        d = os.path.dirname(d)
    return False
