"""The ledger commit's tree as plain dicts: read once per process, patched per batch, serialised.

Each directory is `name -> raw tree entry line` (`<mode> <name>\\0<20-byte sha>`, exactly what
git stores), so serialising a 2,000-entry `workitems/` tree is one sort and one join, and a
batch only re-serialises the `ops/<xx>` subtrees it touched. Output is byte-identical to
dulwich's Tree serialisation (same `%04o` modes, same git sort order: directories as `name/`).
"""

from __future__ import annotations

import stat
from binascii import unhexlify
from dataclasses import dataclass, field
from typing import Any

from looma_git.store.repo import get_tree

DIR_MODE = stat.S_IFDIR
FILE_MODE = 0o100644
_FILE_PREFIX = b"100644 "

Entries = dict[bytes, bytes]  # name -> raw entry line


def entry(mode: int, name: bytes, hexsha: bytes) -> bytes:
    """One raw tree entry line."""
    return b"%04o %s\0" % (mode, name) + unhexlify(hexsha)


def entry_sha(line: bytes) -> bytes:
    """The 40-hex (bytes) id an entry line points at."""
    return line[-20:].hex().encode()


def entry_is_dir(line: bytes) -> bool:
    return stat.S_ISDIR(int(line[:line.index(b" ")], 8))


def files_only(entries: Entries) -> bool:
    """True when every entry is a regular file (git order is then plain name order)."""
    return {line[:7] for line in entries.values()} <= {_FILE_PREFIX}


def serialize(entries: Entries, *, only_files: bool = False) -> bytes:
    """The raw tree object body, entries in git order (`only_files`: the caller knows)."""
    if only_files or files_only(entries):
        names = sorted(entries)
    else:
        names = sorted(entries, key=lambda n: n + b"/" if entry_is_dir(entries[n]) else n)
    return b"".join([entries[n] for n in names])


def read_entries(repo: Any, sha: bytes) -> Entries:
    """The entries of tree `sha` (read through the shared tree cache)."""
    return {item.path: entry(item.mode, item.path, item.sha)
            for item in get_tree(repo, sha).iteritems()}


def _dir_entries(repo: Any, entries: Entries, name: bytes) -> Entries:
    """Entries of subdirectory `name`; empty when absent or not a directory."""
    line = entries.get(name)
    if line is None or not entry_is_dir(line):
        return {}
    return read_entries(repo, entry_sha(line))


@dataclass
class LedgerTree:
    """What the next ledger commit builds on: ops/ (subtrees loaded lazily) and projections."""

    commit: bytes | None
    ops: Entries = field(default_factory=dict)
    subs: dict[bytes, Entries] = field(default_factory=dict)  # ops/<xx> loaded so far
    projections: dict[bytes, Entries] = field(default_factory=dict)  # workitems, memories
    root: Entries = field(default_factory=dict)
    # names of the dicts above (ops prefixes, projection names) holding only files, so their
    # serialisation can skip the directory check; looma itself only ever adds files
    plain: set[bytes] = field(default_factory=set)

    @classmethod
    def load(cls, repo: Any, commit: bytes | None) -> LedgerTree:
        """The tree of ledger commit `commit` (None: an empty ledger)."""
        tree = cls(commit)
        if commit is None:
            return tree
        root = get_tree(repo, commit)
        tree.root = {item.path: entry(item.mode, item.path, item.sha) for item in root.iteritems()}
        tree.ops = _dir_entries(repo, tree.root, b"ops")
        for name in (b"workitems", b"memories"):
            tree.projections[name] = _dir_entries(repo, tree.root, name)
            if files_only(tree.projections[name]):
                tree.plain.add(name)
        return tree

    def ops_sub(self, repo: Any, prefix: bytes) -> Entries:
        """The mutable entries of `ops/<prefix>` (empty when absent or not a directory)."""
        sub = self.subs.get(prefix)
        if sub is None:
            sub = self.subs[prefix] = _dir_entries(repo, self.ops, prefix)
            if files_only(sub):
                self.plain.add(b"ops/" + prefix)
        return sub
