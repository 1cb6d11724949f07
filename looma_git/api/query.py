"""Library surface of the read commands: work, resume, ask, timeline, recall."""

from __future__ import annotations

from typing import Any

from looma_git.errors import AmbiguousError, NotFoundError, NotInitializedError
from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.retrieval import match
from looma_git.retrieval.recall import work_out as _work_out
from looma_git.retrieval.records import ItemRecord
from looma_git.retrieval.semantic import item_cosines, query_cosines, rank_goal  # noqa: F401
from looma_git.wire.plain import ResumeMatchOut, ResumeOut, SessionRef, WorkItemOut, WorkOut


def _items(paths: RepoPaths, head: str | None = None, *, allow_stale: bool = False
           ) -> list[ItemRecord]:
    from looma_git.retrieval.head_records import load_records

    return load_records(paths, head, allow_stale=allow_stale)


def work(paths: RepoPaths, *, status: str | None = None, candidates: bool = False) -> WorkOut:
    """Every live WorkItem, most confident first (ties by id: deterministic); with
    `candidates`, also the local ones not (yet) promoted, marked `promoted: false`."""
    items = [it for it in _items(paths) if status is None or it.status == status]
    items.sort(key=lambda it: (-round(it.confidence, 2), it.title.lower(), it.id))
    out = [_work_out(it) for it in items]
    if candidates:
        out.extend(_unpromoted_rows(paths))
    return WorkOut(workitems=out)


def _unpromoted_rows(paths: RepoPaths) -> list[WorkItemOut]:
    """Unpromoted WorkItems of the last refinery pass (local only, never shared): domain
    values first (records.local_work_item), then the one projection every listing uses."""
    from looma_git.index.reads import local_rows
    from looma_git.retrieval.records import local_work_item

    items = [ItemRecord.of(local_work_item(wid, w, scored=True))
             for wid, w, promoted in local_rows(paths, "refine_workitems")
             if not promoted and not w.get("quarantined")]
    items.sort(key=lambda it: (-round(it.confidence, 2), it.title.lower(), it.id))
    return [_work_out(it) for it in items]


def _match_out(m: match.Match, letter: str) -> ResumeMatchOut:
    it = m.item
    return ResumeMatchOut(
        id=it.id, letter=letter, title=it.title, kind=it.kind, status=it.status,
        confidence=round(it.confidence, 2), band=it.band, match=m.score,
        matched_terms=list(m.matched_terms), files=list(it.files),
        commits=[c.sha for c in it.commits],
        sessions=[SessionRef(agent=a, id=s) for a, s in it.sessions], last_active=it.updated)


def _git_commits(paths: RepoPaths, shas: list[str]) -> list[dict[str, Any]]:
    from looma_git.store.gitfacts import list_commits

    if not shas:
        return []
    info = {c.sha: c for c in list_commits(require_worktree(paths), revs=tuple(shas[-50:]),
                                           no_walk=True)}
    out = []
    for sha in shas:
        c = info.get(sha)
        out.append({"sha": sha[:12], "subject": c.subject if c else "(not in this clone)",
                    "date": c.ts if c else ""})
    out.sort(key=lambda d: d["date"], reverse=True)
    return out


