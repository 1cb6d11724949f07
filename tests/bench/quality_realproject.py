"""Scoring looma on the real-project benchmark (fixtures/realproject): long single-effort Claude
Code sessions against python-humanize's real history — through the commands a user runs."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.bench import quality_teamwork as qt

ROOT = Path(__file__).resolve().parents[2]

# The issue-13 targets on real data (tests/test_quality.py asserts each one).
TARGETS = {"clustering_f1": 0.90, "link_precision": 0.97, "link_recall": 0.90,
           "chores_linked": 0, "mistitled": 0, "resume_correct": 18}


def missing(*variants: str) -> list[str]:
    """Why each of `variants` (2025h2, 2025q1, 2024h2, holdout, holdout2, holdout3, holdout4) cannot be
    built here, with the command that gets its data: the real histories are not committed, they
    are extracted from a local mirror (fixtures/realdata.py)."""
    sys.path.insert(0, str(ROOT))
    from fixtures import realdata

    return [why for why in (realdata.locate(v)[1] for v in variants) if why]


def build(base: Path, variant: str = "2025h2") -> tuple[Any, dict[str, str], dict[str, float]]:
    """Generate the benchmark and run init, ingest, backfill on it (`variant`: 2025h2 or 2025q1,
    humanize's ranges, or holdout/holdout2/holdout3/holdout4: pipx, marshmallow, flask-sqlalchemy,
    rich). Returns (benchmark, env, CPU
    seconds per step, children included)."""
    sys.path.insert(0, str(ROOT))
    from fixtures.realproject.generate import build_realproject, env_for

    src = None
    if variant == "holdout":
        from fixtures.holdout.source import source as holdout
        src, variant = holdout(), "2025h2"
    elif variant == "holdout2":
        from fixtures.holdout2.source import source as holdout2
        src, variant = holdout2(), "2025h2"
    elif variant == "holdout3":  # flask-sqlalchemy
        from fixtures.holdout3.source import source as holdout3
        src, variant = holdout3(), "2025h2"
    elif variant == "holdout4":  # rich
        from fixtures.holdout4.source import source as holdout4
        src, variant = holdout4(), "2025h2"

    def cpu_now() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    cpu: dict[str, float] = {}
    c0 = cpu_now()
    rp = build_realproject(base, variant=variant, source=src)
    cpu["generate"] = round(cpu_now() - c0, 2)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(env_for(rp), LOOMA_NO_PROGRESS="1")
    for args in (("init",), ("ingest",), ("backfill",)):
        c0 = cpu_now()
        qt._looma(Path(rp.repo), env, *args)
        cpu[args[0]] = round(cpu_now() - c0, 2)
    return rp, env, cpu


def _subject_key(text: str) -> str:
    """A title or subject compared loosely: case, backticks, quotes and a PR number dropped."""
    text = re.sub(r"\s*\(#\d+\)\s*$", "", text.strip())
    return re.sub(r"[`'\"«»]", "", re.sub(r"\s+", " ", text)).strip().lower()


def mistitled(truth: dict[str, Any], work: list[dict[str, Any]], key_of: dict[str, str]
              ) -> list[dict[str, Any]]:
    """WorkItems whose title is the subject of a commit that is not their effort's: another
    effort's commit, a chore, a teammate's work, a bot PR's merge."""
    out = []
    by_subject: dict[str, list[dict[str, Any]]] = {}
    for c in truth["commits"]:
        by_subject.setdefault(_subject_key(c["subject"]), []).append(c)
    for w in work:
        mine = qt._match(w["id"], key_of)
        hits = by_subject.get(_subject_key(w.get("title") or ""), [])
        bad = [c for c in hits if c["effort"] != mine]
        if hits and len(bad) == len(hits):
            c = bad[0]
            out.append({"workitem": w["id"], "effort": mine, "title": w["title"],
                        "commit": c["sha"][:8], "commit_role": c["role"],
                        "commit_effort": c["effort"]})
    return out


