"""`looma hooks install|uninstall|status` and the hidden `looma hook drain|post-rewrite|pre-push`."""

from __future__ import annotations

import click


def _paths(ctx: click.Context):  # -> RepoPaths
    from looma_git.gitrepo import find_repo

    return find_repo((ctx.obj or {}).get("repo_dir"))


def _render_changes(result) -> None:  # result: api.hooks.InstallResult
    click.echo(f"hooks dir: {result.hooks_dir}")
    for c in result.changes:
        line = f"  {c.name:<14} {c.action}"
        if c.detail:
            line += f"  ({c.detail})"
        click.echo(line)


@click.group("hooks")
def hooks_group() -> None:
    """Install, remove or inspect looma's git hooks."""


@hooks_group.command("install")
@click.option("--global", "global_ok", is_flag=True,
              help="Install into a core.hooksPath set in the global/system git config "
                   "(every repository on this machine; the shims do nothing where `looma "
                   "init` has not run).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def install_cmd(ctx: click.Context, global_ok: bool, as_json: bool) -> None:
    """Install the shims (idempotent) beside pre-commit, lefthook or husky; other hooks are
    moved aside and chained. Refused in a bare repository, into a global core.hooksPath
    unless --global, and into a hooks directory inside the work tree unless git ignores it."""
    import sys

    from looma_git.api import hooks as api

    result = api.install(_paths(ctx), sys.executable, global_ok=global_ok)
    if as_json:
        from looma_git.cli.common import emit_json

        emit_json(result)
    else:
        _render_changes(result)
    if any(c.action == "conflict" for c in result.changes):
        ctx.exit(1)


@hooks_group.command("uninstall")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def uninstall_cmd(ctx: click.Context, as_json: bool) -> None:
    """Remove the shims and put chained hooks back exactly as they were."""
    from looma_git.api import hooks as api

    result = api.uninstall(_paths(ctx))
    if as_json:
        from looma_git.cli.common import emit_json

        emit_json(result)
    else:
        _render_changes(result)


@hooks_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Per-hook state, queue length, last drain and last error."""
    import shutil
    from pathlib import Path

    from looma_git.api import hooks as api

    fallback = shutil.which("looma") is not None or shutil.which("git-looma") is not None
    st = api.status(_paths(ctx), path_fallback=fallback)
    if as_json:
        from looma_git.cli.common import emit_json

        emit_json(st)
        return
    click.echo(f"hooks dir: {st.hooks_dir}")
    for h in st.hooks:
        extra = " +chained" if h.chained else ""
        if h.manager:
            extra += f"  (hook owned by {h.manager}"
            extra += f"; looma runs as {Path(h.shim_path).name})" if h.shim_path else ")"
        if h.python and h.python_exists is False:
            extra += f"  (interpreter {h.python} missing)"
        click.echo(f"  {h.name:<14} {h.state}{extra}")
    running = "  (drainer running)" if st.drainer_running else ""
    click.echo(f"queue: {st.queue_length} commit(s), {st.rewrites_length} rewrite(s){running}")
    if st.last_drain:
        d = st.last_drain
        steps = ", ".join(f"{s.name} {s.status}" for s in d.steps[-3:])
        click.echo(f"last drain: {d.at} in {d.duration_ms:.0f} ms ({steps})")
    else:
        click.echo("last drain: never")
    if (lat := st.latency.get("drain_ms")):
        click.echo(f"drain latency: p50 {lat['p50']:.0f} ms, p90 {lat['p90']:.0f} ms, "
                   f"p99 {lat['p99']:.0f} ms over {int(lat['n'])}")
    if st.last_error:
        e = st.last_error
        click.echo(f"last drain error: {e.at} {e.step}: {e.message}")
    if st.log_error:
        click.echo(f"last error in hooks.log: {st.log_error}")
    for p in st.problems:
        click.echo(f"problem: {p}")


@click.group("hook", hidden=True)
def hook_group() -> None:
    """Entry points the shims call (internal)."""


@hook_group.command("drain")
@click.option("-v", "--verbose", is_flag=True, help="Print a summary (normally silent).")
@click.pass_context
def drain_cmd(ctx: click.Context, verbose: bool) -> None:
    """Drain the hook queues: ingest, record rewrites, link queued commits."""
    import os
    import sys
    from pathlib import Path

    from looma_git.api import hooks as api
    from looma_git.ingest.base import DiscoveryEnv

    env = DiscoveryEnv(home=Path.home(), environ=dict(os.environ), platform=sys.platform)
    # The core report; the wire model (pydantic) only when it is printed.
    rep = api.drain_report(_paths(ctx), env)
    if verbose:
        click.echo(api.drain_result(rep).model_dump_json(indent=2))


@hook_group.command("post-rewrite")
@click.argument("kind", default="unknown")
@click.pass_context
def post_rewrite_cmd(ctx: click.Context, kind: str) -> None:
    """Queue git's post-rewrite `<old> <new>` lines from stdin (what the shim does in sh)."""
    import sys
    import time

    from looma_git.api import hooks as api

    text = sys.stdin.read()
    api.record_rewrites(_paths(ctx), kind, text, int(time.time()))


@hook_group.command("pre-push")
@click.argument("remote", default="origin")
@click.option("--git-pid", type=int, default=None, help="The git push to wait for.")
@click.option("--pushed", multiple=True, metavar="SHA:REF",
              help="A ref the push sends (checked on the remote after the push).")
@click.pass_context
def pre_push_cmd(ctx: click.Context, remote: str, git_pid: int | None,
                 pushed: tuple[str, ...]) -> None:
    """After the push: drain queued commits, then sync looma's refs to REMOTE best-effort
    (detached by the shim; skipped when the pushed refs did not land)."""
    import os
    import sys
    from pathlib import Path

    from looma_git.api import hooks as api
    from looma_git.ingest.base import DiscoveryEnv

    env = DiscoveryEnv(home=Path.home(), environ=dict(os.environ), platform=sys.platform)
    pairs = [(p.split(":", 1)[0], p.split(":", 1)[1]) for p in pushed if ":" in p]
    api.prepush(_paths(ctx), env, remote, pushed=pairs, git_pid=git_pid)
