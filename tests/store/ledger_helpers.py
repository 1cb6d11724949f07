"""Helpers for store tests: an initialized repo and raw injection of files into the ledger."""

from __future__ import annotations

import os
from pathlib import Path

from looma_git.api import ledger as api
from looma_git.gitrepo import RepoPaths, find_repo
from looma_git.ledger.ops import OpDraft
from tests.helpers import git


def init(repo: Path) -> RepoPaths:
    paths = find_repo(repo)
    api.init_repo(paths)
    return paths


def create(paths: RepoPaths, title: str, actor: str = "system", **payload: object) -> str:
    op = api.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                                    {"title": title, **payload})], actor=actor)[0]
    return "wi_" + op.id[:10]


def inject(repo: Path, files: dict[str, bytes], tmp: Path) -> None:
    """Commit raw files into refs/looma/ledger with git plumbing (a hostile teammate)."""
    env = dict(os.environ, GIT_INDEX_FILE=str(tmp / "inject.index"))
    git(repo, "read-tree", "refs/looma/ledger", env=env)
    for path, data in files.items():
        blob_file = tmp / "blob"
        blob_file.write_bytes(data)
        blob = git(repo, "hash-object", "-w", str(blob_file))
        git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = git(repo, "write-tree", env=env)
    commit = git(repo, "commit-tree", tree, "-p", "refs/looma/ledger", "-m", "inject")
    git(repo, "update-ref", "refs/looma/ledger", commit)
