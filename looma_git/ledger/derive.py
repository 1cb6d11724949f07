"""Shared WorkItem fields derived in the fold from every clone's observations (DESIGN §4.1).

A system `workitem.create`/`workitem.update` op carries `observe: {sessions: [...]}`: what one
clone saw of one WorkItem, per session (agent, id, first/last activity, days, edited files with
window counts, window count, branch, the opening request). Commit links carry the commit's
subject and time. The fold merges observations of one session from any number of ops (and
clones) with a commutative rule, and derives confidence, band, features, kind, title, summary,
files, sessions, aliases, branch and last_active from the union, so every clone holding the same
ops shows the same WorkItem whatever transcripts it has locally; a clone that observes nothing
new writes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from looma_git.ledger.state import LedgerState, LinkState, MemoryState, WorkItemState
from looma_git.pipeline import confidence as conf
from looma_git.pipeline.kinds import judge_kind
from looma_git.pipeline.text import (
    creating_first,
    is_chore,
    own_words,
    strong_link,
    title_from_commit,
    title_from_prompt,
)

Obs = dict[str, Any]  # one session's observation
TRUNK = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})
PROMPT_MAX = 300
MAX_ALIASES = 8


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def clean(raw: Any) -> Obs | None:
    """One observation as the fold keeps it (None when it names no session)."""
    if not isinstance(raw, dict) or not _str(raw.get("agent")) or not _str(raw.get("id")):
        return None
    files_raw, days_raw = raw.get("files"), raw.get("days")
    files: dict[Any, Any] = files_raw if isinstance(files_raw, dict) else {}
    days: list[Any] = days_raw if isinstance(days_raw, list) else []
    return {"agent": raw["agent"], "id": raw["id"], "first": _str(raw.get("first")),
            "last": _str(raw.get("last")),
            "days": sorted({d for d in days if isinstance(d, str)}),
            "files": {f: max(1, _int(n)) for f, n in files.items() if isinstance(f, str)},
            "windows": max(1, _int(raw.get("windows"))),
            "branch": _str(raw.get("branch")) or None,
            "prompt": _str(raw.get("prompt"))[:PROMPT_MAX],
            "readonly": bool(raw.get("readonly")) and not files}


def merge(a: Obs | None, b: Obs) -> Obs:
    """Two observations of one session: commutative, associative and idempotent."""
    if a is None:
        return b
    files = dict(a["files"])
    for f, n in b["files"].items():
        files[f] = max(files.get(f, 0), n)
    firsts = [x for x in (a["first"], b["first"]) if x]
    # The opening request comes from whichever saw the session start earlier (then the text).
    pa, pb = (a["first"] or "~", a["prompt"]), (b["first"] or "~", b["prompt"])
    opening = min(pa, pb) if a["prompt"] and b["prompt"] else (pa if a["prompt"] else pb)
    return {"agent": a["agent"], "id": a["id"], "first": min(firsts, default=""),
            "last": max(a["last"], b["last"]), "days": sorted(set(a["days"]) | set(b["days"])),
            "files": files, "windows": max(a["windows"], b["windows"]),
            "branch": min(x for x in (a["branch"], b["branch"]) if x)
            if (a["branch"] or b["branch"]) else None,
            "prompt": opening[1], "readonly": a["readonly"] and b["readonly"] and not files}


def covers(have: Obs | None, new: Obs) -> bool:
    """`have` already says everything `new` says (so `new` need not be written)."""
    return have is not None and merge(have, new) == have


def _strong(link: LinkState) -> bool:
    try:
        return strong_link(link.why, link.user)
    except TypeError:  # a `why` of another shape than looma writes (from another clone)
        return False


def _iso(ts: str) -> str:
    return ts[:19] + "Z" if ts else ""


def derive(wi: WorkItemState, obs: dict[str, Obs], links: list[LinkState],
           memories: list[MemoryState], *, title_free: bool) -> None:
    """Set the shared fields of `wi` from its observations, links and memories."""
    sessions = sorted(obs.values(), key=lambda o: (o["first"] or "~", o["agent"], o["id"]))
    stored = {(s.get("agent"), s.get("id")) for s in wi.sessions}
    all_keys = stored | {(o["agent"], o["id"]) for o in sessions}
    wi.sessions = tuple({"agent": a, "id": i} for a, i in sorted(all_keys) if a and i)
    counts: Counter[str] = Counter()
    for o in sessions:
        for f, n in o["files"].items():
            counts[f] += n
    for f in wi.files:  # written by an older writer or a split: counts once
        counts[f] = counts[f] or 1
    edited = sorted(counts)
    wi.files = tuple(edited)
    commits = sorted((ln for ln in links), key=lambda ln: (ln.ts or "~", ln.sha))
    real = [ln for ln in commits if ln.subject and not is_chore(ln.subject, "", ln.files)]
    # The commit that created the work: the earliest one linked on strong evidence (content,
    # branch, a user), else the earliest linked at all; first the ones whose subject speaks
    # the effort's own words (its opening request, its branch: pipeline/text.creating_first).
    opening = next((o for o in sessions if o["prompt"]), None)
    prompt = opening["prompt"] if opening else ""
    on = Counter(o["branch"] for o in sessions if o["branch"] and o["branch"] not in TRUNK)
    own = own_words(prompt, min(on, key=lambda b: (-on[b], b)) if on else None)
    real = [real[i] for i in creating_first([ln.subject for ln in real],
                                            [_strong(ln) for ln in real], own)]
    if not wi.forced and not wi.false_positive:
        observed = {(o["agent"], o["id"]) for o in sessions}
        # Sessions that only read corroborate an effort that changed files nothing; an
        # investigation (nothing edited, nothing linked) rests on them alone, capped below.
        investigation = not edited and not links
        keys = {(o["agent"], o["id"]) for o in sessions
                if investigation or not o["readonly"]} | (stored - observed)
        agents = {a for a, _ in keys}
        if edited:
            f_overlap = sum(1 for f in edited if counts[f] >= 2) / len(edited)
            if links:
                f_overlap = 1.0
        else:
            f_overlap = 0.0
        days = {d for o in sessions for d in o["days"]}
        feats = {"file_overlap": f_overlap, "commit_linkage": conf.commit_linkage(len(links)),
                 "session_breadth": conf.breadth(len(keys)),
                 "agent_breadth": conf.breadth(len(agents)),
                 "temporal_persistence": conf.breadth(len(days))}
        c = conf.score(feats)
        value = c.value
        if not edited and not links:
            value = min(value, conf.READONLY_CAP)
        wi.confidence, wi.band = round(value, 2), conf.band(round(value, 2))
        wi.features = {k: round(v, 2) for k, v in c.features}
    else:  # a person decided (or it is a false positive): no scored features, in any fold
        wi.features = {}
    if title_free:
        # The documented rule (docs/format.md "Derived fields"): the subject of the earliest
        # linked commit that names an effort (strongly linked ones first), else the earliest
        # session's opening request, else the branch; a chore, fixup, squash, merge or bump
        # subject never titles.
        title = title_from_commit(real[0].subject) if real else ""
        if not title and prompt:
            t = title_from_prompt(prompt)
            title = "" if t == "Untitled work" else t
        if not title and wi.branch and isinstance(wi.branch, str):
            title = wi.branch.rsplit("/", 1)[-1].replace("-", " ").replace("_", " ").capitalize()
        if title:
            wi.title = title
        # A judgement over all recorded evidence (pipeline/kinds.py): every session's opening
        # request, the implementing commits (the creating one first), branches, fragments.
        kind = judge_kind(prompts=[o["prompt"] for o in sessions if o["prompt"]],
                          subjects=[ln.subject for ln in real],
                          branches=[o["branch"] for o in sessions],
                          files=[*edited, *(f for ln in real for f in ln.files)],
                          changed=bool(links or edited))
        if kind:
            wi.kind = kind
    aliases = list(wi.aliases)
    for o in sessions:
        t = title_from_prompt(o["prompt"]) if o["prompt"] else ""
        if t and t != "Untitled work" and t != wi.title and t not in aliases \
                and len(aliases) < MAX_ALIASES:
            aliases.append(t)
    # never the title itself (a title that was an alias once, as renames come and go)
    wi.aliases = tuple(sorted(set(aliases) - {wi.title}))
    branches = Counter(o["branch"] for o in sessions if o["branch"] and o["branch"] not in TRUNK)
    if branches:
        wi.branch = min(branches, key=lambda b: (-branches[b], b))
    wi.summary = summary(counts, commits, memories)
    stamps = [_iso(o["last"]) for o in sessions if o["last"]] + [ln.ts for ln in links if ln.ts]
    if stamps:
        wi.last_active = max([wi.op_last_active, *stamps])


def summary(counts: Counter[str], links: list[LinkState], memories: list[MemoryState]) -> str:
    """What the effort changed, its latest commits, why, and what is unfinished."""
    parts = []
    files = [f for f, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    if files:
        more = f" (+{len(files) - 4})" if len(files) > 4 else ""
        parts.append("Changed: " + ", ".join(files[:4]) + more + ".")
    subjects = [ln.subject for ln in links if ln.subject]
    if subjects:
        parts.append("Commits: " + "; ".join(subjects[-3:]) + ".")
    # Memory fields come from ops of any clone: a said_at or text that is not a string (which
    # no looma writes) sorts last or is left out, never stops the fold.
    try:
        mems = sorted(memories, key=lambda m: (m.said_at or "~", m.id))
    except TypeError:
        mems = sorted(memories, key=lambda m: (_str(m.said_at) or "~", m.id))
    why = [m.text for m in mems if m.kind in ("decision", "architecture")
           and m.lifecycle == "active" and not m.false_positive][:2]
    why = [t for t in why if isinstance(t, str)]
    if why:
        parts.append("Why: " + " ".join(why))
    todo = [m.text for m in mems if m.kind in ("todo", "bug") and m.lifecycle == "active"
            and not m.false_positive][:2]
    todo = [t for t in todo if isinstance(t, str)]
    if todo:
        parts.append("Unfinished: " + " ".join(todo))
    return " ".join(parts)[:1200]


def derive_all(state: LedgerState, obs: dict[str, dict[str, Obs]],
               user_created: set[str], only: set[str] | None = None) -> set[str]:
    """Derive the observed WorkItems (those in `only` when given); returns the ids whose
    fields changed."""
    if not obs or only == set():
        return set()
    grouped: dict[str, dict[str, Obs]] = {}
    wis = state.workitems
    for wid, per in obs.items():
        if only is not None and wid not in only:
            w = wis.get(wid)
            if w is None or not w.merged_into:
                continue  # its own survivor (`survivor`'s rule), not asked for: no call
        canon = state.survivor(wid)
        if only is not None and canon not in only:
            continue
        target = grouped.setdefault(canon, {})
        for key, o in per.items():
            target[key] = merge(target.get(key), o)
    by_wi: dict[str, list[LinkState]] = {}
    for link in state.links.values():
        if link.workitem in grouped:
            by_wi.setdefault(link.workitem, []).append(link)
    mems: dict[str, list[MemoryState]] = {}
    # the ids whose survivor is being derived (few when `only` is): a set test per memory
    members = set(grouped) | {w for w, wi in state.workitems.items()
                              if wi.merged_into and state.survivor(w) in grouped}
    # the fold cache's memories unpickle only the groups asked for (store/fold_lazy.py)
    of = getattr(state.memories, "of_workitems", None)
    for m in (of(members) if of is not None else state.memories.values()):
        if isinstance(m.workitem, str) and m.workitem in members:
            mems.setdefault(state.survivor(m.workitem), []).append(m)
    changed = set()
    for wid, per in grouped.items():
        wi = state.workitems.get(wid)
        if wi is None or wi.merged_into or wi.split_into:
            continue
        before = _snapshot(wi)
        derive(wi, per, by_wi.get(wid, []), mems.get(wid, []),
               title_free=not wi.pinned_title and wid not in user_created)
        if _snapshot(wi) != before:
            changed.add(wid)
    return changed


def _snapshot(wi: WorkItemState) -> tuple[Any, ...]:
    return (wi.title, wi.kind, wi.summary, wi.files, wi.aliases, wi.branch, wi.confidence,
            wi.band, tuple(sorted(wi.features.items())), wi.sessions, wi.last_active)