def workitems_vs_efforts(segs: list[dict[str, Any]], work: list[dict[str, Any]],
                         truth: dict[str, Any]) -> list[dict[str, Any]]:
    """Each published WorkItem: its title, the efforts whose prompts landed in it (with counts),
    and its commits by role."""
    role = {c["sha"]: c for c in truth["commits"]}
    out = []
    for w in work:
        landed = Counter(s["effort"] for s in segs if s["predicted"] == w["id"])
        commits = Counter((role[sha]["effort"] or role[sha]["role"]) if sha in role else "?"
                          for sha in w["commits"])
        out.append({"id": w["id"], "title": w["title"], "kind": w.get("kind"),
                    "efforts": dict(sorted(landed.items())), "commits": dict(sorted(
                        commits.items()))})
    return out


def subagents(truth: dict[str, Any], work: list[dict[str, Any]]) -> dict[str, int]:
    """Subagent files whose session sits in the same WorkItem as its parent's."""
    where: dict[str, set[str]] = {}
    for w in work:
        for s in w["sessions"]:
            where.setdefault(s["id"], set()).add(w["id"])
    total = same = 0
    for s in truth["sessions"]:
        for sub in s["subagents"]:
            total += 1
            sid = f"{s['id']}/agent-{sub['agent_id']}"
            same += bool(where.get(sid, set()) & where.get(s["id"], set()))
    return {"subagents": total, "with_parent": same}


def measure(rp: Any, env: dict[str, str]) -> dict[str, Any]:
    """Every number of the real-project benchmark against its truth."""
    repo = Path(rp.repo)
    truth = rp.truth
    segs = qt.segment_predictions(rp)
    m: dict[str, Any] = qt.clustering(segs)
    key_of = qt.effort_of_workitems(segs)
    work = json.loads(qt.query(repo, env, "work", "--json"))["workitems"]
    m.update(qt.links(truth, work, key_of))
    subj = {c["sha"][:8]: c for c in truth["commits"]}
    m["wrong_links_detail"] = [
        f"{x.split('->')[0]} {subj[x.split('->')[0]]['subject'][:60]!r} "
        f"({subj[x.split('->')[0]]['effort'] or subj[x.split('->')[0]]['role']}) -> "
        f"{x.split('->')[1]}" for x in m["wrong_links"]]
    truth_links = {sha for e in truth["efforts"] for sha in e["commits"]}
    linked = {sha for w in work for sha in w["commits"]}
    m["missed_links"] = [f"{c['sha'][:8]} {c['subject'][:60]!r} ({c['effort']})"
                         for c in truth["commits"] if c["sha"] in truth_links
                         and c["sha"] not in linked]
    m["effort_commits_linked"] = len(truth_links & linked)
    m["workitems_published"] = len(work)
    m["workitems"] = workitems_vs_efforts(segs, work, truth)
    m["mistitled_list"] = mistitled(truth, work, key_of)
    m["mistitled"] = len(m["mistitled_list"])
    kind_of = {e["key"]: e["kind"] for e in truth["efforts"]}
    m["wrong_kinds"] = [f"{w['id']} ({key_of[w['id']]}) {w.get('kind')}, labelled "
                        f"{kind_of[key_of[w['id']]]}" for w in work
                        if w["id"] in key_of and w.get("kind") != kind_of.get(key_of[w["id"]])]
    m["kinds_right"] = sum(1 for w in work if w["id"] in key_of) - len(m["wrong_kinds"])
    m.update(subagents(truth, work))
    res = qt.resume(rp, env, key_of)
    m["resume"] = res
    m["resume_correct"] = sum(r["ok"] for r in res)
    m["resume_total"] = len(res)
    kinds: dict[str, list[int]] = {}
    for r in res:
        kinds.setdefault(r["kind"], [0, 0])
        kinds[r["kind"]][0] += r["ok"]
        kinds[r["kind"]][1] += 1
    m["resume_by_kind"] = {k: f"{a}/{b}" for k, (a, b) in sorted(kinds.items())}
    if truth.get("ask"):  # decisions asked about (holdout4): a fact in the top 3 states it
        asks = qt.ask(rp, env)
        m["ask"] = asks
        m["ask_top3"] = sum(a["ok"] for a in asks)
        m["ask_total"] = len(asks)
    m["segments"] = segs
    m["prompts_unmatched"] = sum(s["prompts"] - s["prompts_found"] for s in segs)
    return m


