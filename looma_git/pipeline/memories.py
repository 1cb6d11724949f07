"""Memories of a WorkItem: candidates grouped into decisions/todos/bugs/architecture notes,
reversed decisions superseded, todos a later commit did expired."""

from __future__ import annotations

from rapidfuzz import fuzz

from looma_git.pipeline import confidence as conf
from looma_git.pipeline.clusters import Cluster
from looma_git.pipeline.heuristics import MemoryCandidate, reversals
from looma_git.pipeline.signals import parse_ts
from looma_git.pipeline.views import QUOTE_MAX, Evidence, MemoryView
from looma_git.store.gitfacts import CommitInfo


def memories(c: Cluster, cands: list[MemoryCandidate],
             c_conf: dict[str, float]) -> list[MemoryView]:
    groups: list[list[MemoryCandidate]] = []
    for cand in sorted(cands, key=lambda x: (x.ts, x.event_id, x.start)):
        for g in groups:
            if g[0].kind == cand.kind and fuzz.ratio(g[0].text.lower(), cand.text.lower()) >= 90:
                g.append(cand)
                break
        else:
            groups.append([cand])
    views: list[MemoryView] = []
    for g in groups:
        head = g[0]
        sessions = sorted({f"{x.agent}:{x.session_id}" for x in g})
        agents = {s.split(":", 1)[0] for s in sessions}
        feats = {
            "file_overlap": c_conf.get("file_overlap", 0.0),
            "commit_linkage": c_conf.get("commit_linkage", 0.0),
            "session_breadth": conf.breadth(len(sessions)),
            "agent_breadth": conf.breadth(len(agents)),
            "temporal_persistence": conf.breadth(len({x.ts[:10] for x in g if x.ts})),
        }
        ev = tuple(Evidence(quote=x.text[:QUOTE_MAX], agent=x.agent, session=x.session_id,
                            event=x.event_id, hash=x.content_hash, start=x.start, end=x.end)
                   for x in g[:3])
        views.append(MemoryView(
            id="mem_" + head.cand_id[5:], kind=head.kind, text=head.text[:QUOTE_MAX],
            workitem=c.id, confidence=conf.score(feats), lifecycle="active",
            superseded_by=None, evidence=ev, sessions=tuple(sessions), ts=head.ts))
    # A later decision that reverses an earlier one on the same subject supersedes it.
    superseded = reversals([(m.id, m.text) for m in views if m.kind == "decision"])
    if superseded:
        views = [MemoryView(**{**m.__dict__, "lifecycle": "superseded",
                               "superseded_by": superseded[m.id]})
                 if m.id in superseded else m for m in views]
    return views


DONE_OVERLAP = 0.5  # share of a todo's salient words a later commit must carry to close it


def expire_done(mems: list[MemoryView], commits: list[CommitInfo]) -> list[MemoryView]:
    """A todo that a later implementing commit visibly did is no longer open: expired."""
    out = []
    for m in mems:
        words = set(salient(m.text))
        if m.kind == "todo" and m.lifecycle == "active" and len(words) >= 2 and m.ts:
            t0 = parse_ts(m.ts)
            for c in commits:
                if parse_ts(c.ts) > t0 and len(words & set(salient(c.subject))) >= max(
                        2, DONE_OVERLAP * len(words)):
                    m = MemoryView(**{**m.__dict__, "lifecycle": "expired"})
                    break
        out.append(m)
    return out


def salient(text: str) -> list[str]:
    from looma_git.pipeline.text import tokens

    generic = {"let", "use", "instead", "actually", "switch", "decided", "going", "store",
               "keep", "drop", "not", "we'll"}
    return [t for t in tokens(text) if t not in generic]
