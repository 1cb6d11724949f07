"""Where commits sit in the repository's history: the trunk's first-parent line, and the feature
branch a merge commit says it brought in (for commits whose branch ref is gone or moved on)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from looma_git.store.gitfacts import CommitInfo

TRUNK = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})

# The subjects git and the forges write for a merge: "Merge pull request #206 from
# owner/rollover-yb", "Merge branch 'fix-tz' into main", "Merge remote-tracking branch
# 'origin/fix-tz'", "Merge branch 'fix-tz' of github.com:owner/repo".
_MERGE = re.compile(
    r"^Merge (?:pull request #\d+ from [^/\s]+/(?P<pr>\S+)|"
    r"(?:remote-tracking )?branch '(?P<b>[^']+)')")


def _trunk_ref(ref: str) -> bool:
    name = ref.removeprefix("refs/heads/")
    if name.startswith("refs/remotes/"):
        name = name.removeprefix("refs/remotes/").partition("/")[2]
    return bool(name) and name in TRUNK


def trunk_line(commits: Iterable[CommitInfo]) -> frozenset[str]:
    """The commits on a trunk branch's first-parent line: committed (or squashed, rebased,
    merged) straight onto it. The others reached it, if at all, only through a merge: a
    feature branch's commits, whether or not the branch's ref still exists."""
    commits = list(commits)
    by_sha = {c.sha: c for c in commits}
    on_trunk = [c for c in commits if _trunk_ref(c.ref)]
    parents = {p for c in on_trunk for p in c.parents}
    line: set[str] = set()
    for tip in (c for c in on_trunk if c.sha not in parents):
        sha: str | None = tip.sha
        while sha and sha in by_sha and sha not in line:
            line.add(sha)
            ps = by_sha[sha].parents
            sha = ps[0] if ps else None
    return frozenset(line)


def merged_branch_name(subject: str) -> str | None:
    """The feature branch a merge commit's subject names (None for a trunk or no name)."""
    m = _MERGE.match(subject or "")
    if not m:
        return None
    name = (m.group("pr") or m.group("b") or "").removeprefix("origin/")
    return None if name in TRUNK else name


def merged_branches(commits: Iterable[CommitInfo]) -> dict[str, str]:
    """sha -> the feature branch it was made on, for commits brought onto the trunk by a merge
    whose subject names its branch: the merged parent's first-parent line back to where it
    left the trunk (git's own record of the branch, after its ref was deleted or while `git
    log --source` reaches the commit through the trunk). The newest merge naming a commit wins
    (a branch merged, then continued and merged again, keeps its name)."""
    commits = list(commits)
    by_sha = {c.sha: c for c in commits}
    trunk = trunk_line(commits)
    out: dict[str, str] = {}
    for m in reversed(commits):  # newest first
        if len(m.parents) < 2 or m.sha not in trunk:
            continue
        name = merged_branch_name(m.subject)
        if not name:
            continue
        sha: str | None = m.parents[1]
        while sha and sha in by_sha and sha not in trunk and sha not in out:
            out[sha] = name
            ps = by_sha[sha].parents
            sha = ps[0] if ps else None
    return out