def shape(truth: dict[str, Any]) -> dict[str, Any]:
    """The benchmark's size, for the docs and the shape test."""
    sessions = truth["sessions"]
    roles = Counter(c["role"].split(":")[0] for c in truth["commits"])
    return {"efforts": len(truth["efforts"]), "commits": truth["repo"]["commits"],
            "effort_commits": sum(len(e["commits"]) for e in truth["efforts"]),
            "merge_commits": len(truth["merge_commits"]), "chore_commits": roles["chore"],
            "teammate_commits": roles["teammate"], "sessions": len(sessions),
            "records_min": min(s["records"] for s in sessions),
            "records_max": max(s["records"] for s in sessions),
            "tool_calls": sum(s["tool_calls"] for s in sessions),
            "mib": round(sum(s["bytes"] for s in sessions) / 2**20, 1),
            "subagents": sum(len(s["subagents"]) for s in sessions),
            "prompts": len(truth["segments"]), "resume_goals": len(truth["resume"]),
            "agents": ", ".join(f"{n} {a}" for a, n in sorted(Counter(
                s["agent"] for s in sessions).items())) + " sessions",
            "first": truth["commits"][0]["date"][:10], "last": truth["commits"][-1]["date"][:10]}


def summary(m: dict[str, Any], cpu: dict[str, float], label: str = "realproject") -> str:
    """A few lines for the terminal."""
    lines = [
        f"{label} clustering: P {m['clustering_precision']} R {m['clustering_recall']} "
        f"F1 {m['clustering_f1']} ({m['predicted_workitems']} WorkItems for "
        f"{len(m['per_effort'])} efforts, {m['segments_scored']} prompts)",
        f"{label} links: P {m['link_precision']} R {m['link_recall']} "
        f"({m['links_predicted']} links, {m['links_true']} true, {m['effort_commits_linked']} effort "
        f"commits linked somewhere); chores linked "
        f"{m['chores_linked']}/{m['chores_total']}, teammate commits linked "
        f"{m['teammate_linked']}/{m['teammate_total']}",
        f"{label} mistitled WorkItems: {m['mistitled']} {m['mistitled_list']}; wrong kinds: "
        f"{m['wrong_kinds']}",
        f"{label} resume: {m['resume_correct']}/{m['resume_total']} {m['resume_by_kind']}",
        *([f"{label} ask top-3: {m['ask_top3']}/{m['ask_total']}"] if "ask" in m else []),
        f"{label} subagents with their parent: {m['with_parent']}/{m['subagents']}; "
        f"CPU s: {cpu}"]
    for w in m["workitems"]:
        lines.append(f"  {w['id']} {w['title']!r}: prompts {w['efforts']}, commits "
                     f"{w['commits']}")
    lines += [f"  wrong link {x}" for x in m["wrong_links_detail"]]
    lines += [f"  missed link {x}" for x in m["missed_links"]]
    for a in m.get("ask", []):
        lines.append(f"  ask {a['question']!r}: {'ok' if a['ok'] else 'MISS'} top3={a['top3']}")
    for r in m["resume"]:
        lines.append(f"  resume [{r['kind']}] {r['goal']!r}: want {r['want']}, got "
                     f"{r['got']} {r['candidates']} {'ok' if r['ok'] else 'WRONG'}")
    return "\n".join(lines)


# What the rows and the section's opening say, per benchmark.
_WORDS = {
    "realproject": {
        "chores": "renovate and pre-commit.ci bumps, pre-commit.ci's formatting fix, config "
                  "housekeeping, the shallow root",
        "others": "the maintainer's Python 3.9/3.15 support and prek PRs (no session)",
        "module": "quality_realproject", "flag": ""},
    "holdout": {
        "chores": "dependabot and pre-commit.ci PRs (one rewrites 56 files, src/ included), "
                  "github-actions' release commits (which delete the efforts' changelog.d "
                  "fragments), CI housekeeping, the shallow root",
        "others": "docs fixes, a URL fix, `PIPX_MAX_LOGS=0` in `src/pipx/main.py`, the "
                  "maintainer's Python 3.15 CI and llms.txt PRs (no session)",
        "module": "quality_realproject", "flag": " --holdout"},
}


