"""The `commit.link` ops for new links: light enough for the drain's link step, which must not
load the refinery (promote.py imports the pass's views, extractor and heuristics)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from looma_git.pipeline.linking import Link

Draft = dict[str, Any]


def plan_links(links: tuple[Link, ...] | list[Link], id_map: Mapping[str, str],
               live: set[tuple[str, str]], titles: Mapping[str, str],
               patch_ids: Mapping[str, str], by: str,
               subjects: Mapping[str, tuple[str, str]] | None = None) -> list[Draft]:
    """commit.link for each new link of a published WorkItem (with the commit's subject and
    time, which the fold derives titles, summaries and last_active from)."""
    subjects = subjects or {}
    drafts: list[Draft] = []
    for ln in links:
        wi = id_map.get(ln.workitem)
        if wi is None or (ln.sha, wi) in live:
            continue
        drafts.append({"op": "commit.link", "target": {"type": "commit", "id": ln.sha},
                       "payload": {"workitem": wi, "title": titles.get(wi, ""),
                                   "subject": subjects.get(ln.sha, ("", ""))[0],
                                   "ts": subjects.get(ln.sha, ("", ""))[1],
                                   "confidence": round(ln.confidence, 2), "by": by,
                                   "patch_id": patch_ids.get(ln.sha), "files": list(ln.files),
                                   "branch": ln.branch,
                                   "why": {k: v for k, v in ln.why}}})
    return drafts
