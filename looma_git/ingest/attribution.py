"""Which sessions belong to this repository: work trees, linked worktrees, normalized remotes."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from looma_git.gitrepo import RepoPaths
from looma_git.store import git


@dataclass(frozen=True)
class RepoIdentity:
    """This repository as attribution sees it: its work-tree roots and its normalized remotes."""

    roots: tuple[str, ...]  # normalized absolute work-tree paths (main + linked), as git lists
    real_roots: tuple[str, ...]  # the same, symlinks resolved
    remotes: frozenset[str]  # "host/org/repo", lower-case


_SCP_RE = re.compile(r"^(?:[\w.+-]+@)?([\w.-]+):(?!//)(.+)$")
_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?/(.+)$", re.I)


def normalize_remote(url: str | None) -> str | None:
    """`host/org/repo` for ssh, https, git and scp-style remotes; None for local paths/junk.

    `git@github.com:Org/Repo.git`, `ssh://git@github.com:22/org/repo`,
    `https://user@github.com/org/repo.git/` all become `github.com/org/repo`.
    """
    if not url:
        return None
    url = url.strip()
    m = _URL_RE.match(url)
    if m is None and "://" not in url and not url.startswith(("/", ".", "~")):
        m = _SCP_RE.match(url)
    if m is None:
        return None
    host, path = m.group(1).lower(), m.group(2)
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.strip("/").lower()
    if not path or not host or host in ("localhost",):
        return None
    return f"{host}/{path}"


def _norm(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def load_identity(paths: RepoPaths) -> RepoIdentity:
    """Read this repository's worktrees (`git worktree list --porcelain`) and remotes, once."""
    roots: list[str] = []
    if paths.worktree is not None:
        roots.append(_norm(str(paths.worktree)))
    try:
        out = git.out(None, "worktree", "list", "--porcelain", git_dir=paths.common_dir)
    except OSError:
        out = ""
    for line in out.splitlines():
        if line.startswith("worktree "):
            wt = _norm(line[len("worktree "):])
            if wt not in roots:
                roots.append(wt)
    # A bare repository lists itself as a "worktree"; it holds no session cwd worth matching.
    roots = [r for r in roots if _norm(r) != _norm(str(paths.common_dir))]
    remotes: set[str] = set()
    try:
        cfg = git.out(None, "config", "--get-regexp", r"^remote\..*\.(url|pushurl)$",
                      git_dir=paths.common_dir)
    except OSError:
        cfg = ""
    for line in cfg.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            norm = normalize_remote(parts[1])
            if norm:
                remotes.add(norm)
    real = tuple(dict.fromkeys(os.path.realpath(r) for r in roots))
    return RepoIdentity(roots=tuple(roots), real_roots=real, remotes=frozenset(remotes))


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Attributor:
    """Decides, with per-path caches, whether a cwd or remote is this repository's."""

    def __init__(self, identity: RepoIdentity) -> None:
        self.identity = identity
        self._cwd_cache: dict[str, bool] = {}
        self._nested_cache: dict[str, bool] = {}
        self._slugs: dict[Callable[[str], str], dict[str, str]] = {}

    def deepest_root(self, path: str, *, real: bool) -> str | None:
        """The most specific work-tree root containing `path` (lexically), or None."""
        roots = self.identity.real_roots if real else self.identity.roots
        best: str | None = None
        for root in roots:
            if _within(path, root) and (best is None or len(root) > len(best)):
                best = root
        return best

    def in_nested_repo(self, directory: str, root: str) -> bool:
        """True when `directory` (inside `root`) is inside another repository's .git boundary."""
        d = directory
        chain: list[str] = []
        result = False
        while _within(d, root) and d != root:
            if d in self._nested_cache:
                result = self._nested_cache[d]
                break
            chain.append(d)
            if os.path.lexists(os.path.join(d, ".git")):
                result = True
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        for c in chain:
            self._nested_cache[c] = result
        return result

    def cwd_is_ours(self, cwd: str | None) -> bool:
        """A cwd inside one of our work trees (raw or resolved), and not in a nested repo."""
        if not cwd:
            return False
        hit = self._cwd_cache.get(cwd)
        if hit is None:
            hit = self._check_cwd(cwd)
            self._cwd_cache[cwd] = hit
        return hit

    def _check_cwd(self, cwd: str) -> bool:
        if not os.path.isabs(cwd):
            return False
        norm = os.path.normpath(cwd)
        real = os.path.realpath(norm)
        real_root = self.deepest_root(real, real=True)
        if real_root is not None:
            return not self.in_nested_repo(real, real_root)
        lex_root = self.deepest_root(norm, real=False)
        if lex_root is not None and not os.path.exists(norm):
            # The directory is gone (deleted branch checkout, tmp dir): trust the recorded path.
            return not self.in_nested_repo(norm, lex_root)
        return False

    def root_for_slug(self, slug: str, slugify: Callable[[str], str]) -> str | None:
        """The work-tree root (main or linked worktree, raw or resolved path) whose
        agent-specific directory slug (`slugify(root)`) is `slug`, else None. How a Cursor
        `~/.cursor/projects/<slug>/` dir is matched: slugs are lossy, so never decoded."""
        cache = self._slugs.get(slugify)
        if cache is None:
            cache = {}
            for root in (*self.identity.roots, *self.identity.real_roots):
                cache.setdefault(slugify(root), root)
            self._slugs[slugify] = cache
        return cache.get(slug)

    def remote_is_ours(self, remote: str | None) -> bool:
        """The agent-recorded git remote normalizes to one of this repository's remotes."""
        norm = normalize_remote(remote)
        return norm is not None and norm in self.identity.remotes

    def attributes(self, cwd: str | None, remote: str | None) -> bool:
        """A session belongs here when its cwd lies in our work trees or its remote is ours —
        except that a cwd inside another repository is never ours, whatever the remote says."""
        if self.cwd_is_ours(cwd):
            return True
        if cwd and os.path.isabs(cwd) and self._inside_other_repo(cwd):
            return False
        return self.remote_is_ours(remote)

    def _inside_other_repo(self, cwd: str) -> bool:
        real = os.path.realpath(cwd)
        root = self.deepest_root(real, real=True)
        if root is not None:
            return self.in_nested_repo(real, root)
        return False
