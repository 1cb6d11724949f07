"""The refinery pass: signals -> clusters -> links -> confidence -> memories. Pure: no I/O."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from looma_git.pipeline import confidence as conf
from looma_git.pipeline.authorship import with_authorship
from looma_git.pipeline.clusters import Cluster, window_order
from looma_git.pipeline.extractor import Extractor, HeuristicExtractor, same_evidence
from looma_git.pipeline.heuristics import MemoryCandidate, confirmed_plan
from looma_git.pipeline.kinds import judge_kind
from looma_git.pipeline.linking import Target, content_authors, link_commits
from looma_git.pipeline.memories import expire_done
from looma_git.pipeline.memories import memories as memory_views
from looma_git.pipeline.replay import Replay
from looma_git.pipeline.resolve import Resolver
from looma_git.pipeline.signals import WorkSignal, parse_ts, windows_of
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
    RefineResult,
    StoredWindow,
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


def _windows(inp: RefineInput, extractor: Extractor
             ) -> tuple[list[WorkSignal], dict[str, Sequence[MemoryCandidate]], float, int]:
    """Every window of the pass, its candidates, the replay point and how many were extracted.

    Sessions are segmented one at a time (events are dropped after each); a window whose
    signals equal a stored one reuses its candidates (extraction is the costly part)."""
    prior = {sw.signal.key: sw for sw in inp.prior}
    windows: list[WorkSignal] = []
    cands: dict[str, Sequence[MemoryCandidate]] = {}
    changed: set[str] = set()
    first_change = float("inf")
    extracted = 0
    for s in inp.sessions:
        changed.add(s.key)
        ws = windows_of(s, inp.known_paths, inp.sha_lookup)
        by_event = {e.event_id: e for e in s.events}
        for w in ws:
            old = prior.get(w.key)
            windows.append(w)
            # (what it wrote is the repository's to say, set afresh below for every window)
            if old is not None and replace(old.signal, wrote=frozenset(), landed="") == w:
                cands[w.key] = list(old.cands)
                continue
            first_change = min(first_change, window_order(w)[0])
            found: list[MemoryCandidate] = []
            proposed = None  # the agent's last message, until the user answers it
            for eid in w.event_ids:
                ev = by_event[eid]
                found.extend(extractor.extract(ev.text, event_id=ev.event_id, agent=s.agent,
                                               session_id=s.session_id, ts=ev.ts,
                                               role=ev.role))
                if ev.role == "user" and proposed is not None:  # "yes, do it": a plan
                    found.extend(c for c in confirmed_plan(
                        proposed.text or "", ev.text or "", event_id=proposed.event_id,
                        agent=s.agent, session_id=s.session_id, ts=proposed.ts)
                        if not any(same_evidence(c, k) for k in found))
                proposed = ev if ev.role == "assistant" else (
                    None if ev.role == "user" else proposed)
            cands[w.key] = found
            extracted += 1
        kept = {w.key for w in ws}
        for sw in inp.prior:  # windows a re-segmented session no longer has
            if sw.signal.session_key == s.key and sw.signal.key not in kept:
                first_change = min(first_change, window_order(sw.signal)[0])
    for sw in inp.prior:
        if sw.signal.session_key not in changed:
            windows.append(sw.signal)
            cands[sw.signal.key] = sw.cands  # (read only for a cluster whose memo is stale)
    return windows, cands, first_change, extracted


def refine(inp: RefineInput) -> RefineResult:
    """One deterministic pass over all sessions, commits and ledger seeds."""
    extractor = inp.extractor if inp.extractor is not None else HeuristicExtractor()
    windows, cands_by_window, first_change, extracted = _windows(inp, extractor)
    first_change = min(first_change, inp.dirty_from)
    prior = {sw.signal.key: sw for sw in inp.prior}
    # Which commits each window wrote, and where they landed: a new commit (or a moved
    # branch) changes an old window's evidence, and resolution is replayed only up to it.
    windows = with_authorship(windows, inp.commits, inp.content)
    for w in windows:
        old = prior.get(w.key)
        if old is not None and (old.signal.wrote, old.signal.landed) != (w.wrote, w.landed):
            first_change = min(first_change, window_order(w)[0])
    resolver = Resolver(list(inp.seeds))
    replay = Replay(inp.seeds if inp.prior_seeds is None else inp.prior_seeds, inp.seeds,
                    first_change, enabled=inp.replay)
    placed: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = {}
    decided: dict[str, tuple[tuple[str, ...] | None, bool]] = {}  # key -> (scored, founded)
    same: set[str] = set()  # windows equal to their stored selves
    rescored = 0
    for w in sorted(windows, key=window_order):
        old = prior.get(w.key)
        if old is not None and old.signal == w:
            same.add(w.key)
        founding = resolver.routed_to(w) is None
        if founding and replay.may_replay(w, old, resolver):
            assert old is not None
            founded = old.cluster not in resolver.by_id
            resolver.assign(w, old.cluster, dict(old.related))
            cid, related, scored = old.cluster, old.related, old.scored
        else:
            n = len(resolver.clusters)
            cid, rel = resolver.add(w)
            founded = len(resolver.clusters) > n
            related, scored = tuple(sorted(rel.items())), resolver.last_scored
            rescored += founding
        placed[w.key] = (cid, related)
        decided[w.key] = (scored, founded)
        replay.placed(w, old, cid, resolver)
    clusters = resolver.result()
    overrides = dict(inp.overrides)
    memo: Mapping[str, ClusterMemo] = inp.memo if inp.memo is not None else {}
    keys = {c.id: _memo_key(c) for c in clusters}
    # A cluster's derived results are reused when its inputs are the last pass's: the same
    # seed, windows (each equal to its stored self) and related edges, and for the view the
    # same commits linked the same way and the same override.
    reuse = {c.id for c in clusters if c.id in memo and memo[c.id].key == keys[c.id]
             and all(w.key in same for w in c.windows)}
    targets = []
    for c in clusters:
        if (c.seed and c.seed.quarantined) or c.readonly:
            continue
        t = memo[c.id].target if c.id in reuse else None
        targets.append(t if t is not None else target_of(c))
    targets_by = {t.id: t for t in targets}
    by_sha = {x.sha: x for x in inp.commits}
    own = own_authors(windows, inp.commits, inp.local_authors)
    # A split by files decided which part each of its commits belongs to: no second part.
    owned = {s.id for s in inp.seeds if s.owns}
    links = link_commits(list(inp.commits), targets, inp.forbidden_links, own, inp.content,
                         frozenset(sha for sha, wi in inp.ledger_links if wi in owned))
    if inp.content is not None and (more := content_authors(list(inp.commits), links)):
        own = frozenset(own or ()) | more  # the drain's link step judges strangers the same
    linked: dict[str, set[str]] = {}
    strong = {ln.sha for ln in links if strong_link(dict(ln.why))}
    for ln in links:
        linked.setdefault(ln.workitem, set()).add(ln.sha)
    for sha, wi in inp.ledger_links:
        linked.setdefault(wi, set()).add(sha)
    for c in clusters:
        linked.setdefault(c.id, set()).update(c.commits)
    items: list[WorkItemView] = []
    memories: list[MemoryView] = []
    fresh_memo: dict[str, ClusterMemo] = {}
    recomputed: set[str] = set()
    for c in clusters:
        shas = sorted(linked.get(c.id, set()), key=lambda s: (by_sha[s].ts if s in by_sha
                                                              else "", s))
        full = (tuple(shas), tuple(x in strong for x in shas), overrides.get(c.id))
        hit = memo.get(c.id) if c.id in reuse else None
        if hit is not None and hit.full == full:
            items.append(hit.view)
            memories.extend(hit.memories)
            fresh_memo[c.id] = hit
            continue
        recomputed.add(c.id)
        n_mems = len(memories)
        feats = _features(c, len(shas))
        cf = conf.score(feats, override=overrides.get(c.id))
        if c.readonly and cf.override is None and cf.value > conf.READONLY_CAP:
            cf = conf.Confidence(conf.READONLY_CAP, conf.band(conf.READONLY_CAP), cf.features)
        cands = [x for w in c.windows for x in cands_by_window.get(w.key, [])]
        mems = expire_done(memory_views(c, cands, feats),
                           [by_sha[s] for s in shas if s in by_sha])
        memories.extend(mems)
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
        obs = sorted(observations(c), key=lambda o: (o["first"] or "~", o["agent"], o["id"]))
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
            observed=observations(c),
            corroborated=c.readonly and _corroborated(c)))
        target = None if (c.seed and c.seed.quarantined) or c.readonly else targets_by[c.id]
        fresh_memo[c.id] = ClusterMemo(key=keys[c.id], target=target, full=full,
                                       view=items[-1], memories=tuple(memories[n_mems:]))
    stored = tuple(
        StoredWindow(signal=w, cands=_cands_of(cands_by_window.get(w.key, ())),
                     cluster=placed[w.key][0], related=placed[w.key][1],
                     events=len(w.event_ids), scored=decided[w.key][0],
                     founded=decided[w.key][1])
        for w in sorted(windows, key=window_order))
    return RefineResult(workitems=tuple(items), memories=tuple(memories),
                        links=tuple(links), windows=tuple(windows), stored=stored,
                        targets=tuple(targets), rescored=rescored, extracted=extracted,
                        own_authors=own, memo=fresh_memo, recomputed=frozenset(recomputed))


def own_authors(windows: list[WorkSignal], commits: Iterable[CommitInfo],
                local: frozenset[str]) -> frozenset[str] | None:
    """Commit authors with session evidence: of commits a session named, or committed on a
    branch a session worked on, plus this clone's identity; None when no commit can be tied
    to a session at all (then nobody counts as foreign)."""
    named = {sha for w in windows for sha in w.commits}
    branches = {w.branch for w in windows if w.branch} - {"main", "master", "trunk",
                                                          "develop", "HEAD"}
    evidence = set()
    for c in commits:
        ref = c.ref.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")
        if c.sha in named or (ref in branches and len(c.parents) <= 1):
            evidence.add(c.author)
    return frozenset(evidence | set(local)) if evidence else None


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


def _cands_of(found: Sequence[MemoryCandidate]) -> Sequence[MemoryCandidate]:
    """A window's candidates as stored: a list found in this pass as a tuple, a stored
    sequence as it is (unread: a store's candidates are decoded only when used)."""
    return tuple(found) if isinstance(found, list) else found


def _memo_key(c: Cluster) -> tuple[Any, ...]:
    """A cluster's resolution inputs: its seed, its windows (by key: their content is
    checked against the stored windows) and its related edges."""
    return (c.seed, tuple(w.key for w in c.windows), tuple(sorted(c.related.items())))


def term_counter(view: WorkItemView) -> Counter[str]:
    return Counter(dict(view.terms))
