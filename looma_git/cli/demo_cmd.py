"""`looma demo`: looma's main job on a bundled scenario, shown command by command."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import click

import looma_git


def _fixtures_root() -> Path:
    """The directory holding `fixtures/scenario`: shipped in the package (`_demo/`), or the
    source checkout's."""
    here = Path(looma_git.__file__).parent
    for root in (here / "_demo", here.resolve().parent):
        if (root / "fixtures" / "scenario" / "generate.py").exists():
            return root
    from looma_git.errors import NotFoundError

    raise NotFoundError(
        "the demo scenario (fixtures/scenario) is not installed with this copy of looma",
        hint="reinstall looma from its wheel, or run the demo from a source checkout")


def _run(argv: list[str], cwd: Path, env: dict[str, str], *, show: str | None = None,
         check: bool = True, quiet: bool = False) -> str:
    label = show or " ".join(argv)
    if not quiet:
        click.secho(f"\n$ {label}", fg="cyan", bold=True)
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    out = (proc.stdout + proc.stderr).rstrip()
    if out and not quiet:
        click.echo(out)
    if check and proc.returncode != 0:
        raise click.ClickException(f"demo step failed ({proc.returncode}): {label}")
    return proc.stdout


@click.command("demo")
@click.option("--dir", "target", default=None, metavar="PATH",
              help="Build the demo here instead of a new temporary directory.")
def demo_cmd(target: str | None) -> None:
    """Build a real repository with sessions from several agents and run looma on it.

    \b
    Shows: init, ingest (Claude Code, Codex, Gemini CLI, Cursor, OpenCode sessions),
    backfill, `looma work`, a confident and an ambiguous `looma resume`, a correction,
    `git log --notes=looma -3`, and sharing the ledger with a second clone.
    Works offline; nothing outside the printed directory is touched.
    """
    root = _fixtures_root()
    sys.path.insert(0, str(root))
    from fixtures.scenario.generate import build_scenario, env_for

    base = Path(target) if target else Path(tempfile.mkdtemp(prefix="looma-demo-"))
    base.mkdir(parents=True, exist_ok=True)
    click.secho(f"Building the demo scenario in {base} ...", bold=True)
    scenario = build_scenario(base)
    env = dict(os.environ)
    for key in [k for k in env if k.startswith("GIT_")]:
        env.pop(key)
    env.update(env_for(scenario))
    env["LOOMA_NO_PROGRESS"] = "1"
    gitconfig = Path(scenario.home) / ".gitconfig"  # corrections are attributed to a person
    if not gitconfig.exists():
        gitconfig.write_text("[user]\n\tname = Demo User\n\temail = demo@example.com\n")
    looma = [sys.executable, "-m", "looma_git"]
    repo = Path(scenario.repo)
    step = lambda *a, show=None, check=True: _run(  # noqa: E731
        [*looma, *a], repo, env, show=show or "looma " + " ".join(a), check=check)
    step("init")
    step("ingest")
    step("backfill")
    step("work")
    truth = scenario.truth
    confident = next((q for q in truth["resume_queries"] if q["expect"] == "confident"), None)
    ambiguous = next((q for q in truth["resume_queries"] if q["expect"] == "ambiguous"), None)
    if confident:
        step("resume", confident["goal"], show=f'looma resume "{confident["goal"]}"')
    if ambiguous:
        step("resume", ambiguous["goal"], show=f'looma resume "{ambiguous["goal"]}"')
        # A correction: the user names the near-ties so they can never be confused again.
        import json

        out = json.loads(_run([*looma, "resume", ambiguous["goal"], "--json"], repo, env,
                              quiet=True))
        for cand in out["candidates"]:
            if any("rank" in f for f in cand["files"]):
                step("correct", "rename", cand["letter"], "Search ranking", "--rationale",
                     "near-tie with search indexing; name it for what it does",
                     show=f'looma correct rename {cand["letter"]} "Search ranking" '
                          '--rationale "near-tie with search indexing"')
                break
        step("resume", "search ranking", show='looma resume "search ranking"')
    _run(["git", "log", "--notes=looma", "-3", "--format=%h %s%n%N"], repo, env,
         show="git log --notes=looma -3")
    # Sharing: looma's refs travel through a remote; a teammate rebuilds everything from them.
    remote = base / "team-remote.git"
    _run(["git", "init", "-q", "--bare", "--initial-branch=main", str(remote)], base, env,
         show="git init --bare team-remote.git")
    _run(["git", "remote", "add", "team", str(remote)], repo, env,
         show="git remote add team team-remote.git")
    _run(["git", "push", "-q", "team", "HEAD:refs/heads/main"], repo, env,
         show="git push team main")
    step("share", "enable", "team")
    step("sync", "team")
    clone = base / "teammate-clone"
    _run(["git", "clone", "-q", str(remote), str(clone)], base, env,
         show="git clone team-remote.git teammate-clone")
    teammate_env = dict(env, HOME=str(base / "teammate-home"))
    (base / "teammate-home").mkdir(exist_ok=True)
    (base / "teammate-home" / ".gitconfig").write_text(
        "[user]\n\tname = Teammate\n\temail = teammate@example.com\n")
    for args in (["init"], ["share", "enable", "origin"], ["sync", "origin"], ["reindex"]):
        _run([*looma, *args], clone, teammate_env, show="(teammate) looma " + " ".join(args))
    _run([*looma, "work"], clone, teammate_env,
         show="(teammate) looma work   # no transcripts on this machine")
    _run(["git", "log", "--notes=looma", "-3", "--format=%h %s%n%N"], clone, teammate_env,
         show="(teammate) git log --notes=looma -3")
    click.secho(f"\nDone. Explore: cd {repo}   (HOME for the agents' sessions: {scenario.home})",
                bold=True)
