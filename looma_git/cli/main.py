"""The `looma` command group: lazy command registry and the one place errors become exit codes."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from looma_git import __version__
from looma_git.errors import AmbiguousError, LoomaError

# name -> "module:attribute". Modules are imported only when their command runs (or for --help,
# which is why every cli module keeps heavy imports inside its functions).
COMMANDS: dict[str, str] = {
    "ingest": "looma_git.cli.ingest_cmd:ingest_cmd",
    "init": "looma_git.cli.init_cmd:init_cmd",
    "verify": "looma_git.cli.verify_cmd:verify_cmd",
    "log": "looma_git.cli.log_cmd:log_cmd",
    "work": "looma_git.cli.work_cmd:work_cmd",
    "resume": "looma_git.cli.resume_cmd:resume_cmd",
    "ask": "looma_git.cli.ask_cmd:ask_cmd",
    "timeline": "looma_git.cli.ask_cmd:timeline_cmd",
    "recall": "looma_git.cli.ask_cmd:recall_cmd",
    "reprocess": "looma_git.cli.refine_cmd:reprocess_cmd",
    "backfill": "looma_git.cli.refine_cmd:backfill_cmd",
    "reindex": "looma_git.cli.refine_cmd:reindex_cmd",
    "demo": "looma_git.cli.demo_cmd:demo_cmd",
    "status": "looma_git.cli.status_cmd:status_cmd",
    "correct": "looma_git.cli.correct_cmd:correct_group",
    "blame": "looma_git.cli.correct_cmd:blame_cmd",
    "link": "looma_git.cli.correct_cmd:link_cmd",
    "unlink": "looma_git.cli.correct_cmd:unlink_cmd",
    "relink": "looma_git.cli.relink_cmd:relink_cmd",
    "hooks": "looma_git.cli.hooks_cmd:hooks_group",
    "hook": "looma_git.cli.hooks_cmd:hook_group",
    "share": "looma_git.cli.share_cmd:share_group",
    "sync": "looma_git.cli.share_cmd:sync_cmd",
    "conflicts": "looma_git.cli.share_cmd:conflicts_cmd",
    "mcp": "looma_git.cli.mcp_cmd:mcp_group",
}


class LazyGroup(click.Group):
    """A click group whose subcommands live in modules imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        cmd = getattr(importlib.import_module(module_name), attr)
        assert isinstance(cmd, click.Command)
        return cmd


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="looma")
@click.option("-C", "repo_dir", default=None, metavar="PATH",
              help="Run as if looma was started in PATH (like git -C).")
@click.pass_context
def cli(ctx: click.Context, repo_dir: str | None) -> None:
    """looma: the work your coding agents do, anchored in git.

    \b
    Start here:
      looma init              set up this clone (idempotent)
      looma ingest            read agent transcripts (Claude Code, Codex, Gemini CLI,
                              Cursor, OpenCode; Windsurf metadata only)
      looma work              list WorkItems with their confidence
      looma resume "auth"     what is the active work on auth, and how sure are we

    Curation lives in refs/looma/ledger and commit links in refs/notes/looma,
    so `git log --notes=looma` shows them and teammates share them by pushing.
    """
    ctx.ensure_object(dict)
    ctx.obj["repo_dir"] = repo_dir


def render_error(err: LoomaError) -> str:
    """The human text for a domain error."""
    lines = [f"looma: error: {err.message}"]
    if isinstance(err, AmbiguousError) and err.matches:
        lines += [f"  {m}" for m in err.matches]
    if err.hint:
        lines.append(f"hint: {err.hint}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> Any:
    """Console entry point for `looma` and `git-looma`."""
    try:
        result = cli.main(args=argv, prog_name="looma", standalone_mode=False)
        # click returns an exit code from ctx.exit(n); commands themselves return None.
        if isinstance(result, int) and result:
            sys.exit(result)
        return None
    except LoomaError as err:
        click.echo(render_error(err), err=True)
        sys.exit(err.exit_code)
    except click.exceptions.Abort:
        click.echo("looma: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except KeyboardInterrupt:
        click.echo("looma: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # never a bare traceback for the user; LOOMA_DEBUG=1 shows it
        import os
        import traceback

        mapped = _known_failure(exc)
        if mapped is not None:
            click.echo(render_error(mapped), err=True)
            sys.exit(mapped.exit_code)

        if os.environ.get("LOOMA_DEBUG"):
            traceback.print_exc()
        click.echo(f"looma: internal error: {type(exc).__name__}: {exc}\n"
                   "hint: rerun with LOOMA_DEBUG=1 for a traceback and report it", err=True)
        sys.exit(70)


def _known_failure(exc: Exception) -> LoomaError | None:
    """A damaged local cache or a read-only file system met outside the paths that check for
    them: a clear error with its fix, not an internal error."""
    import errno

    from looma_git.errors import InvalidDataError, ReadOnlyError

    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.DatabaseError) and not isinstance(
            exc, sqlite3.OperationalError):
        return InvalidDataError(f"the local cache (store.db) is damaged: {exc}",
                                hint="run `looma reindex`: it sets the damaged file aside and "
                                     "rebuilds the cache from the refs")
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return ReadOnlyError(f"read-only file system: {exc.filename or exc}",
                             hint="this command writes looma's local state; reads work")
    return None


if __name__ == "__main__":
    main()