def _intro(sh: dict[str, Any], source: str) -> str:
    if source == "holdout":
        return f"""## The hold-out benchmark (`fixtures/holdout/`, issue 13, never tuned on)

Built by the real-project generator and scored by the same scorer, on a project nobody tuned
the thresholds on: [pypa/pipx](https://github.com/pypa/pipx) (MIT, a CLI), {sh['first']} to
{sh['last']}, rebuilt commit for commit ({sh['commits']} commits, all on `main`: squash-merged
PRs, bots, releases; see `fixtures/holdout/README.md`): {sh['effort_commits']} commits of
{sh['efforts']} efforts by five people, {sh['chore_commits']} chores, {sh['teammate_commits']}
commits of people with no session, and {sh['sessions']} sessions that differ from the
real-project's the way users differ: {sh['agents']}; shorter sessions
({sh['records_min']}–{sh['records_max']} records, {sh['tool_calls']} tool calls,
{sh['mib']} MiB); two efforts continued in a second session (another agent, the next day) in
other words; one session that changes topic midway ("different thing now — ..."); one effort
committed straight on `main`; two near-duplicate efforts (a Windows zipapp, then its reversal)
on the same five files. The thresholds were not looked at or changed for it."""
    return f"""## The real-project benchmark (`fixtures/realproject/`, issue 13 "real data")

The shape of the maintainers' private measurement: long Claude Code sessions, one effort each,
against a real project's real history whose subjects name their effort. The history is
[python-humanize/humanize](https://github.com/python-humanize/humanize) (MIT) from
{sh['first']} to {sh['last']}, rebuilt commit for commit ({sh['commits']} commits with their
authors, dates, messages and merges; trees cut to the kept files, see
`fixtures/realproject/README.md`):
{sh['effort_commits']} commits of {sh['efforts']} efforts (PRs, squash-merged or merged with
their branch commits), {sh['chore_commits']} chores (renovate, pre-commit.ci, config),
{sh['teammate_commits']} commits of the maintainer's own PRs with no session, and
{sh['merge_commits']} merge commits. One Claude Code 2.1 session per effort
({sh['sessions']} sessions, {sh['records_min']}–{sh['records_max']} records each,
{sh['tool_calls']} tool calls, {sh['mib']} MiB, {sh['subagents']} subagent files), written as
the PR's author working on it: the goal in their own words, reads/greps/globs of the real files,
test runs that fail then pass, edits whose new text is the real diff, follow-up prompts, the
`git commit` minutes before the real commit."""


