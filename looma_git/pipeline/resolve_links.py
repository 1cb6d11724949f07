"""An appending pass's commit links: the last pass's, only commits near a changed target redone.

Why that is the full pass's result (`linking.link_commits` on every commit): an appending
pass (pipeline/resolve_append.py) sees the same commits, and what its new sessions wrote
counts for no commit (`_authorship_unmoved`), every kept session stays in its one cluster;
so every commit's content scores, and the WorkItem its content link goes to, are the last
pass's. A content link's other parts (files, branch, time) are of its target, refreshed when
the target changed. The rest of the commits are judged on files, branch, time and wording
against the targets sharing a file or the branch with them, given the authors of the content
links (unchanged): a commit none of whose such targets changed links as it did. The inputs
every link shares (the commits, the user's unlinks, the split-decided commits, the authors
with session evidence) are in the memo's key: any other value judges every commit again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from looma_git.pipeline.link_content import Content
from looma_git.pipeline.linking import (
    Link,
    Target,
    _branch_of,
    link_commits,
    refresh_content_link,
)
from looma_git.pipeline.topology import merged_branches
from looma_git.store.gitfacts import CommitInfo


@dataclass(frozen=True)
class LinkMemo:
    """A pass's links and what they were judged with (`key`, the target ids)."""

    key: str
    targets: tuple[str, ...]
    links: tuple[Link, ...]
    code: str = ""  # the code that judged them (index/workmodel_state.save_links)


def links_key(commits_fp: str, forbidden: Iterable[tuple[str, str]], settled: Iterable[str],
              own: frozenset[str] | None) -> str:
    """The inputs every commit's link depends on, as one digest."""
    h = hashlib.sha256(commits_fp.encode())
    h.update(json.dumps([sorted(forbidden), sorted(settled),
                         None if own is None else sorted(own)]).encode())
    return h.hexdigest()


def append_links(commits: Sequence[CommitInfo], targets: Sequence[Target],
                 changed: dict[str, tuple[Target | None, Target | None]],
                 founded: set[str], memo: LinkMemo | None, key: str,
                 forbidden: frozenset[tuple[str, str]], own: frozenset[str] | None,
                 settled: frozenset[str],
                 content_of: Callable[[list[str]], Content]) -> list[Link] | None:
    """Every commit's link as `link_commits` gives it, judging again only the commits near a
    changed target; None when the memo cannot tell (other inputs, a target that appeared for
    a kept cluster or vanished): the caller links every commit.

    `changed`: target id -> (as the memo's pass had it, as it is now; None: none);
    `founded`: clusters this pass founded (their targets are new and nothing wrote for them
    before the commits were made)."""
    if memo is None or memo.key != key:
        return None
    now = {t.id for t in targets}
    if set(memo.targets) - now or (now - set(memo.targets)) - founded:
        return None
    by_id = {t.id: t for t in targets}
    files: set[str] = set()
    branches: set[str] = set()
    for pair in changed.values():
        for t in pair:
            if t is not None:
                files |= t.files
                branches |= t.branches
    content = [ln for ln in memo.links if "content" in dict(ln.why)]
    on_content = {ln.sha for ln in content}
    merged = merged_branches(list(commits)) if branches else {}
    only = frozenset(c.sha for c in commits if c.sha not in on_content and (
        not files.isdisjoint(c.files)
        or (_branch_of(c) or merged.get(c.sha)) in branches))
    sha = {c.sha: c for c in commits}
    fresh = tuple(refresh_content_link(ln, sha[ln.sha], by_id[ln.workitem])
                  if ln.workitem in changed else ln for ln in content)
    judged = link_commits(list(commits), list(targets), forbidden, own,
                          content_of(sorted(only)), settled, only=only,
                          linked=fresh) if only else []
    order = {c.sha: i for i, c in enumerate(commits)}
    rest = [ln for ln in memo.links if ln.sha not in on_content and ln.sha not in only]
    return [*fresh, *sorted(rest + judged, key=lambda ln: order[ln.sha])]
