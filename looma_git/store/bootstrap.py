"""First writes of a clone: the empty ledger and notes refs, and the notes-rewrite git config."""

from __future__ import annotations

from pathlib import Path

from looma_git.errors import ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.store import git
from looma_git.store.refnames import LEDGER_REF_B, NOTES_REF, NOTES_REF_B

_AUTHOR = b"looma <looma@localhost>"


def ensure_rewrite_config(worktree: Path) -> list[str]:
    """Make amend/rebase carry looma's notes (`notes.rewriteRef`, `notes.rewriteMode`);
    returns the `key=value` settings it changed. ReadOnlyError when the config is not
    writable."""
    changed: list[str] = []
    refs = git.config(worktree, "--get-all", "notes.rewriteRef").stdout.split()
    wanted = [("notes.rewriteRef", NOTES_REF, NOTES_REF not in refs, "--add"),
              ("notes.rewriteMode", "cat_sort_uniq",
               git.config(worktree, "--get", "notes.rewriteMode").stdout.strip()
               != "cat_sort_uniq", None)]
    for key, value, needed, flag in wanted:
        if not needed:
            continue
        proc = git.config(worktree, *([flag] if flag else []), key, value)
        if proc.returncode != 0:
            raise ReadOnlyError(f"cannot set {key} in the repository config: "
                                f"{proc.stderr.strip()}",
                                hint="looma needs write access to the .git directory")
        changed.append(f"{key}={value}")
    return changed


def ensure_ledger_ref(paths: RepoPaths) -> bool:
    """Create refs/looma/ledger (a root commit holding format.yaml) when it is missing;
    True when this call created it."""
    from dulwich.objects import Blob, Tree

    from looma_git.ledger.projections import FORMAT_FILE
    from looma_git.store.locking import cas_update
    from looma_git.store.repo import make_commit, open_repo, ref_value, write_objects

    with open_repo(paths) as repo:
        if ref_value(repo, LEDGER_REF_B) is not None:
            return False
        fmt = Blob.from_string(FORMAT_FILE)
        root = Tree()
        root.add(b"format.yaml", 0o100644, fmt.id)
        commit = make_commit(root.id, [], "looma: init ledger\n", _AUTHOR)

        def build(old: bytes | None) -> bytes | None:
            if old is not None:
                return None
            write_objects(repo, [fmt, root, commit])
            return bytes(commit.id)

        _, new = cas_update(repo, LEDGER_REF_B, build, message=b"looma: init")
        return bool(new == commit.id)


def ensure_notes_ref(paths: RepoPaths, message: str = "looma: init notes") -> None:
    """Create refs/notes/looma (an empty notes tree: the projection of no links) when it is
    missing. notes.rewriteRef and a configured push refspec name it: git warns on every
    amend/rebase while it is missing, and a push refspec whose source is missing fails the
    user's whole `git push`."""
    from dulwich.objects import Tree

    from looma_git.store.locking import cas_update
    from looma_git.store.repo import make_commit, open_repo, ref_value, write_objects

    with open_repo(paths) as repo:
        if ref_value(repo, NOTES_REF_B) is not None:
            return
        empty = Tree()
        commit = make_commit(empty.id, [], message + "\n", _AUTHOR)

        def build(old: bytes | None) -> bytes | None:
            if old is not None:
                return None
            write_objects(repo, [empty, commit])
            return bytes(commit.id)

        cas_update(repo, NOTES_REF_B, build, message=message.encode())