def render(m: dict[str, Any], sh: dict[str, Any], cpu: dict[str, float],
           source: str = "realproject") -> str:
    """The docs/quality.md section."""
    t = TARGETS
    words = _WORDS[source]
    rows = [
        "| measure | now | target | what it means |", "|---|---|---|---|",
        f"| prompt clustering F1 | {m['clustering_f1']} | ≥ {t['clustering_f1']} | pairwise "
        f"over {m['segments_scored']} prompts (each labelled with its effort): "
        f"precision {m['clustering_precision']}, recall {m['clustering_recall']}; "
        f"{m['predicted_workitems']} WorkItems for {len(m['per_effort'])} efforts |",
        f"| commit-link precision | {m['link_precision']} | ≥ {t['link_precision']} | "
        f"{m['links_predicted']} links published (merge commits excluded) |",
        f"| commit-link recall | {m['link_recall']} | ≥ {t['link_recall']} | of "
        f"{m['links_true']} (commit, effort) pairs ({m['effort_commits_linked']} of the effort "
        "commits are linked to some WorkItem) |",
        f"| chores linked | {m['chores_linked']}/{m['chores_total']} | 0 | {words['chores']} |",
        f"| others' commits linked | {m['teammate_linked']}/{m['teammate_total']} | 0 | "
        f"{words['others']} |",
        f"| WorkItems titled after a commit not theirs | {m['mistitled']} | 0 | another "
        "effort's, a chore's or a bot merge's subject |",
        f"| WorkItem kind = the effort's label | {m['kinds_right']}/"
        f"{m['kinds_right'] + len(m['wrong_kinds'])} | all | "
        + ("; ".join(m["wrong_kinds"]) or "none wrong") + " |",
        f"| resume: WorkItem right | {m['resume_correct']}/{m['resume_total']} | ≥ "
        f"{qt.resume_target(m, t)}/{m['resume_total']} | by kind: " + ", ".join(
            f"{k} {v}" for k, v in m["resume_by_kind"].items()) + " |",
        f"| subagent files with their parent | {m['with_parent']}/{m['subagents']} | all | "
        "an Explore subagent's transcript in the parent session's WorkItem |",
    ]
    wis = ["| WorkItem | title | prompts landed (effort: n) | commits (effort or role: n) |",
           "|---|---|---|---|"]
    wis += [f"| {w['id']} | {w['title']} | "
            + ", ".join(f"{k}: {v}" for k, v in w["efforts"].items())
            + " | " + ", ".join(f"{k}: {v}" for k, v in w["commits"].items()) + " |"
            for w in m["workitems"]]
    per_effort = ["| effort | prompts | WorkItems they landed in | in none |", "|---|---|---|---|"]
    per_effort += [f"| {k} | {v['segments']} | {v['workitems']} | {v['unassigned']} |"
                   for k, v in m["per_effort"].items()]
    resume = [f"- [{r['kind']}] `{r['goal']}`: want {r['want']}, got {r['got']} "
              f"{r['candidates']} {'ok' if r['ok'] else '**wrong**'}" for r in m["resume"]]
    wrong = [f"- {x}" for x in m["wrong_links_detail"]] or ["- none"]
    missed = [f"- {x}" for x in m["missed_links"]] or ["- none"]
    mist = [f"- {x['workitem']} ({x['effort']}) titled {x['title']!r}: the subject of "
            f"{x['commit']} ({x['commit_effort'] or x['commit_role']})"
            for x in m["mistitled_list"]] or ["- none"]
    n = chr(10)
    return f"""{_intro(sh, source)}

{n.join(rows)}

`tests/test_quality.py` asserts each target (strict xfail naming today's number where not met).
Scoring (`tests/bench/quality_realproject.py`, reusing the teamwork scorer): each user prompt is
a labelled unit (its events, up to the next prompt, vote for the WorkItem of their window, read
back from `refine_window_events`); links are `looma work --json` against the truth's (commit,
effort) pairs, merge commits neither hit nor miss; a WorkItem maps to the effort most of its
prompts carry. `python -m tests.bench.quality_realproject{words['flag']} --keep DIR` leaves the
repository, `HOME` and `truth.json` in `DIR`; then `python -m tests.bench.realproject_why DIR` prints, for
every window in resolution order, its score (with its parts) against each effort's oracle
cluster: where the score itself merges or splits efforts.

What looma made of it:

{n.join(wis)}

Per effort:

{n.join(per_effort)}

Links to the wrong effort:

{n.join(wrong)}

Missed links:

{n.join(missed)}

Mistitled WorkItems:

{n.join(mist)}

Resume goals:

{n.join(resume)}

CPU seconds (children included): {cpu}.

"""


