"""docs/quality.md from the benchmarks' measures (written by `quality --write-docs`)."""

from __future__ import annotations

from typing import Any

from tests.bench.quality_teamwork import TARGETS as TEAM_TARGETS
from tests.bench.quality_teamwork import resume_target


def _row(name: str, value: Any, target: str, meaning: str) -> str:
    return f"| {name} | {value} | {target} | {meaning} |"


def render(scen: dict[str, Any], scen_table: str, m: dict[str, Any], shape: dict[str, Any],
           cpu: dict[str, float], real: str = "") -> str:
    """The whole file; `real` is the real-project section (tests/bench/quality_realproject.py),
    placed after the teamwork one."""
    t = TEAM_TARGETS
    agents = ", ".join(f"{a} {n}" for a, n in shape["agents"].items())
    rows = [
        "| measure | now | target | what it means |", "|---|---|---|---|",
        _row("segment clustering F1", m["clustering_f1"], f"≥ {t['clustering_f1']}",
             f"pairwise over {m['segments_scored']} labelled segments: precision "
             f"{m['clustering_precision']}, recall {m['clustering_recall']}; "
             f"{m['predicted_workitems']} WorkItems for {len(m['per_effort'])} efforts"),
        _row("commit-link precision", m["link_precision"], f"≥ {t['link_precision']}",
             f"{m['links_predicted']} links published, merge commits excluded"),
        _row("commit-link recall", m["link_recall"], f"≥ {t['link_recall']}",
             f"of {m['links_true']} (commit, effort) pairs"),
        _row("commit links, the linker alone", f"P {m['oracle_link_precision']} / R "
             f"{m['oracle_link_recall']}", f"≥ {t['link_precision']} / ≥ {t['link_recall']}",
             "with the truth's clustering (see \"What a link rests on\"); teammate commits "
             f"linked {m['oracle_teammate_linked']}, chores {m['oracle_chores_linked']}; "
             f"links by evidence {m['oracle_by_evidence']}"),
        _row("chores linked", f"{m['chores_linked']}/{m['chores_total']}", "0",
             "dependabot bumps, `ruff format`, releases, the skeleton"),
        _row("teammate commits linked", f"{m['teammate_linked']}/{m['teammate_total']}", "0",
             "a teammate with no sessions (metrics in a file rate limiting also edits)"),
        _row("resume: state + WorkItem right", f"{m['resume_correct']}/{m['resume_total']}",
             f"≥ {resume_target(m, t)}/{m['resume_total']}", "by kind: " + ", ".join(
                 f"{k} {v}" for k, v in m["resume_by_kind"].items())),
        _row("`ask`: expected decision in the top 3", f"{m['ask_top3']}/{m['ask_total']}",
             f"≥ {t['ask_top3']}/8", f"as a memory fact (the text is somewhere in the 10 facts "
                                     f"for {m['ask_in_any_fact']}/8)"),
        _row("foreign sessions attributed", len(m["foreign_attributed"]), "0",
             "sessions of another repository on the same machine"),
    ]
    per_effort = ["| effort | segments | WorkItems they landed in | left in none |",
                  "|---|---|---|---|"]
    per_effort += [f"| {k} | {v['segments']} | {v['workitems']} | {v['unassigned']} |"
                   for k, v in m["per_effort"].items()]
    resume = [f"- [{r['kind']}] `{r['goal'] or '(no goal)'}`: want {r['expect']} "
              f"{r['want'] or ''}, got {r['got']} {r['candidates']} "
              f"{'ok' if r['ok'] else '**wrong**'}" for r in m["resume"]]
    asks = [f"- {a['question']!r}: {'ok' if a['ok'] else '**miss**'}"
            + ("" if a["superseded_shown"] else " (superseded decision not shown as such)")
            for a in m["ask"]]
    return f"""# Quality

Labelled benchmarks (the scenario, the teamwork history, three ranges of humanize and three
hold-outs of other projects, the third where its extracted history is present), measured by
`python -m tests.bench.quality --write-docs` (this file is its output). All are generated in the
repository, deterministically, with the ground truth
derived from how the data was generated, never from what looma outputs. Each run goes through the
commands a user runs (`looma init`, `looma ingest`, `looma backfill`, then `work`, `resume`, `ask`
as subprocesses) in a temporary directory with a fake `HOME`.

## The teamwork benchmark (`fixtures/teamwork/`, issue 13)

A six-week history of a web service as a team works on it (see `fixtures/teamwork/README.md`):

- {shape['efforts']} efforts; {shape['commits']} commits: feature branches with merge commits, a
  squash-merge, a rebase, {shape['chore_commits']} chores and {shape['teammate_commits']} commits
  of a teammate with no sessions;
- {shape['sessions']} sessions ({agents}) in their native formats, {shape['turns_min']}–{shape['turns_max']}
  turns each; {shape['segments']} labelled segments ({shape['multi_topic_sessions']} sessions switch
  topic);
- {shape['resume_goals']} resume goals and {shape['ask_questions']} `ask` questions.

{chr(10).join(rows)}

`tests/test_quality.py` asserts each target; a target not met today is an
`xfail(strict=True)` that names the number measured, so it turns into a failure to fix (remove the
mark) as soon as the pipeline meets it.

How each number is computed (`tests/bench/quality_teamwork.py`):
- **Segments → WorkItems.** The truth labels each session *segment* (a run of user turns on one
  effort; a session that switches topic has several). Every refinery pass records, in the local
  table `refine_window_events` of `store.db`, each window's event ids and the WorkItem it landed
  in (ledger id when promoted, local candidate id otherwise, NULL when in none). The scorer finds
  each segment's first prompt among the stored `events` (role `user`, text match); the segment's
  events run from there to the next segment's first prompt, each votes for the WorkItem of its
  window, and the segment goes to the majority. A segment none of whose events is in a WorkItem
  pairs with nothing. (Nothing of looma's is re-run to score: the assignment is read back as the
  pass left it.) Clustering is pairwise precision/recall over labelled segments
  (read-only exploration, agent-made chores and foreign sessions are not labelled with an effort
  and are left out of the pairs).
- **WorkItem → effort** is the effort most of its segments carry; a WorkItem no labelled segment
  landed in matches no effort (its links are all wrong).
- **Links** are the commits of each published WorkItem (`looma work --json`) against the truth's
  (commit, effort) pairs. Merge commits are neither hits nor misses; the squashed and rebased
  branches' original commits (unreachable at the end) are reported apart
  ({m['unreachable_linked']} linked).
- **Resume**: `confident` needs the right WorkItem first; `ambiguous` needs two of the expected
  efforts among the candidates; `cold` needs the state `cold`. The no-goal resume expects
  the most recently active effort.
- **`ask`**: a question counts when a *memory* fact among the first three contains the expected
  decision; for the reversed decision the earlier one must also be among the facts, with
  lifecycle `superseded`.

To look at what looma made of it: `python -m tests.bench.quality_teamwork --keep DIR` builds the
benchmark in `DIR`, runs looma on it and prints these numbers with every resume and `ask` result;
then `cd DIR/repo` with `HOME=DIR/home` (and `XDG_*` under it, see `env_for`) to run `looma work`,
`looma resume ...` yourself. `DIR/truth.json` holds the labels.

Clustering per effort:

{chr(10).join(per_effort)}

Resume goals:

{chr(10).join(resume)}

`ask` questions:

{chr(10).join(asks)}

CPU seconds (children included; the machine is shared, so wall time is noisy): {cpu}.

## How sessions become WorkItems, and how resolution's thresholds are chosen

**Segments.** `pipeline/signals.py` cuts each session into windows: at a pause of 3 h or more;
at a user turn that says it switches ("ok, switching gears", "different thing:", "unrelated,
but", "back to the ...", "while you're here", "btw", "one more thing"); and at a user turn whose
edits share no file, directory or name part with the window's and whose words share none of its
topic, unless those edits only record the work (AUTHORS, CHANGELOG, README: "add me to
AUTHORS.rst, then commit"). A pause whose first turn says it switches ("different thing now") is
a topic cut too:
the session's continuity does not carry it into the window before. Each window is resolved on
its own.

**Resolution** (`pipeline/resolve.py`; the score and its weights in `pipeline/evidence.py`) takes windows in time order and scores each against the
clusters built so far (ledger WorkItems first: a session a WorkItem already holds goes to it, and
a person's merge, split or false-positive is never undone), adding independent kinds of evidence,
each weighted by how distinctive it is:

| evidence | weight | what it measures |
|---|---|---|
| edits | 0.45 | the idf-weighted share of the window's edited files the cluster also edited; idf over the clusters so far (`log(1 + (n + 10) / (1 + df))`), so a file several efforts edit weighs little, and manifests, lock files, changelogs and READMEs weigh 0.15 of a source file; a file new to the cluster named after one of its files (`tests/test_export.py` for `export.py`) counts half |
| words | 1.5 | tf-idf cosine (sublinear tf, idf over the windows so far with the same prior of 10) of the window's words (the user's count twice, edited path parts three times) with the cluster's 400 most used words |
| link | 0.30 | the same feature branch (or the window's request names the cluster's branch), a pull request both name, or a commit both name or both wrote (`pipeline/authorship.py`: lines of the commit that the window alone wrote, at least one and 20% of them; a write belongs to the first commit after it that adds the line, so a restore is nobody's co-author) |
| session | 0.30 | the cluster holds the same session's previous window and a pause (not a topic switch) cut them |
| reads | 0.10 | the share of what an editing window read that the cluster edited |
| read-only window | 0.15 | for a window that edited nothing: what it read and named, against what the cluster edited or read (idf over both) |
| another branch | -1.0 | the window is on a feature branch and the cluster has branches, none of them this one |
| trunk vs branch | -0.25 | every commit the window wrote is on the trunk's first-parent line while every one its cluster wrote reached the trunk only through a merge (the repository's topology, whether or not the branch still exists): a follow-up fix after the merge is often the same effort, other trunk work often is not |
| a new branch | -0.25 | the window is on a feature branch no cluster has used yet (also beside a cluster's own other branch) |

A window joins the best cluster when its score reaches `ASSIGN_AT` 0.40 (`READONLY_ASSIGN_AT` 0.25 for a
window that only read, or that edited only manifests, lock files and changelogs and does not
say it switches: its edits say as little), else it starts a new one (with a weak RELATED edge above `LOW` 0.20).
No margin over the runner-up is asked: on these benchmarks the runner-up is most often an
earlier fragment of the same effort, so a margin only fragments (0.05: minimum F1 0.98; 0.10:
0.95). Windows that only read and gather in one cluster (two or more sessions, or one long
session) become an `investigation` WorkItem with no commit; its confidence counts those sessions
and agents but stays under medium (`READONLY_CAP` 0.35). Every idf depends only on the windows
before, so an incremental run replays stored decisions and ends where `looma reprocess` does
(`tests/pipeline/test_incremental.py`).

**How the values were chosen.** `python -m tests.bench.calibrate_resolve [--keep DIR]` builds the
teamwork benchmark twice (seed 13, the one measured above, and seed 7: the same efforts with other
noise, ids and times) and the real-project benchmark, runs `looma init` and `looma ingest` on
each, then re-runs segmentation and resolution in-process for each setting and scores segment
clustering as above. By default it varies each weight and threshold alone around its value and
prints the three F1s and their minimum. Measured 2026-12-02: the values above reach F1 1.0 on
all three; the thresholds sit in the middle of the plateau (`ASSIGN_AT` 0.35: 0.89, over-merging;
0.45: 0.92, fragmenting; `READONLY_ASSIGN_AT` 0.20: 0.90; 0.30: 0.95), and so do the edit and word
weights (edits 0.3: 0.96, 0.6: 0.89; words 1.25: 0.85, 1.75: 0.89); the branch, session, link,
reads and idf-prior weights are flat across their grid (the branch conflict needs at least 0.8:
at 0.6 the real project's two efforts in one function, `intword` plural and decimal separator,
merge). These benchmarks chose the values, so they cannot say whether they generalise; two
limits are known: wording that shares no word across the sessions of one effort is carried only
by files, branch and session (resolution uses no embedding: the heuristic path needs no model,
and every clone must resolve alike), and two efforts on the trunk that edit the same files with
the same words merge. The real project's 2025q1 range (below) showed the second limit: F1 0.72,
from two merges — a near-duplicate pair of `naturalsize` regressions that edit one function with
nearly the same words, each on its own new branch (the other-branch penalty alone was
outweighed; a new branch beside the cluster's own now counts against as well), and a trunk
session of French catalogue fixes joining the feature branch that added the English locales
through the shared `i18n` files (its commits went straight onto the trunk, the locale work's only
through a merge: the topology now counts against, as much as a new branch; as much as another
branch split the teamwork benchmark's password-reset follow-up, committed on the trunk after its
branch merged: `calibrate_resolve --grid W_TRUNK=0,0.25,0.5,1` gives minimum F1 1.0, 1.0, 0.99,
0.99, and the French window needs more than 0.13 to stay apart). The range was diagnosed to make
these changes, so it is no longer untuned.

## What a link rests on (`pipeline/linking.py`, `pipeline/link_content.py`, `index/written.py`)

The strongest evidence that a commit implements a WorkItem is its content: the lines the commit
adds are lines the WorkItem's sessions wrote. Every stored event with an edit/write tool call is
read once (its native record: Claude Code `Edit`/`Write`/`MultiEdit` and their patches, Codex
`apply_patch`, Cursor `contents`/`code_edit`, here-documents of shell commands; the text a tool
replaced never counts) into `written_lines` of `store.db` (a key per stripped line of at least 6
characters, the files the call named, the session, the time); each commit's added lines are read
from git once into `commit_lines`. A line counts for a WorkItem when one of its sessions wrote it
into the same file at most 21 days before the commit, or before its author date when that is
earlier (a rebase moves the commit date on), and at most 10 minutes after it (clock skew); a line
several WorkItems wrote counts 1/n for each (equal counts go to the one that wrote last); a
line written into more than 2 files (an import,
a docstring shape) counts for nobody. The WorkItem with the most lines links when it wrote at
least one line's worth and 20% of the commit's lines; the note's `why` then holds `content`
(that share) and `lines`.

- **Housekeeping is never linked**: bot authors, `Bump …`/`chore:`/`build:`/`ci:`/`style:`/
  `release:` subjects, formatter and lint passes, `Release 1.4.0`/version subjects. A fixup!,
  squash!, wip or manifest-only commit (`Add rq to requirements`) can be an effort's work and
  links on content (or the effort's branch), never on file overlap alone.
- **A commit of an author with no session evidence** (`own_authors`: authors of commits a
  session named or committed on a session's branch, plus this clone's identity) whose lines no
  session wrote is not linked to a WorkItem whose sessions show what they wrote: a teammate's
  work in a shared file stays unlinked.
- **Lines a session removed** (an edit's old text, a `git rm`/`rm` of a file) are evidence
  too: they match the lines a commit removes and the files it deletes, so a deletion-only
  commit links on content. OpenCode edits and Gemini CLI's oversized records now keep their
  edit text (docs/adapters.md). A chore (manifest/lock/changelog-only) links on content only
  when most of what it adds is the session's (`CHORE_SHARE`): the changelog entry a session
  wrote and committed alone is its work.
- **Without content** (a record that names the edited file but not the text, or a commit whose
  lines no session wrote)
  the score of files, branch, time and wording decides as before (`LINK_AT`), off the
  WorkItem's branch only close to its activity (`FALLBACK_TIME`) and never when made more than
  an hour before its first window began (`BEFORE_WORK_S`: its sessions cannot have done it), a
  chore or a stranger's commit only on the branch; on the branch, a commit made long after the
  WorkItem's work (time score under `FALLBACK_TIME`) by an author none of its content-linked
  commits has is not linked either (a reviewer's edit pushed onto a contributor's branch before
  merging; the WorkItem's own authors keep the branch). A session that does not show its writes keeps this fallback for commits up
  to two days after its window. A commit's branch is the ref `git log --source` reached it
  from, else the branch its merge commit names ("Merge pull request #9 from jane/fix-tz",
  "Merge branch 'fix-tz'": the merged parent's first-parent line back to the trunk,
  `pipeline/topology.py`), so a long-lived branch's early commits, made weeks before the
  session that finished the work, are on the work's branch after the ref is gone.

The published link numbers above are those of looma's WorkItems, so a WorkItem that mixes two
efforts makes its links wrong whatever the linker did. `tests/bench/links_oracle.py` scores the
linker alone: the stored windows are grouped by the truth's segment -> effort assignment (a
window goes to the effort most of its events belong to), one link target per effort is built
from them as the refinery builds one from a cluster, and `link_commits` runs over every commit
with the content evidence the refinery gives it (`python -m tests.bench.links_oracle DIR
--verbose` on a kept run lists every wrong and missed link). Wrong links: {m['oracle_wrong'] or
'none'}; missed: {m['oracle_missed'] or 'none'}.

{real}## How resume matches goals, and how its thresholds are chosen

`retrieval/match.py` ranks every WorkItem for a goal on two channels. **Words**: the
idf-weighted share of the goal's terms (its lead-in such as "continue building the" dropped) found
in the WorkItem's title, aliases, opening prompts, summary, files, branches and memories (a term
that only shares a 4+-letter prefix counts 0.6: "auth" / "authentication"), blended 0.7/0.3
with a fuzzy title match; a goal that *is* one of its branches scores 1.0, one of its files or
directories 0.9, and then the words score of the WorkItems that do not have it is halved
(the words of a path, `src`, the package, `py`, are in every WorkItem). **Meaning**: the cosine of the goal with the WorkItem's summary vector or its
closest session-window vector (all-MiniLM-L6-v2). Either channel can carry a goal: words decide
first (confident at `CONFIDENT_AT` with `MARGIN` over the runner-up; then no model is loaded);
otherwise meaning is confident at cosine `SEM_CONFIDENT_AT` with `SEM_MARGIN` over the runner-up
unless the words strongly point elsewhere; otherwise meaning *confirms* a moderate words match:
words rank one WorkItem first by `MARGIN` at `LEX_WEAK` or more (one clear topic word of a
paraphrase: "activate(None) like deactivate") and no other WorkItem is closer in meaning by
`SEM_MARGIN`, nor closer at `SEM_CONFIDENT_AT` (meaning would pick it: "stop one customer from
flooding the API" has the usage billing's words and the rate limiter's meaning, and both are
shown); otherwise words and meaning *agree*: both rank the same WorkItem first, words at
`COLD_BELOW` and the cosine at `AGREE_SEM_AT` or more, each clear of its runner-up by
`AGREE_MARGIN` / `AGREE_SEM_MARGIN` ("join a list in words": one shared word, and by far the
closest meaning). Function words (pronouns, auxiliaries, "one", "make") are no goal terms:
"users who forgot their password" matched the SSO work through "their". Otherwise the near-ties of both channels are shown side by side, ordered by
reciprocal rank fusion (k = 60), and only WorkItems that match are near-ties (words at
`COLD_BELOW`, meaning at `SEM_COLD_BELOW`; a words match under `LEX_WEAK` whose cosine is under
`SEM_COLD_BELOW` counts as none): one weak match alone is no choice to offer, and the goal is
cold.

The thresholds are chosen with `python -m tests.bench.calibrate_resume --teamwork DIR
--realproject DIR... --grid [--only K,...]` on the dev set (teamwork and the humanize ranges,
their `--keep` dirs; never a hold-out): it computes once per labelled goal every WorkItem's words
score and cosine, adds 16 off-topic goals per benchmark that must stay cold (a mobile app,
infrastructure, games: the guard against a fusion that makes noise confident), and
grid-searches the thresholds for the number of right outcomes. It prints the plateau of
settings that reach the best count; the values in `match.py` are taken from inside it, away
from its edges, not from a single best point. On 2026-12-01 (before the pipeline rewrite of
issue 13 landed) the current values reached the best count, 21/27 (8 scenario + 19 teamwork
goals), and the plateau spanned every grid value except `MARGIN` (0.10–0.15 only). On
2026-12-02, with the rule "meaning confirms a moderate words match" and no padded near-ties,
the unchanged values give 62/66 on the dev set (the four misses: two 2025q1 efforts merged into
another effort's WorkItem by the clustering, so their goals land on that WorkItem, and "new
interpreter versions in the matrix", whose only tie to Python 3.14 is the word "matrix", as
"unity physics jitter" is tied to the webhook retries' "full jitter": cold, not a guess);
the grid's best is 62 and its plateau (216 of 2,916 settings) spans every grid value of
`CONFIDENT_AT`, `MARGIN`, `COLD_BELOW` and `SEM_CONFIDENT_AT`, `SEM_COLD_BELOW` 0.30–0.35,
`SEM_MARGIN` 0.15–0.20 and `LEX_WEAK` 0.34–0.44 (a finer sweep of these two): `LEX_WEAK` is the
one threshold the new rule leans on, between the off-topic "unity physics jitter" (words 0.33)
and the paraphrases it confirms (0.45); the values in `match.py` are unchanged. On 2026-12-02 (session 23) the dev set became every
tunable benchmark (teamwork, humanize 2025h2, 2025q1 and 2024h2: 88 labelled goals and 64
off-topic ones), with 21 goals written as a person would ask without looking at looma's titles
(11 paraphrases and 2 cold goals for teamwork, 8 paraphrases for 2025h2; tuned data since);
`calibrate_resume` now embeds every pending text first (`looma reindex --all-vectors`: under
load an ingest leaves window texts for a later top-up, 22 of 83 in one teamwork build, and the
cosines of a goal then depend on the machine's load), and ranks settings with as many right by
fewer confidently wrong outcomes (a wrong bundle costs more than a side-by-side). With the
rules above: 150/152 right, none confidently wrong (main before them: 148/152, none wrong, on
the same stores); that is the grid's best, and the current values sit inside the plateau of
each threshold (`AGREE_MARGIN` 0.05–0.15, `AGREE_SEM_MARGIN` 0.05–0.12, `AGREE_SEM_AT`
0.30–0.36, `SEM_CONFIDENT_AT` 0.38–0.46, `MARGIN` 0.10–0.20); `LEX_WEAK` moved to 0.35, inside
a narrow plateau (0.34–0.37): with "when" no longer a goal term, "compile the .mo catalogues
when releasing" has words 0.38, and the off-topic "unity physics jitter" 0.33. The two misses:
"new interpreter versions in the matrix" (2025q1: words 0.22 on "matrix", cosine 0.32 against
0.29 for another WorkItem: cold, not a guess) and "make intword faster" (two intword WorkItems
side by side, the right one first). Rerun it after clustering changes and move a threshold only when the plateau moves.

## The scenario (`fixtures/scenario/`)

The small demo scenario (6 WorkItems, 25 commits, 5 agents). Its targets hold today; it is the
regression floor, not evidence that the model is right on history it has not seen.

{scen_table}

""" + "\n".join(f"- resume {r['goal']!r}: expected {r['expect']}, got {r['got']}"
                for r in scen["resume"]) + "\n"
