"""`looma resume`: the active work for a goal, confident, ambiguous or cold."""

from __future__ import annotations

from typing import Any

import click

from looma_git.cli.common import conf_tag, emit_json, files_tag, repo_paths


@click.command("resume")
@click.argument("goal", required=False)
@click.option("--work", "work_ref", default=None, metavar="X",
              help="Resume this WorkItem: id prefix, letter from the last ambiguous resume, "
                   "or exact title.")
@click.option("--budget", default=2000, show_default=True, metavar="TOKENS",
              type=click.IntRange(min=200),
              help="Token budget for the bundle; protected items are kept and overflow reported.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (stable contract).")
@click.pass_context
def resume_cmd(ctx: click.Context, goal: str | None, work_ref: str | None, budget: int,
               as_json: bool) -> None:
    """What is the active work on GOAL, and how sure is looma?

    \b
    Three outcomes:
      confident  one WorkItem clearly matches: its bundle (git state, decisions,
                 open todos and bugs, commits, sessions, files)
      ambiguous  near-ties are shown side by side, lettered, never blended;
                 pick one with --work A or merge them with `looma correct merge A B`
      cold       nothing matches: looma says so and lists recent work

    Without GOAL: the most recently active WorkItem here (or the ambiguity).
    """
    from looma_git.api.query import resume

    out = resume(repo_paths(ctx), goal, work_ref=work_ref, budget=budget)
    if as_json:
        emit_json(out)
        return
    if out.state == "confident":
        c = out.candidates[0]
        label = "resuming (picked with --work)" if work_ref else "confident"
        click.echo(f"{label}: {c.title}  [{c.kind}] [{c.status}] {conf_tag(c.confidence, c.band)}"
                   f"  match {c.match:.2f}  ({c.id})")
        _render_bundle(out.bundle or {})
    elif out.state == "ambiguous":
        if len(out.candidates) == 1:
            click.echo(f"ambiguous: one WorkItem matches {out.goal!r}, but too weakly to be sure;"
                       " check it before resuming.")
        else:
            click.echo(f"ambiguous: {len(out.candidates)} WorkItems match {out.goal!r} about "
                       "equally; shown side by side, not blended.")
        for c in out.candidates:
            click.echo(f"\n  {c.letter}  {c.title}  [{c.kind}] [{c.status}] "
                       f"{conf_tag(c.confidence, c.band)}  match {c.match:.2f}  ({c.id})")
            click.echo(f"     matched: {', '.join(c.matched_terms) or '-'}")
            click.echo(f"     {files_tag(c.files, 3) or 'files: -'}")
            click.echo(f"     commits: {', '.join(s[:8] for s in c.commits[-3:]) or '-'}")
            sess = ", ".join(f"{s.agent}:{s.id[:8]}" for s in c.sessions[:3])
            click.echo(f"     sessions: {sess or '-'}")
        click.echo(f"\n{out.message}")
    else:
        click.echo(f"cold: {out.message}")
        for c in out.recent:
            click.echo(f"  {c.title}  [{c.kind}] [{c.status}] {conf_tag(c.confidence, c.band)}"
                       f"  ({c.id})")


def _render_bundle(b: dict[str, Any]) -> None:
    git = b.get("git", {})
    wi = b.get("workitem", {})
    if wi.get("summary"):
        click.echo(f"  summary: {wi['summary']}")
    click.echo(f"  git: branch {git.get('branch') or '-'}  HEAD {git.get('head') or '-'}"
               f"  dirty: {', '.join(git.get('dirty') or []) or 'none'}")
    click.echo(f"  note: {b.get('evidence_notice')}")
    for section, label in (("decisions", "decided"), ("todos", "todo"), ("bugs", "bug"),
                           ("architecture", "architecture")):
        for m in b.get(section, []):
            src = m.get("source", {})
            where = f"{src.get('agent', '?')}:{str(src.get('session', ''))[:8]}" if src else ""
            click.echo(f"  {label:<12} {conf_tag(m['confidence'], m['band'])} > {m['text']}"
                       f"  ({where})")
    for c in b.get("commits", []):
        click.echo(f"  commit       {c['sha'][:8]} {c['subject']}")
    for s in b.get("sessions", []):
        click.echo(f"  session      {s['agent']}:{s['id']}  last {s.get('last', '-')}")
    if b.get("files"):
        click.echo(f"  files        {', '.join(b['files'])}")
    for section, n in (b.get("overflow") or {}).items():
        click.echo(f"  overflow: {n} {section} left out to fit the {b.get('budget')}-token budget")
    if b.get("protected_over_budget"):
        click.echo("  overflow: open todos, bugs and decisions exceed the budget; all kept")
