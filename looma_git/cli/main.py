"""The `looma` command group: lazy command registry and the one place errors become exit codes."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from looma_git import __version__
from looma_git.errors import EXIT_CODES, AmbiguousError, LoomaError

EPILOG = "\b\nExit codes:\n" + "\n".join(f"  {c:<4} {m}" for c, m in EXIT_CODES) + \
    "\n\nWith --json every outcome, failures too, is one JSON document on stdout.\n" \
    "`looma help COMMAND` shows a command's manual."

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
    "help": "looma_git.cli.help_cmd:help_cmd",
    "completion": "looma_git.cli.complete:completion_cmd",
}


# name -> the first sentence of its help, so `looma --help` lists the commands without
# importing their modules (tests/test_layers.py checks these equal the commands' own).
SHORT_HELP: dict[str, str] = {
    "ask": 'Facts that answer QUERY, each with provenance, confidence and band.',
    "backfill": 'Link existing history to WorkItems in one batched notes write.',
    "blame": 'Which ops shaped WORK: who, when and why.',
    "completion": 'Print the completion script for SHELL (commands, options, WorkItem ids, resume letters and remotes).',
    "conflicts": 'Concurrent, conflicting user intents (two renames of one WorkItem, a merge against a split...), each resolved deterministically by (lamport, id); the winner is marked *.',
    "correct": 'Correct the work model.',
    "demo": 'Build a real repository with sessions from several agents and run looma on it.',
    "help": "Show a command's manual, like `git help`: `looma help correct split`.",
    "hooks": "Install, remove or inspect looma's git hooks.",
    "ingest": "Read new records from your coding agents' transcripts into the local store.",
    "init": 'Set up looma in this clone.',
    "link": 'Record that COMMIT implements WORK (a user op; shows in `git log --notes=looma`).',
    "log": 'Show ledger ops newest first, ordered by (lamport, id) as every clone folds them.',
    "mcp": 'Serve looma to coding agents over MCP (stdio).',
    "recall": 'Everything looma knows about ENTITY: a file, directory, commit, branch, session or term.',
    "reindex": 'Rebuild the local search index and vectors from the ledger ref plus local events.',
    "relink": 'Re-attach links whose commit no branch or tag reaches any more.',
    "reprocess": 'Rebuild the local work model from stored events plus the ledger.',
    "resume": 'What is the active work on GOAL, and how sure is looma?',
    "share": "Opt a remote into sharing looma's refs (refs/looma/ledger, refs/notes/looma).",
    "status": 'What looma knows here and whether it is up to date.',
    "sync": "Fetch, union-merge and push looma's refs with REMOTE.",
    "timeline": 'Decisions, sessions, commits and status changes of WORK, in order.',
    "unlink": 'Record that COMMIT does not implement WORK; no automated pass relinks it.',
    "verify": 'Check refs/looma/ledger and refs/notes/looma against each other.',
    "work": 'List WorkItems, most confident first.',
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = [n for n in self.list_commands(ctx) if n in SHORT_HELP]
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        # a stand-in command carries the summary: click shortens it exactly as its own
        rows = [(n, click.Command(n, help=SHORT_HELP[n]).get_short_help_str(limit))
                for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            hint = f"\n\nThe most similar command{'s are' if len(close) > 1 else ' is'}:\n" + \
                "\n".join(f"    {c}" for c in close) if close else ""
            ctx.fail(f"'{name}' is not a looma command. See 'looma --help'.{hint}")
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, invoke_without_command=True, epilog=EPILOG,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="looma")
@click.option("-C", "repo_dir", default=None, metavar="PATH",
              help="Run as if looma was started in PATH (like git -C).")
@click.option("--no-pager", "no_pager", is_flag=True,
              help="Never page long listings (work, log, timeline) through a pager.")
@click.pass_context
def cli(ctx: click.Context, repo_dir: str | None, no_pager: bool) -> None:
    """looma: the work your coding agents do, anchored in git.

    \b
    Start here:
      looma init              set up this clone (idempotent)
      looma ingest            read agent transcripts (Claude Code, Codex, Gemini CLI,
                              Cursor, OpenCode; Windsurf hook transcripts)
      looma work              list WorkItems with their confidence
      looma resume "auth"     what is the active work on auth, and how sure are we

    Curation lives in refs/looma/ledger and commit links in refs/notes/looma,
    so `git log --notes=looma` shows them and teammates share them by pushing.
    """
    ctx.ensure_object(dict)
    ctx.obj["repo_dir"] = repo_dir
    ctx.obj["no_pager"] = no_pager
    if ctx.invoked_subcommand is None:  # bare `looma`: the help, on stdout, exit 0 (like git)
        click.echo(ctx.get_help())
        ctx.exit(0)


def render_error(err: LoomaError) -> str:
    """The human text for a domain error."""
    lines = [f"looma: error: {err.message}"]
    if isinstance(err, AmbiguousError) and err.matches:
        lines += [f"  {m}" for m in err.matches]
    if err.hint:
        lines.append(f"hint: {err.hint}")
    return "\n".join(lines)


def _interrupted() -> None:
    """Ctrl-C: one line (after erasing a half-drawn progress line), exit 130 like a shell."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not add a traceback
    try:
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")
        sys.stderr.write("looma: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    # A KeyboardInterrupt that surfaced inside an extension's embedded Python (pybind11 code
    # run while onnxruntime imports) leaves CPython's "unhandled ^C" flag set, and the
    # interpreter then kills itself with SIGINT at exit (-2, not 130). Exit ourselves, after
    # the atexit handlers (pool cleanup), so the status is always 130 as documented.
    if _own_process():
        import atexit
        import os

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)
    sys.exit(130)