def _render_range(m: dict[str, Any], sh: dict[str, Any], cpu: dict[str, float], intro: str
                  ) -> str:
    """A docs/quality.md subsection for another range of the repository: `intro`, then the
    numbers against the targets, the WorkItems, wrong links, mistitled ones and resume misses."""
    n = chr(10)
    wis = ["| WorkItem | title | prompts landed (effort: n) | commits (effort or role: n) |",
           "|---|---|---|---|"]
    wis += [f"| {w['id']} | {w['title']} | "
            + ", ".join(f"{k}: {v}" for k, v in w["efforts"].items())
            + " | " + ", ".join(f"{k}: {v}" for k, v in w["commits"].items()) + " |"
            for w in m["workitems"]]
    misses = [f"- [{r['kind']}] `{r['goal']}`: want {r['want']}, got {r['got']} "
              f"{r['candidates']}" for r in m["resume"] if not r["ok"]] or ["- none"]
    wrong = [f"- {x}" for x in m["wrong_links_detail"]] or ["- none"]
    mist = [f"- {x['workitem']} ({x['effort']}) titled {x['title']!r}: the subject of "
            f"{x['commit']} ({x['commit_effort'] or x['commit_role']})"
            for x in m["mistitled_list"]] or ["- none"]
    return intro + f"""| measure | this range | target |
|---|---|---|
| prompt clustering F1 | {m['clustering_f1']} (P {m['clustering_precision']}, R {m['clustering_recall']}; {m['predicted_workitems']} WorkItems for {len(m['per_effort'])} efforts) | ≥ {TARGETS['clustering_f1']} |
| commit-link precision / recall | {m['link_precision']} / {m['link_recall']} | ≥ {TARGETS['link_precision']} / ≥ {TARGETS['link_recall']} |
| chores / others' commits linked | {m['chores_linked']}/{m['chores_total']}, {m['teammate_linked']}/{m['teammate_total']} | 0 |
| mistitled WorkItems | {m['mistitled']} | 0 |
| resume | {m['resume_correct']}/{m['resume_total']} ({", ".join(f"{k} {v}" for k, v in m["resume_by_kind"].items())}) | ≥ 90 % |

{n.join(wis)}

Wrong links:

{n.join(wrong)}

Mistitled:

{n.join(mist)}

Resume misses:

{n.join(misses)}

CPU seconds: {cpu}.

"""


def render_holdout(m: dict[str, Any], sh: dict[str, Any], cpu: dict[str, float]) -> str:
    """The docs/quality.md subsection for the second humanize range (2025q1)."""
    return _render_range(m, sh, cpu, f"""### A second range: the same repository, {sh['first']} to {sh['last']} (`--variant 2025q1`)

The resolution and linking values above were chosen with the range above among their
benchmarks (`calibrate_resolve`), so its numbers are in-sample. This second range of humanize
(`fixtures/realproject/story_2025q1.py`, `source.py`: `2025q1`) is built the same way. It was a
hold-out until its failures (two merges, a chore linked) were diagnosed to add evidence from the
repository (what each window wrote and where it landed, a new branch beside another effort's):
no weight or threshold was set on it, but its numbers are no longer untuned. It has
{sh['efforts']} efforts ({sh['effort_commits']} commits, several PRs of one maintainer
within three days that touch the same modules, two near-duplicate pairs: two "defer imports"
PRs and two `naturalsize` regressions; branch commits named "yamllint", "sudo"; a teammate's
three commits inside a PR), {sh['chore_commits']} chores, {sh['teammate_commits']} others'
commits, {sh['sessions']} sessions of {sh['records_min']}–{sh['records_max']} records.
`python -m tests.bench.quality_realproject --variant 2025q1` prints these; the test suite does
not run it.

""")


def render_2024h2(m: dict[str, Any], sh: dict[str, Any], cpu: dict[str, float]) -> str:
    """The docs/quality.md subsection for the third humanize range (2024h2, tuned on since)."""
    return _render_range(m, sh, cpu, f"""### A third range: {sh['first']} to {sh['last']} (`--variant 2024h2`)

Built (`fixtures/realproject/story_2024h2.py`, `source.py`: `2024h2`) after resolution's last change
and first measured untuned (links 1.0 / 0.93, kinds 4 of 7 published WorkItems, two titles
taken from a step on the way); session 23 diagnosed it to change the kind cues, the commit that
titles an effort, what a lint pass is and the tooling-only chore vote, so its numbers are no
longer untuned (retrieval also took it into the resume thresholds' dev set): {sh['efforts']} efforts ({sh['effort_commits']} commits; two
`naturalsize` fixes in `filesize.py`, beside a contributor's prefix feature there; two
import-time PRs on one day; a squash-merged feature with a
maintainer's trunk follow-up; the contributor's branch dates from 2023),
{sh['chore_commits']} chores, {sh['teammate_commits']} others' commits, {sh['sessions']}
sessions of {sh['records_min']}–{sh['records_max']} records.
`python -m tests.bench.quality_realproject --variant 2024h2` prints these; the test suite does
not run it.

""")


