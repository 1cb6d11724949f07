"""Library surface for the ledger: init, append, load_state, verify, log, resolve_op."""

from __future__ import annotations

from dataclasses import dataclass, field

from looma_git.errors import (
    AmbiguousError,
    NotFoundError,
)
from looma_git.gitrepo import RepoPaths, require_worktree
from looma_git.ledger.ops import Op, OpDraft
from looma_git.ledger.state import LedgerState


@dataclass(frozen=True)
class InitReport:
    """What `init_repo` found and changed."""

    state_dir: str
    clone_id: str
    created_clone_id: bool
    config_changed: tuple[str, ...]
    ledger_created: bool


@dataclass(frozen=True)
class Problem:
    """One verify finding; `op_id` names the op when one is involved."""

    kind: str
    message: str
    op_id: str | None = None
    path: str | None = None


@dataclass
class VerifyReport:
    """Everything `verify` checked."""

    ops: int = 0
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    commits_checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def init_repo(paths: RepoPaths) -> InitReport:
    """Idempotent setup: state dir + clone id, notes rewrite config, an empty ledger ref."""
    from looma_git.store import bootstrap
    from looma_git.store.clone import ensure_clone_id

    worktree = require_worktree(paths)
    clone_id, created = ensure_clone_id(paths)
    changed = bootstrap.ensure_rewrite_config(worktree)
    created_ledger = bootstrap.ensure_ledger_ref(paths)
    bootstrap.ensure_notes_ref(paths)
    return InitReport(str(paths.state_dir), clone_id, created, tuple(changed), created_ledger)


def append(paths: RepoPaths, drafts: list[OpDraft], actor: str = "user",
           actor_name: str | None = None) -> list[Op]:
    """Write a batch of ops (one ledger commit) and bring the notes ref up to date.
    `actor_name` names a user actor other than the git user (e.g. the MCP client)."""
    from looma_git.store.ledger_ref import LedgerStore
    from looma_git.store.locking import writer_lock
    from looma_git.store.notes import sync_notes

    with writer_lock(paths.state_dir):
        store = LedgerStore(paths)
        ops = store.append(drafts, actor, actor_name)
        sync_notes(paths, store.state(), touched=store.notes_touched)
    return ops


def load_state(paths: RepoPaths) -> LedgerState:
    """The fold of every effective op on refs/looma/ledger."""
    from looma_git.store.ledger_ref import LedgerStore

    return LedgerStore(paths).state()


def log(paths: RepoPaths, user_only: bool = False, limit: int | None = None) -> list[Op]:
    """Ops newest first by (lamport, id)."""
    from looma_git.store.ledger_ref import LedgerStore

    ops = sorted(LedgerStore(paths).read().ops, key=lambda o: o.sort_key, reverse=True)
    if user_only:
        ops = [o for o in ops if o.is_user]
    return ops[:limit] if limit is not None else ops


def resolve_op(paths: RepoPaths, prefix: str) -> Op:
    """The one op whose id starts with `prefix`."""
    from looma_git.store.ledger_ref import LedgerStore

    prefix = prefix.strip().lower()
    matches = [o for o in LedgerStore(paths).read().ops if o.id.startswith(prefix)] \
        if prefix else []
    if not matches:
        raise NotFoundError(f"no ledger op starts with {prefix!r}", hint="see `looma log`")
    if len(matches) > 1:
        raise AmbiguousError(f"{len(matches)} ops start with {prefix!r}",
                             matches=[f"{o.id[:12]} {o.op}" for o in matches[:10]],
                             hint="give more characters of the id")
    return matches[0]


def verify(paths: RepoPaths) -> VerifyReport:
    """Recompute ids, check append-only history, projections and notes against the fold."""
    from looma_git.store.audit import audit

    count, commits, findings, warnings = audit(paths)
    return VerifyReport(ops=count, commits_checked=commits, warnings=warnings,
                        problems=[Problem(f.kind, f.message, f.op_id, f.path) for f in findings])