def _session_rows(paths: RepoPaths, sessions: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    from looma_git.index.reads import session_rows

    return session_rows(paths, sessions)


def resume(paths: RepoPaths, goal: str | None = None, *, work_ref: str | None = None,
           budget: int = 2000) -> ResumeOut:
    """confident (one bundle) / ambiguous (near-ties side by side) / cold (say so)."""
    from looma_git.retrieval import bundle as bundle_mod
    from looma_git.store.gitfacts import head_state

    # Served from the index as it is and the records of the current ledger head (or, right
    # after a commit's drain, of the previous one while a background process folds the new
    # one): resume never waits on a reindex or a fold of system refreshes.
    items = _items(paths, _require_ledger(paths), allow_stale=True)
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # not `string`: its import compiles a regex
    git_state: dict[str, Any] | None = None
    if work_ref:
        item = resolve_workitem(paths, work_ref, items)
        m = match.Match(item=item, score=1.0, coverage=1.0, title=1.0, semantic=None,
                        matched_terms=(), via="picked")
        state, chosen = "confident", [m]
    elif goal:
        ranked = rank_goal(paths, goal, items)
        state, chosen = match.outcome(ranked)
    else:
        from looma_git.retrieval.recent import most_recent

        git_state = head_state(require_worktree(paths))
        branch = git_state.get("branch")
        state, picked = most_recent(items, branch if isinstance(branch, str) else None)
        chosen = [match.Match(item=it, score=1.0, coverage=0, title=0, semantic=None,
                              matched_terms=(), via="recent") for it in picked]
    cands = [_match_out(m, letters[i]) for i, m in enumerate(chosen)]
    out = ResumeOut(state=state, goal=goal, candidates=cands, bundle=None)
    if state == "confident":
        item = chosen[0].item
        git = git_state or head_state(require_worktree(paths))
        b = bundle_mod.build(item, git, _git_commits(paths, [c.sha for c in item.commits]),
                             _session_rows(paths, item.sessions), budget)
        out.bundle = b.as_dict()
    elif state == "ambiguous":  # two or more WorkItems that match (match.outcome)
        out.message = ("Several WorkItems match; they are shown side by side, not blended. "
                       f"Pick one with `looma resume --work {cands[0].letter}` or merge "
                       f"them with `looma correct merge {cands[0].letter} {cands[1].letter}`.")
    else:
        recent = sorted(items, key=lambda it: (it.updated, it.confidence), reverse=True)[:5]
        out.recent = [_match_out(match.Match(item=it, score=0.0, coverage=0, title=0,
                                             semantic=None, matched_terms=()), letters[i])
                      for i, it in enumerate(recent)]
        out.message = ("No WorkItem matches this goal; nothing was invented. "
                       "Recently active work is listed instead.")
    if not work_ref:  # a resume of a picked WorkItem does not replace the listing it used
        _remember_letters(paths, goal, state, cands if state == "ambiguous" else [])
    return out


def _require_ledger(paths: RepoPaths) -> str:
    """The ledger head: queries need a ledger (local or fetched); without one nothing is
    written anywhere."""
    from looma_git.store.heads import ledger_head

    head = ledger_head(paths)
    if head is None:
        raise NotInitializedError(
            "looma has no ledger in this repository yet",
            hint="run `looma init` then `looma ingest` (or fetch a teammate's refs/looma/*)")
    return head


def _remember_letters(paths: RepoPaths, goal: str | None, state: str,
                      cands: list[ResumeMatchOut]) -> None:
    from looma_git.api import letters

    letters.remember(paths, goal, state, [(c.letter, c.id, c.title) for c in cands])


def resolve_workitem(paths: RepoPaths, ref: str, items: list[ItemRecord] | None = None
                     ) -> ItemRecord:
    """A WorkItem by id prefix, by the letter of the last ambiguous resume, or exact title."""
    items = items if items is not None else _items(paths)
    by_id = {it.id: it for it in items}
    from looma_git.api import letters

    if letters.is_letter(ref) and not any(it.title == ref for it in items):
        return by_id[letters.resolve(paths, ref, set(by_id))]
    matches = [it for it in items if it.id.startswith(ref)]
    if not matches:
        matches = [it for it in items if it.title.lower() == ref.lower()]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise NotFoundError(f"no WorkItem matches {ref!r}",
                            hint="use an id prefix from `looma work`, a letter from the last "
                                 "ambiguous `looma resume`, or the exact title")
    raise AmbiguousError(f"{ref!r} matches {len(matches)} WorkItems",
                         matches=[f"{it.id}  {it.title}" for it in matches],
                         hint="use a longer id prefix")