def render_holdout2(m: dict[str, Any], sh: dict[str, Any], cpu: dict[str, float]) -> str:
    """The docs/quality.md subsection for the second hold-out (marshmallow, measured only)."""
    return _render_range(m, sh, cpu, f"""## The second hold-out (`fixtures/holdout2/`, marshmallow, measured only)

A third project, built by the same generator from
[marshmallow](https://github.com/marshmallow-code/marshmallow)'s real history (MIT),
{sh['first']} to {sh['last']}: {sh['efforts']} efforts ({sh['effort_commits']} commits; every PR
merged with a merge commit, branches rebased with commits dated 2021–2022),
{sh['chore_commits']} chores, {sh['teammate_commits']} others' commits, {sh['sessions']} sessions
of {sh['records_min']}–{sh['records_max']} records ({sh['agents']}); one session resumed nine
days later on another topic, an effort continued from Claude Code in Gemini CLI two weeks later,
a near-duplicate pair on `get_declared_fields` (see `fixtures/holdout2/README.md`). It was built
after every value above was set, and measured first at clustering F1 0.73 (P 0.77, R 0.70),
links 0.86 / 0.67, one WorkItem mistitled, resume 21/22. Three of its failure classes were then
diagnosed and fixed by general rules with tests of their own (a resumed session's stated switch
is a topic cut; edits of only AUTHORS/CHANGELOG-like files are no topic shift; a rebased
commit's writes are looked for from its author date), so the numbers below are no longer
untuned; the cross-agent continuation (Claude Code, then Gemini CLI two weeks later) joins at
0.401 against the 0.40 threshold, by a hair. The test suite gates it like the others; its two
shortfalls (link recall, two kinds) are strict xfails that fail the day they are met.
`python -m tests.bench.quality_realproject --variant holdout2` prints these.

""")


def render_holdout3(m: dict[str, Any], sh: dict[str, Any], cpu: dict[str, float]) -> str:
    """The docs/quality.md subsection for the third hold-out (flask-sqlalchemy, measured only)."""
    return _render_range(m, sh, cpu, f"""## The third hold-out (`fixtures/holdout3/`, flask-sqlalchemy, measured only)

A fourth project, built by the same generator from
[flask-sqlalchemy](https://github.com/pallets-eco/flask-sqlalchemy)'s real history (BSD-3-Clause;
the extracted history is not committed, see `fixtures/holdout3/SOURCES.md`), {sh['first']} to
{sh['last']}: {sh['efforts']} efforts ({sh['effort_commits']} commits; PRs merged with merge
commits and squash-merged, a maintenance branch merged into main and into PR branches, sixteen
commits rebased or amended after their session), {sh['chore_commits']} chores,
{sh['teammate_commits']} others' commits, {sh['sessions']} sessions of
{sh['records_min']}–{sh['records_max']} records ({sh['agents']}); one feature over five sessions of
four agents, an investigation session without commits, a session that switches topic, two
near-duplicate pairs (see `fixtures/holdout3/README.md`). Built after every value above was set
and measured once at first contact (a cold process, on a loaded machine) at clustering F1 0.8375
(P 0.8929, R 0.7886; 11 WorkItems for 11 efforts), links 0.8444 / 0.8085, 2 releases and 1
teammate commit linked, 1 WorkItem mistitled, 6 of 11 kinds right, resume 13/21. Its failures
were diagnosed since (stops 27 and 28) to make general rules, each with a test of its own (see
"Stop 28" below), so its numbers are no longer untuned; the test suite gates it like the others
with every shortfall a strict xfail.
`python -m tests.bench.quality_realproject --variant holdout3` prints these.

""")