def _own_process() -> bool:
    """True in the real `looma` process (not when tests call main() in-process)."""
    return not getattr(sys, "_looma_in_process", False)


def _wants_json(argv: list[str]) -> bool:
    """`--json` (or `--porcelain`) anywhere before a `--`: errors become one JSON document."""
    args = argv[:argv.index("--")] if "--" in argv else argv
    return "--json" in args


def _fail(argv: list[str], code: str, message: str, hint: str | None, exit_code: int,
          text: str | None = None, **extra: Any) -> None:
    """Report a failure: one JSON document on stdout with --json, else text on stderr."""
    if _wants_json(argv):
        from looma_git.cli.common import emit_json
        from looma_git.wire.ledger import ErrorBody, ErrorOut

        emit_json(ErrorOut(error=ErrorBody(code=code, message=message, hint=hint,
                                           exit_code=exit_code, **extra)))
    else:
        click.echo(text if text is not None else
                   f"looma: error: {message}" + (f"\nhint: {hint}" if hint else ""), err=True)
    sys.exit(exit_code)


def _broken_pipe() -> None:
    """The reader went away (`looma log | head -1`): silent, exit 141 like git (SIGPIPE)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(141)


_SIGINT_SEEN = False


def _on_sigint(signum: int, frame: Any) -> None:
    """Ctrl-C: remember it (a git child or an extension hit by the same signal may surface
    it as some other error) and raise KeyboardInterrupt as Python's own handler does."""
    global _SIGINT_SEEN
    _SIGINT_SEEN = True
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> Any:
    """Console entry point for `looma` and `git-looma`."""
    args = list(sys.argv[1:] if argv is None else argv)
    if _own_process():
        import signal

        try:
            signal.signal(signal.SIGINT, _on_sigint)
        except ValueError:  # not the main thread
            pass
    try:
        try:
            import os

            # NO_COLOR (https://no-color.org): any non-empty value turns colour off.
            color = False if os.environ.get("NO_COLOR") else None
            result = cli.main(args=args, prog_name="looma", standalone_mode=False, color=color)
            sys.stdout.flush()
        except BrokenPipeError:
            _broken_pipe()
        # click returns an exit code from ctx.exit(n); commands themselves return None.
        if isinstance(result, int) and result:
            sys.exit(result)
        return None
    except LoomaError as err:
        if _SIGINT_SEEN:
            _interrupted()
        extra = {"matches": err.matches} if isinstance(err, AmbiguousError) else {}
        _fail(args, err.code, err.message, err.hint, err.exit_code, render_error(err), **extra)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _interrupted()
    except click.ClickException as err:
        _fail(args, "usage", err.format_message(), _usage_hint(err), err.exit_code,
              _click_text(err))
    except Exception as exc:  # never a bare traceback for the user; LOOMA_DEBUG=1 shows it
        import os

        if _SIGINT_SEEN:
            _interrupted()
        import traceback

        mapped = _known_failure(exc)
        if mapped is not None:
            click.echo(render_error(mapped), err=True)
            sys.exit(mapped.exit_code)

        if os.environ.get("LOOMA_DEBUG"):
            traceback.print_exc()
        _fail(args, "internal", f"{type(exc).__name__}: {exc}",
              "rerun with LOOMA_DEBUG=1 for a traceback and report it", 70,
              f"looma: internal error: {type(exc).__name__}: {exc}\n"
              "hint: rerun with LOOMA_DEBUG=1 for a traceback and report it")


def _usage_hint(err: click.ClickException) -> str | None:
    ctx = getattr(err, "ctx", None)
    if ctx is None:
        return "see `looma --help`"
    return f"see `{ctx.command_path} --help`"


def _click_text(err: click.ClickException) -> str:
    """click's own rendering (usage line, then the error), as a string."""
    import io

    buf = io.StringIO()
    err.show(file=buf)
    return buf.getvalue().rstrip("\n")


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
