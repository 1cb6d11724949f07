"""`looma resume`: the active work for a goal, confident, ambiguous or cold."""

from __future__ import annotations

from typing import Any

import click

from looma_git.cli.common import conf_tag, emit_json, files_tag, repo_paths, say
from looma_git.cli.complete import workitems


@click.command("resume")
@click.argument("goal", required=False)
@click.option("--work", "work_ref", default=None, metavar="X", shell_complete=workitems,
              help="Resume this WorkItem: id prefix, exact title, or a letter of the last "
                   "resume listing shown in this terminal.")
@click.option("--budget", default=2000, show_default=True, metavar="TOKENS",
              type=click.IntRange(min=200),
              help="Token budget for the bundle; protected items are kept and overflow reported.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable contract).")
@click.option("--exit-code", "exit_code", is_flag=True,
              help="Exit 0 when confident, 10 when ambiguous, 11 when cold (for scripts).")
@click.option("--porcelain", is_flag=True,
              help="Stable, tab-separated output for scripts: the state, then one line per "
                   "WorkItem (letter, id, confidence, band, title). Implies --exit-code.")
@click.pass_context
def resume_cmd(ctx: click.Context, goal: str | None, work_ref: str | None, budget: int,
               as_json: bool, exit_code: bool, porcelain: bool) -> None:
    """What is the active work on GOAL, and how sure is looma?

    \b
    Three outcomes:
      confident  one WorkItem clearly matches: its bundle (git state, decisions,
                 open todos and bugs, commits, sessions, files)
      ambiguous  near-ties are shown side by side, lettered, never blended;
                 pick one with --work A or merge them with `looma correct merge A B`
      cold       nothing matches: looma says so and lists recent work

    Without GOAL: the most recently active WorkItem here (or the ambiguity).

    \b
    Scripts tell the outcome without parsing text:
      looma resume auth --exit-code      exit 0 confident, 10 ambiguous, 11 cold
      looma resume auth --porcelain      "confident" / "ambiguous" / "cold", then
                                         letter<TAB>id<TAB>confidence<TAB>band<TAB>title
      looma resume auth --json           .state is the outcome (exit 0)
    """
    from looma_git.api.query import resume
    from looma_git.errors import UsageError

    if goal is not None and not goal.strip():
        raise UsageError("the goal is empty",
                         hint="omit GOAL for the most recently active work: `looma resume`")
    out = resume(repo_paths(ctx), goal.strip() if goal else None, work_ref=work_ref,
                 budget=budget)
    code = {"confident": 0, "ambiguous": 10, "cold": 11}[out.state]
    if as_json:
        emit_json(out)
        if exit_code:
            ctx.exit(code)
        return
    if porcelain:
        click.echo(out.state)
        for c in out.candidates if out.state != "cold" else out.recent:
            click.echo("\t".join([c.letter if out.state == "ambiguous" else "-", c.id,
                                  f"{c.confidence:.2f}", c.band, c.title.replace("\t", " ")]))
        ctx.exit(code)
    if out.state == "confident":
        c = out.candidates[0]
        label = "resuming (picked with --work)" if work_ref else "confident"
        say(f"{label}: {c.title}  [{c.kind}] [{c.status}] {conf_tag(c.confidence, c.band)}"
                   f"  match {c.match:.2f}  ({c.id})")
        _render_bundle(out.bundle or {})
    elif out.state == "ambiguous":
        if len(out.candidates) == 1:
            say(f"ambiguous: one WorkItem matches {out.goal!r}, but too weakly to be sure;"
                       " check it before resuming.")
        else:
            say(f"ambiguous: {len(out.candidates)} WorkItems match {out.goal!r} about "
                       "equally; shown side by side, not blended.")
        for c in out.candidates:
            say(f"\n  {c.letter}  {c.title}  [{c.kind}] [{c.status}] "
                       f"{conf_tag(c.confidence, c.band)}  match {c.match:.2f}  ({c.id})")
            say(f"     matched: {', '.join(c.matched_terms) or '-'}")
            say(f"     {files_tag(c.files, 3) or 'files: -'}")
            say(f"     commits: {', '.join(s[:8] for s in c.commits[-3:]) or '-'}")
            sess = ", ".join(f"{s.agent}:{s.id[:8]}" for s in c.sessions[:3])
            say(f"     sessions: {sess or '-'}")
        say(f"\n{out.message}")
    else:
        say(f"cold: {out.message}")
        for c in out.recent:
            say(f"  {c.title}  [{c.kind}] [{c.status}] {conf_tag(c.confidence, c.band)}"
                       f"  ({c.id})")
    if exit_code:
        ctx.exit(code)


def _render_bundle(b: dict[str, Any]) -> None:
    git = b.get("git", {})
    wi = b.get("workitem", {})
    if wi.get("summary"):
        say(f"  summary: {wi['summary']}", indent=9)
    say(f"  git: branch {git.get('branch') or '-'}  HEAD {git.get('head') or '-'}"
               f"  dirty: {', '.join(git.get('dirty') or []) or 'none'}")
    say(f"  note: {b.get('evidence_notice')}")
    for section, label in (("decisions", "decided"), ("todos", "todo"), ("bugs", "bug"),
                           ("architecture", "architecture")):
        for m in b.get(section, []):
            src = m.get("source", {})
            where = f"{src.get('agent', '?')}:{str(src.get('session', ''))[:8]}" if src else ""
            say(f"  {label:<12} {conf_tag(m['confidence'], m['band'])} > {m['text']}"
                f"  ({where})", indent=13)
    for c in b.get("commits", []):
        say(f"  commit       {c['sha'][:8]} {c['subject']}")
    for s in b.get("sessions", []):
        say(f"  session      {s['agent']}:{s['id']}  last {s.get('last', '-')}")
    if b.get("files"):
        say(f"  files        {', '.join(b['files'])}", indent=13)
    for section, n in (b.get("overflow") or {}).items():
        say(f"  overflow: {n} {section} left out to fit the {b.get('budget')}-token budget")
    if b.get("protected_over_budget"):
        say("  overflow: open todos, bugs and decisions exceed the budget; all kept")
