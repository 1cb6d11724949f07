"""The refinery pass: signals -> clusters -> links -> confidence -> memories. Pure: no I/O."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rapidfuzz import fuzz

from looma_git.pipeline import confidence as conf
from looma_git.pipeline.extractor import Extractor, HeuristicExtractor
from looma_git.pipeline.heuristics import Candidate, reversals
from looma_git.pipeline.inputs import Session
from looma_git.pipeline.linking import Link, Target, link_commits
from looma_git.pipeline.resolve import Cluster, Seed, resolve
from looma_git.pipeline.signals import WorkSignal, parse_ts, windows_of
from looma_git.pipeline.text import kind_from_text, title_from_commit, title_from_prompt
from looma_git.store.gitfacts import CommitInfo

QUOTE_MAX = 500


@dataclass(frozen=True)
class RefineInput:
    """Everything one pass reads."""

    sessions: tuple[Session, ...]
    commits: tuple[CommitInfo, ...]
    known_paths: frozenset[str]
    sha_lookup: dict[str, str]
    seeds: tuple[Seed, ...] = ()
    forbidden_links: frozenset[tuple[str, str]] = frozenset()  # user unlinks
    ledger_links: frozenset[tuple[str, str]] = frozenset()  # (sha, wi) live in the ledger
    overrides: tuple[tuple[str, str], ...] = ()  # (wi id, override) from user ops
    extractor: Extractor | None = None  # None: the heuristic extractor


@dataclass(frozen=True)
class Evidence:
    """A bounded quote with its source ref; the only transcript text that may reach git."""

    quote: str
    agent: str
    session: str
    event: str
    hash: str
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class MemoryView:
    """A memory candidate attached (or not) to a WorkItem."""

    id: str
    kind: str
    text: str
    workitem: str | None
    confidence: conf.Confidence
    lifecycle: str
    superseded_by: str | None
    evidence: tuple[Evidence, ...]
    sessions: tuple[str, ...]
    ts: str = ""  # when it was first said


@dataclass(frozen=True)
class WorkItemView:
    """A resolved WorkItem (promoted or still a local candidate)."""

    id: str
    seed_id: str | None
    title: str
    kind: str
    status: str
    summary: str
    files: tuple[str, ...]
    aliases: tuple[str, ...]
    branch: str | None
    confidence: conf.Confidence
    sessions: tuple[tuple[str, str], ...]
    windows: tuple[str, ...]
    commits: tuple[str, ...]
    related: tuple[tuple[str, float], ...]
    readonly: bool
    quarantined: bool
    first_ts: str
    last_ts: str
    evidence: tuple[Evidence, ...]
    terms: tuple[tuple[str, int], ...]
    last_active: str = ""  # latest session activity or implementing commit


@dataclass(frozen=True)
class RefineResult:
    """Everything one pass produced."""

    workitems: tuple[WorkItemView, ...]
    memories: tuple[MemoryView, ...]
    links: tuple[Link, ...]
    windows: tuple[WorkSignal, ...]


def _features(c: Cluster, linked: int, extra_sessions: int = 0) -> dict[str, float]:
    # Sessions that only read corroborate nothing: they never add breadth.
    sessions = {w.session_key for w in c.windows if not w.is_readonly} | (
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


def _memories(c: Cluster, cands: list[Candidate], c_conf: dict[str, float]) -> list[MemoryView]:
    groups: list[list[Candidate]] = []
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


def _expire_done(mems: list[MemoryView], commits: list[CommitInfo]) -> list[MemoryView]:
    """A todo that a later implementing commit visibly did is no longer open: expired."""
    out = []
    for m in mems:
        words = set(_salient(m.text))
        if m.kind == "todo" and m.lifecycle == "active" and len(words) >= 2 and m.ts:
            t0 = parse_ts(m.ts)
            for c in commits:
                if parse_ts(c.ts) > t0 and len(words & set(_salient(c.subject))) >= max(
                        2, DONE_OVERLAP * len(words)):
                    m = MemoryView(**{**m.__dict__, "lifecycle": "expired"})
                    break
        out.append(m)
    return out


def _salient(text: str) -> list[str]:
    from looma_git.pipeline.text import tokens

    generic = {"let", "use", "instead", "actually", "switch", "decided", "going", "store",
               "keep", "drop", "not", "we'll"}
    return [t for t in tokens(text) if t not in generic]


def refine(inp: RefineInput) -> RefineResult:
    """One deterministic pass over all sessions, commits and ledger seeds."""
    windows: list[WorkSignal] = []
    cands_by_window: dict[str, list[Candidate]] = {}
    extractor = inp.extractor if inp.extractor is not None else HeuristicExtractor()
    for s in inp.sessions:
        ws = windows_of(s, inp.known_paths, inp.sha_lookup)
        windows.extend(ws)
        by_event = {e.event_id: e for e in s.events}
        for w in ws:
            found: list[Candidate] = []
            for eid in w.event_ids:
                ev = by_event[eid]
                found.extend(extractor.extract(ev.text, event_id=ev.event_id, agent=s.agent,
                                               session_id=s.session_id, ts=ev.ts,
                                               role=ev.role))
            cands_by_window[w.key] = found
    clusters = resolve(windows, list(inp.seeds))
    overrides = dict(inp.overrides)
    targets = []
    for c in clusters:
        if (c.seed and c.seed.quarantined) or c.readonly:
            continue
        spans = tuple((parse_ts(w.start_ts), parse_ts(w.end_ts)) for w in c.windows
                      if w.start_ts)
        targets.append(Target(
            id=c.id, title=c.seed.title if c.seed else "", files=frozenset(c.all_files()),
            branches=frozenset(c.branches) | ({c.seed.branch} if c.seed and c.seed.branch
                                              else set()),
            spans=spans, terms=tuple(c.terms.most_common(60))))
    links = link_commits(list(inp.commits), targets, inp.forbidden_links)
    by_sha = {x.sha: x for x in inp.commits}
    linked: dict[str, set[str]] = {}
    for ln in links:
        linked.setdefault(ln.workitem, set()).add(ln.sha)
    for sha, wi in inp.ledger_links:
        linked.setdefault(wi, set()).add(sha)
    for c in clusters:
        linked.setdefault(c.id, set()).update(c.commits)
    items: list[WorkItemView] = []
    memories: list[MemoryView] = []
    for c in clusters:
        shas = sorted(linked.get(c.id, set()), key=lambda s: (by_sha[s].ts if s in by_sha
                                                              else "", s))
        feats = _features(c, len(shas))
        cf = conf.score(feats, override=overrides.get(c.id))
        if c.readonly and cf.override is None and cf.value > conf.READONLY_CAP:
            cf = conf.Confidence(conf.READONLY_CAP, conf.band(conf.READONLY_CAP), cf.features)
        cands = [x for w in c.windows for x in cands_by_window.get(w.key, [])]
        mems = _expire_done(_memories(c, cands, feats),
                            [by_sha[s] for s in shas if s in by_sha])
        memories.extend(mems)
        first = min((w for w in c.windows), key=lambda w: (parse_ts(w.start_ts), w.key),
                    default=None)
        prompt = first.first_prompt if first else ""
        commit_objs = [by_sha[s] for s in shas if s in by_sha]
        # Unpinned titles follow the best evidence: the first implementing commit's subject,
        # else the opening request. (A user rename pins the title; the fold enforces it.)
        from_commit = title_from_commit(commit_objs[0].subject) if commit_objs else ""
        title = from_commit or (c.seed.title if c.seed else title_from_prompt(prompt))
        kind = kind_from_text(" ".join([prompt[:300], *(x.subject for x in commit_objs[:3])]))
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
                            + [x.ts for x in commit_objs], default="")))
    return RefineResult(workitems=tuple(items), memories=tuple(memories),
                        links=tuple(links), windows=tuple(windows))


def term_counter(view: WorkItemView) -> Counter[str]:
    return Counter(dict(view.terms))
