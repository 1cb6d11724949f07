"""The LoomaError hierarchy: every domain failure, each with its exit code; no printing."""

from __future__ import annotations

# Every exit status the CLI uses, documented in `looma --help`, the man pages and docs/cli.md.
EXIT_CODES: list[tuple[int, str]] = [
    (0, "success (for `resume`: confident)"),
    (1, "error"),
    (2, "usage: bad arguments or options; a stale resume letter"),
    (3, "not a git repository, or looma not initialized here"),
    (4, "locked or conflict (another looma holds a lock; a compare-and-swap lost)"),
    (5, "invalid data (malformed ledger, hostile input)"),
    (6, "verify found problems"),
    (7, "not found or ambiguous (ids, prefixes, titles, commits)"),
    (8, "read-only git directory or state directory"),
    (9, "remote unreachable or unusable"),
    (10, "`resume --exit-code` (or --porcelain): ambiguous"),
    (11, "`resume --exit-code` (or --porcelain): cold (nothing matches)"),
    (70, "internal error (a bug: rerun with LOOMA_DEBUG=1 and report it)"),
    (130, "interrupted (Ctrl-C)"),
    (141, "the reader of the output went away (`looma log | head -1`), as git"),
]


class LoomaError(Exception):
    """Base of all expected failures. The CLI maps these to a message and `exit_code`."""

    exit_code = 1
    code = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(LoomaError):
    """The user asked for something that cannot be done as asked (bad arguments)."""

    exit_code = 2
    code = "usage"


class StaleLetterError(UsageError):
    """A resume letter whose listing is gone (another resume since, another terminal, or the
    work model changed): refused, with the ids it meant."""

    code = "stale_letter"


class NotARepositoryError(LoomaError):
    """Not inside a git repository, or inside a bare one where a work tree is needed."""

    exit_code = 3
    code = "not_a_repository"


class NotInitializedError(LoomaError):
    """`looma init` has not been run in this clone."""

    exit_code = 3
    code = "not_initialized"


class LockError(LoomaError):
    """A lock is held (possibly stale, left by a crash); the message names the file."""

    exit_code = 4
    code = "locked"


class ConflictError(LoomaError):
    """A compare-and-swap kept losing the race after bounded retries."""

    exit_code = 4
    code = "conflict"


class InvalidDataError(LoomaError):
    """Data on disk or from a teammate is malformed or hostile (bad YAML, bad op id...)."""

    exit_code = 5
    code = "invalid_data"


class VerifyError(LoomaError):
    """`looma verify` found problems."""

    exit_code = 6
    code = "verify_failed"


class NotFoundError(LoomaError):
    """An id, prefix, title or commit that names nothing."""

    exit_code = 7
    code = "not_found"


class AmbiguousError(LoomaError):
    """A prefix or name that matches more than one thing; `matches` lists them."""

    exit_code = 7
    code = "ambiguous"

    def __init__(self, message: str, *, matches: list[str] | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.matches = matches or []


class ReadOnlyError(LoomaError):
    """The git directory or looma's state directory is not writable."""

    exit_code = 8
    code = "read_only"


class RemoteError(LoomaError):
    """A remote could not be reached or answered with something unusable."""

    exit_code = 9
    code = "remote"