def render_holdout4(m: dict[str, Any], sh: dict[str, Any], cpu: dict[str, float]) -> str:
    """The docs/quality.md subsection for the fourth hold-out (rich, measured only)."""
    ask = "".join(f"- `{a['question']}`: {'ok' if a['ok'] else '**miss**'}, top 3: "
                  f"{'; '.join(a['top3'])}\n" for a in m.get("ask", []))
    return _render_range(m, sh, cpu, f"""## The fourth hold-out (`fixtures/holdout4/`, rich, measured only)

A fifth project, built by the same generator from
[rich](https://github.com/Textualize/rich)'s real history (MIT; the extracted history is not
committed, see `fixtures/holdout4/SOURCES.md`), {sh['first']} to {sh['last']}: {sh['efforts']}
efforts ({sh['effort_commits']} commits; every PR merged with a merge commit, the maintainer's
branches of terse commits such as "changelog", "simplify", "more tests", version bumps and CI
fixes pushed onto effort branches outside the sessions), {sh['chore_commits']} chores,
{sh['teammate_commits']} others' commits (contributors' PRs and the maintainer's release-prep
branch, made without an agent), {sh['sessions']} sessions of
{sh['records_min']}–{sh['records_max']} records ({sh['agents']}); a contributor's PR continued four
months later in another agent, an investigation session without edits, a session that switches
topic, three near-duplicate pairs, and {len(m.get('ask', []))} `ask` questions (see
`fixtures/holdout4/README.md`). Built after every value above was set and measured once at
first contact (main at `6832c80`) at clustering F1 0.7484 (P 0.6667, R 0.8529; 10 WorkItems for
13 efforts), links 0.8333 / 0.8654, 1 version bump and 2 others' commits linked, no WorkItem
mistitled, 7 of 10 kinds right, resume 15/22, ask top-3 0/5. Its failures were diagnosed since
(stops 27 and 28) to make general rules, each with a test of its own (see "Stop 28" below), so
its numbers are no longer untuned; the test suite gates it like the others with every
shortfall a strict xfail.
`python -m tests.bench.quality_realproject --variant holdout4` prints these.

Ask (a memory fact in the top 3 must state the decision; now {m.get('ask_top3')}/{m.get('ask_total')}):

{ask}
""")


def run(variant: str = "2025h2") -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix=f"looma-{variant}-") as tmp:
        c0 = os.times()
        rp, env, cpu = build(Path(tmp), variant)
        m = measure(rp, env)
        c1 = os.times()
        cpu["total_cpu"] = round(c1.children_user + c1.children_system + c1.user + c1.system
                                 - c0.children_user - c0.children_system - c0.user - c0.system, 1)
        return m, shape(rp.truth), cpu


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.bench.quality_realproject [--keep DIR] [--json PATH] [--variant V]
    [--holdout]`: V = 2025h2 (the measured range, default) or 2025q1 (a hold-out range of the
    same repository that no threshold was chosen on), holdout2, holdout3 or holdout4 (marshmallow,
    flask-sqlalchemy, rich); --holdout: fixtures/holdout (pypa/pipx)."""
    import tempfile

    args = argv if argv is not None else sys.argv[1:]
    keep = Path(args[args.index("--keep") + 1]) if "--keep" in args else None
    with tempfile.TemporaryDirectory(prefix="looma-realproject-") as tmp:
        base = keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        w0 = time.perf_counter()
        variant = args[args.index("--variant") + 1] if "--variant" in args else "2025h2"
        if "--holdout" in args:
            variant = "holdout"
        if why := missing(variant):
            print(why[0], file=sys.stderr)
            return 2
        rp, env, cpu = build(base, variant)
        m = measure(rp, env)
        cpu["wall"] = round(time.perf_counter() - w0, 1)
        print(summary(m, cpu, variant if variant != "2025h2" else "realproject"))
        if "--json" in args:
            Path(args[args.index("--json") + 1]).write_text(
                json.dumps(m, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
