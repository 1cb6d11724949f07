"""The commit linker alone on the teamwork benchmark: links scored with the truth's clustering.

`quality_teamwork` scores the links of the published WorkItems, so a WorkItem that mixes two
efforts makes its links wrong whatever the linker did. Here the stored windows of a kept run
(`python -m tests.bench.quality_teamwork --keep DIR`) are grouped by the truth's segment ->
effort assignment instead of looma's clusters (a window goes to the effort most of its events
belong to; what it wrote goes by the time of its events, so a window spanning two segments
gives each effort its part), one link target per effort is built from them as the refinery
builds one from a cluster, and `pipeline.linking.link_commits` is run against every commit with the
content evidence the refinery would give it. Precision/recall are over (commit, effort)
pairs, merge commits and the unreachable originals of the squashed/rebased branches left out.

`python -m tests.bench.links_oracle DIR [--verbose]`.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests.bench.quality_teamwork import _norm, _prf, _session_events


def _event_efforts(truth: dict[str, Any], repo: Path) -> dict[str, str]:
    """event id -> the effort of the truth segment holding it (the scorer's segment rule)."""
    stored = _session_events(repo)
    by_session: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for seg in truth["segments"]:
        by_session.setdefault((seg["agent"], seg["id"]), []).append(seg)
    out: dict[str, str] = {}
    for key, segs in by_session.items():
        evs = stored.get(key, [])
        starts = []
        for seg in segs:
            hits = [i for p in seg["prompts"] for i, (_, role, text) in enumerate(evs)
                    if role == "user" and _norm(p)[:80] and _norm(p)[:80] in text][:1]
            starts.append(hits[0] if hits else None)
        for n, seg in enumerate(segs):
            a = starts[n]
            if a is None or not seg["effort"]:
                continue
            later = [x for x in starts[n + 1:] if x is not None]
            for eid, _, _ in evs[a:later[0] if later else len(evs)]:
                out[eid] = seg["effort"]
    return out


def oracle_links(base: Path) -> dict[str, Any]:
    """Link precision/recall of the linker given the truth's clustering."""
    from looma_git.api.refine import link_content
    from looma_git.pipeline.linking import Target, link_commits
    from looma_git.pipeline.signals import WorkSignal, parse_ts
    from looma_git.pipeline.text import path_terms
    from looma_git.store.gitfacts import list_commits

    truth = json.loads((base / "truth.json").read_text(encoding="utf-8"))
    repo = base / "repo"
    effort_of = _event_efforts(truth, repo)
    conn = sqlite3.connect(repo / ".git" / "looma" / "store.db")
    try:
        ts_of = {eid: parse_ts(ts or "") for eid, ts in conn.execute(
            "SELECT event_id, ts FROM events")}
        groups: dict[str, list[WorkSignal]] = {}
        # Where a window spans two segments, each effort gets the part of it its events span
        # (what that part of the session wrote is that effort's).
        spans: dict[str, list[tuple[str, float, float]]] = {}
        for (raw,) in conn.execute("SELECT json FROM refine_signals ORDER BY key"):
            w = WorkSignal.from_json(json.loads(raw)["signal"])
            votes = Counter(effort_of[e] for e in w.event_ids if e in effort_of)
            if votes:
                groups.setdefault(max(sorted(votes), key=lambda k: votes[k]), []).append(w)
            for effort in votes:
                times = [ts_of[e] for e in w.event_ids
                         if effort_of.get(e) == effort and ts_of.get(e)]
                if times:
                    spans.setdefault(effort, []).append((w.session_key, min(times), max(times)))
        targets = []
        for effort in sorted(set(groups) | set(spans)):
            ws = groups.get(effort, [])
            terms: Counter[str] = Counter()
            files: set[str] = set()
            branches = set()
            for w in ws:
                terms.update(w.term_counts())
                files |= w.edited
                for f in w.edited:
                    terms.update({t: 3 for t in path_terms(f)})
                if w.branch and w.branch not in ("main", "master"):
                    branches.add(w.branch)
            targets.append(Target(
                id=effort, title="", files=frozenset(files), branches=frozenset(branches),
                spans=tuple((parse_ts(w.start_ts), parse_ts(w.end_ts)) for w in ws
                            if w.start_ts),
                terms=tuple(terms.most_common(60)),
                windows=tuple(sorted(spans.get(effort, ())))))
        commits = [c for c in list_commits(repo) if not c.subject.startswith("looma: ")]
        content = link_content(conn, repo, commits)
    finally:
        conn.close()
    links = link_commits(commits, targets, content=content)
    merges = set(truth["merge_commits"]) | set(truth["unreachable_commits"])
    truth_links = {(sha, e["key"]) for e in truth["efforts"] for sha in e["commits"]
                   if sha not in merges}
    pred = {(ln.sha, ln.workitem) for ln in links if ln.sha not in merges}
    p, r, _ = _prf(len(pred & truth_links), len(pred - truth_links), len(truth_links - pred))
    unl = truth["unlinked_commits"]
    linked = {s for s, _ in pred}
    subjects = {c.sha: c.subject for c in commits}
    whys = {ln.sha: dict(ln.why) for ln in links}
    return {
        "oracle_link_precision": p, "oracle_link_recall": r,
        "oracle_chores_linked": sum(1 for role in ("chore", "release", "skeleton")
                                    for s in unl[role] if s in linked),
        "oracle_teammate_linked": sum(1 for s in unl["teammate"] if s in linked),
        "oracle_wrong": sorted(f"{s[:8]} -> {k} ({subjects.get(s, '')[:50]}) {whys.get(s)}"
                        for s, k in pred - truth_links),
        "oracle_missed": sorted(f"{s[:8]} {k} ({subjects.get(s, '')[:50]})"
                         for s, k in truth_links - pred),
        "oracle_by_evidence": dict(Counter("content" if "content" in dict(ln.why) else "score"
                                    for ln in links))}


def summary(m: dict[str, Any]) -> str:
    return (f"linker alone (truth clustering): P {m['oracle_link_precision']} "
            f"R {m['oracle_link_recall']}; chores linked {m['oracle_chores_linked']}, teammate "
            f"commits linked {m['oracle_teammate_linked']}; links by evidence "
            f"{m['oracle_by_evidence']}")


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    m = oracle_links(Path(args[0]))
    print(summary(m))
    if "--verbose" in args:
        for line in m["oracle_wrong"]:
            print("  wrong ", line)
        for line in m["oracle_missed"]:
            print("  missed", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
