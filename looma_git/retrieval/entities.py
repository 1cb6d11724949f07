"""Goals that name a WorkItem's branch or file: their score, and whether it is named after it."""

from __future__ import annotations

import re

from looma_git.retrieval.records import ItemRecord
from looma_git.retrieval.terms import GENERIC, terms

BRANCH_SCORE = 1.0  # the goal names the item's branch
FILE_SCORE = 0.9  # the goal names one of the item's files (or a directory of them)
_PATHLIKE = re.compile(r"^[\w.\-]+(?:/[\w.\-]*)+$|^[\w\-]+\.[a-z0-9]{1,5}$", re.I)


def entity(goal: str, it: ItemRecord) -> tuple[float, str] | None:
    """The goal names the item's branch or one of its files/directories."""
    g = goal.strip().strip("'\"`").rstrip("/")
    if not g or " " in g:
        return None
    low = g.lower()
    if any(b.lower() == low or (b.lower().rsplit("/", 1)[-1] == low and "/" in b)
           for b in it.branches):
        return BRANCH_SCORE, "branch"
    if _PATHLIKE.match(g) and any(f == g or f.startswith(g + "/") or f.endswith("/" + g)
                                  for f in it.files):
        return FILE_SCORE, "file"
    return None


def file_named(goal: str, it: ItemRecord) -> bool:
    """Whether the item's title or branch says the name of the file the goal is: every topic
    word of its base name without the extension ("test_filesize.py": "filesize")."""
    base = goal.strip().strip("'\"`").rstrip("/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    words = {t for t in terms(base) if t not in GENERIC and len(t) >= 3}
    return bool(words) and words <= set(terms(f"{it.title} {it.branch or ''}"))
