"""What resolved clusters give: each WorkItem's view, memories and link target, and the
commit links (the memo's entries reused where a cluster's inputs are the last pass's)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from looma_git.pipeline import confidence as conf
from looma_git.pipeline.clusters import Cluster, window_order
from looma_git.pipeline.heuristics import MemoryCandidate
from looma_git.pipeline.kinds import judge_kind
from looma_git.pipeline.linking import Target, content_authors, link_commits
from looma_git.pipeline.memories import expire_done
from looma_git.pipeline.memories import memories as memory_views
from looma_git.pipeline.packed import MemoryList, Packed
from looma_git.pipeline.resolve_links import LinkMemo, append_links, links_key
from looma_git.pipeline.resolve_state import commits_fingerprint
from looma_git.pipeline.signals import WorkSignal, parse_ts
from looma_git.pipeline.text import (
    creating_first,
    is_chore,
    own_words,
    strong_link,
    title_from_commit,
    title_from_prompt,
)
from looma_git.pipeline.views import (
    QUOTE_MAX,
    ClusterMemo,
    Evidence,
    MemoryView,
    RefineInput,
    WorkItemView,
)
from looma_git.store.gitfacts import CommitInfo

PROMPT_OBS = 300  # characters of a session's opening request kept in its observation
LONG_SESSION_WINDOWS = 3  # one read-only session this long is an investigation on its own
LONG_SESSION_EVENTS = 40


def _features(c: Cluster, linked: int, extra_sessions: int = 0) -> dict[str, float]:
    # Sessions that only read corroborate nothing of an effort that edits: they never add
    # breadth to it. An investigation (nothing edited, nothing linked) rests on them alone
    # (its confidence stays under READONLY_CAP).
    investigation = c.readonly and not linked
    sessions = {w.session_key for w in c.windows if investigation or not w.is_readonly} | (
        set(c.seed.sessions) if c.seed else set())
    agents = {s.split(":", 1)[0] for s in sessions}
    edited = set(c.files)
    if edited:
        corroborated = sum(1 for f, n in c.files.items() if n >= 2)
        f_overlap = corroborated / len(edited)
        if linked:
            f_overlap = max(f_overlap, 1.0)
    else:
        f_overlap = 0.0
    days = {w.start_ts[:10] for w in c.windows if w.start_ts}
    return {
        "file_overlap": f_overlap,
        "commit_linkage": conf.commit_linkage(linked),
        "session_breadth": conf.breadth(len(sessions) + extra_sessions),
        "agent_breadth": conf.breadth(len(agents)),
        "temporal_persistence": conf.breadth(len(days)),
    }


def _summary(c: Cluster, commits: list[CommitInfo], mems: list[MemoryView]) -> str:
    parts = []
    files = [f for f, _ in sorted(c.files.items(), key=lambda kv: (-kv[1], kv[0]))]
    if files:
        more = f" (+{len(files) - 4})" if len(files) > 4 else ""
        parts.append("Changed: " + ", ".join(files[:4]) + more + ".")
    if commits:
        parts.append("Commits: " + "; ".join(x.subject for x in commits[-3:]) + ".")
    why = [m.text for m in mems if m.kind in ("decision", "architecture")
           and m.lifecycle == "active"][:2]
    if why:
        parts.append("Why: " + " ".join(why))
    todo = [m.text for m in mems if m.kind in ("todo", "bug") and m.lifecycle == "active"][:2]
    failing = [cmd for w in c.windows for cmd, code, outcome in w.commands
               if outcome == "failed"][-1:]
    if todo or failing:
        parts.append("Unfinished: " + " ".join(todo + [f"failing: {x}" for x in failing]))
    return " ".join(parts)[:1200]


def observations(c: Cluster) -> tuple[dict[str, Any], ...]:
    """What this clone saw of cluster `c`, one record per session (ledger/derive.py)."""
    per: dict[str, list[WorkSignal]] = {}
    for w in c.windows:
        per.setdefault(w.session_key, []).append(w)
    out = []
    for key in sorted(per):
        ws = sorted(per[key], key=window_order)
        files: Counter[str] = Counter()
        for w in ws:
            files.update(w.edited)
        prompt = next((w.first_prompt for w in ws if w.first_prompt), "")
        branch = next((w.branch for w in ws if w.branch), None)
        out.append({
            "agent": ws[0].agent, "id": ws[0].session_id,
            "first": min((w.start_ts for w in ws if w.start_ts), default=""),
            "last": max((w.end_ts for w in ws if w.end_ts), default=""),
            "days": sorted({w.start_ts[:10] for w in ws if w.start_ts}),
            "files": dict(sorted(files.items())), "windows": len(ws), "branch": branch,
            "prompt": prompt[:PROMPT_OBS],
            "readonly": all(w.is_readonly for w in ws)})
    return tuple(out)


def _corroborated(c: Cluster) -> bool:
    """Work without edits or commits that is still real: two sessions, or one long one, that
    read or named files of this repository (chat about nothing here is not an investigation)."""
    if not any(w.read or w.mentioned for w in c.windows):
        return False
    sessions = {w.session_key for w in c.windows}
    if len(sessions) >= 2:
        return True
    return len(c.windows) >= LONG_SESSION_WINDOWS or sum(
        len(w.event_ids) for w in c.windows) >= LONG_SESSION_EVENTS


def derive(inp: RefineInput, clusters: list[Cluster], keys: dict[str, tuple[Any, ...]],
           reuse: set[str], cands_by_window: Mapping[str, Sequence[MemoryCandidate]],
           own: frozenset[str] | None, founded: set[str] | None = None
           ) -> tuple[list[WorkItemView], MemoryList, list[Any], list[Target],
                      dict[str, ClusterMemo], set[str], frozenset[str] | None, LinkMemo]:
    """What the resolved clusters give: views, memories, commit links and link targets (the
    clusters in `reuse` from the memo), the memo for the next pass, the commit authors
    with session evidence (`own`, plus those content evidence adds) and the links' memo.
    `founded` (an appending pass): the clusters it founded; then only the commits near a
    changed target are linked again (pipeline/resolve_links.py)."""
    overrides = dict(inp.overrides)
    memo: Mapping[str, ClusterMemo] = inp.memo if inp.memo is not None else {}
    targets = []
    for c in clusters:
        if (c.seed and c.seed.quarantined) or c.readonly:
            continue
        t = memo[c.id].target if c.id in reuse else None
        targets.append(t if t is not None else target_of(c))
    targets_by = {t.id: t for t in targets}
    by_sha = {x.sha: x for x in inp.commits}
    # A split by files decided which part each of its commits belongs to: no second part.
    owned = {s.id for s in inp.seeds if s.owns}
    settled = frozenset(sha for sha, wi in inp.ledger_links if wi in owned)
    key = links_key(commits_fingerprint(inp.commits), inp.forbidden_links, settled, own)
    links = None
    if founded is not None and inp.content_of is not None:
        changed = {}
        for c in clusters:
            if c.id not in reuse:
                old = memo[c.id].target if c.id in memo else None
                if old != targets_by.get(c.id):
                    changed[c.id] = (old, targets_by.get(c.id))
        links = append_links(inp.commits, targets, changed, founded, inp.links_memo, key,
                             inp.forbidden_links, own, settled, inp.content_of)
    if links is None:
        content = inp.content if inp.content is not None or inp.content_of is None \
            else inp.content_of(None)
        links = link_commits(list(inp.commits), targets, inp.forbidden_links, own, content,
                             settled)
    if (inp.content is not None or inp.content_of is not None) and (
            more := content_authors(list(inp.commits), links)):
        own = frozenset(own or ()) | more  # the drain's link step judges strangers the same
    link_memo = LinkMemo(key, tuple(sorted(targets_by)), tuple(links))
    linked: dict[str, set[str]] = {}
    strong = {ln.sha for ln in links if strong_link(dict(ln.why))}
    for ln in links:
        linked.setdefault(ln.workitem, set()).add(ln.sha)
    for sha, wi in inp.ledger_links:
        linked.setdefault(wi, set()).add(sha)
    for c in clusters:
        linked.setdefault(c.id, set()).update(c.commits)
    items: list[WorkItemView] = []
    parts: list[tuple[str, Sequence[MemoryView]]] = []  # each cluster's memories
    fresh_memo: dict[str, ClusterMemo] = {}
    recomputed: set[str] = set()
    for c in clusters:
        shas = sorted(linked.get(c.id, set()), key=lambda s: (by_sha[s].ts if s in by_sha
                                                              else "", s))
        full = (tuple(shas), tuple(x in strong for x in shas), overrides.get(c.id))
        hit = memo.get(c.id) if c.id in reuse else None
        if hit is not None and hit.full == full:
            items.append(hit.view)
            parts.append((c.id, hit.memories))  # (packed: decoded only when read)
            fresh_memo[c.id] = hit
            continue
        recomputed.add(c.id)
        feats = _features(c, len(shas))
        cf = conf.score(feats, override=overrides.get(c.id))
        if c.readonly and cf.override is None and cf.value > conf.READONLY_CAP:
            cf = conf.Confidence(conf.READONLY_CAP, conf.band(conf.READONLY_CAP), cf.features)
        cands = [x for w in c.windows for x in cands_by_window.get(w.key, [])]
        mems = expire_done(memory_views(c, cands, feats),
                           [by_sha[s] for s in shas if s in by_sha])
        parts.append((c.id, tuple(mems)))
        first = min((w for w in c.windows), key=lambda w: (parse_ts(w.start_ts), w.key),
                    default=None)
        prompt = first.first_prompt if first else ""
        commit_objs = [by_sha[s] for s in shas if s in by_sha]
        # The same rule the ledger fold applies (ledger/derive.py): the earliest implementing
        # commit that names an effort, else the opening request; never a chore/fixup/merge.
        real = [x for x in commit_objs if not is_chore(x.subject, "", x.files)]
        branch = (min(c.branches, key=lambda b: (-c.branches[b], b)) if c.branches
                  else (c.seed.branch if c.seed else None))
        effort_words = own_words(prompt[:PROMPT_OBS], branch)
        real = [real[i] for i in creating_first([x.subject for x in real],
                                                [x.sha in strong for x in real], effort_words)]
        from_commit = title_from_commit(real[0].subject) if real else ""
        prompt_title = title_from_prompt(prompt) if prompt else ""
        title = from_commit or (c.seed.title if c.seed else "") or prompt_title or "Untitled work"
        # The judgement the ledger fold makes (ledger/derive.py), on the same evidence.
        observed = observations(c)  # (pure: once per cluster, also for the view below)
        obs = sorted(observed, key=lambda o: (o["first"] or "~", o["agent"], o["id"]))
        kind = judge_kind(prompts=[o["prompt"] for o in obs if o["prompt"]],
                          subjects=[x.subject for x in real],
                          branches=[o["branch"] for o in obs],
                          files=[*c.all_files(), *(f for x in real for f in x.files)],
                          changed=bool(shas) or not c.readonly) or "feature"
        quotes = []
        if first and prompt:
            quotes.append(Evidence(quote=prompt[:QUOTE_MAX], agent=first.agent,
                                   session=first.session_id, event=first.event_ids[0],
                                   hash="", start=0, end=min(len(prompt), QUOTE_MAX)))
        branch = c.branches.most_common(1)[0][0] if c.branches else (
            c.seed.branch if c.seed else None)
        sess = sorted({(w.agent, w.session_id) for w in c.windows} |
                      ({tuple(s.split(":", 1)) for s in c.seed.sessions} if c.seed else set()))
        items.append(WorkItemView(
            id=c.id, seed_id=c.seed.id if c.seed else None, title=title,
            kind=kind, status="active",
            summary=_summary(c, commit_objs, mems),
            files=tuple(sorted(c.all_files())), aliases=tuple(c.aliases[:8]), branch=branch,
            confidence=cf, sessions=tuple((a, b) for a, b in sess),
            windows=tuple(w.key for w in c.windows), commits=tuple(shas),
            related=tuple(sorted(c.related.items())), readonly=c.readonly,
            quarantined=bool(c.seed and c.seed.quarantined),
            first_ts=min((w.start_ts for w in c.windows if w.start_ts), default=""),
            last_ts=max((w.end_ts for w in c.windows if w.end_ts), default=""),
            evidence=tuple(quotes), terms=tuple(c.terms.most_common(20)),
            last_active=max([w.end_ts[:19] + "Z" for w in c.windows if w.end_ts]
                            + [x.ts for x in commit_objs], default=""),
            observed=observed,
            corroborated=c.readonly and _corroborated(c)))
        target = None if (c.seed and c.seed.quarantined) or c.readonly else targets_by[c.id]
        fresh_memo[c.id] = ClusterMemo(key=keys[c.id], target=target, full=full,
                                       view=items[-1], memories=Packed.of(mems))
    return items, MemoryList(parts), links, targets, fresh_memo, recomputed, own, link_memo


def target_of(c: Cluster) -> Target:
    """What the linker knows about cluster `c`."""
    spans = tuple((parse_ts(w.start_ts), parse_ts(w.end_ts)) for w in c.windows
                  if w.start_ts)
    return Target(
        id=c.id, title=c.seed.title if c.seed else "", files=frozenset(c.all_files()),
        branches=frozenset(c.branches) | ({c.seed.branch} if c.seed and c.seed.branch
                                          else set()),
        spans=spans, terms=tuple(c.terms.most_common(60)),
        windows=tuple(sorted((w.session_key, parse_ts(w.start_ts), parse_ts(w.end_ts))
                             for w in c.windows if w.start_ts)))
