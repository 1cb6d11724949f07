"""Library surface for git hooks: install/uninstall/status of the shims and the drain run."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from looma_git.errors import InvalidDataError, ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.hooks import drain as drain_mod
from looma_git.hooks import queue, state
from looma_git.ingest.base import DiscoveryEnv
from looma_git.store import git

if TYPE_CHECKING:
    from pydantic import BaseModel

    from looma_git.hooks import install as install_mod
    from looma_git.wire.cli import DrainResult, HooksStatus, InstallResult, PrepushOut

_M = TypeVar("_M", bound="BaseModel")

# The wire models (pydantic) are imported where they are built: the background drain runs
# after every commit and must not pay for them unless a JSON answer is printed.


def _changes(base: Path, changes: list[install_mod.HookChange]) -> InstallResult:
    from looma_git.wire.cli import HookChangeOut, InstallResult

    return InstallResult(hooks_dir=str(base), changes=[
        HookChangeOut(name=c.name, path=str(c.path), action=c.action, detail=c.detail)
        for c in changes])


def install(paths: RepoPaths, python: str, *, global_ok: bool = False) -> InstallResult:
    """Install (or refresh) every shim with `python` baked in; idempotent. Refused in a bare
    repository, into a global core.hooksPath unless `global_ok`, and into a hooks directory
    in the work tree unless git ignores every file it would write there. Installing asks for
    looma in this repository, so its clone id is created (the shims do nothing without it)."""
    from looma_git.hooks import install as install_mod
    from looma_git.store.clone import ensure_clone_id

    changes = install_mod.install(paths, python, global_ok=global_ok)
    ensure_clone_id(paths)
    return _changes(install_mod.hooks_dir(paths), changes)


def uninstall(paths: RepoPaths) -> InstallResult:
    """Remove the shims and restore chained foreign hooks byte-for-byte."""
    from looma_git.hooks import install as install_mod

    changes = install_mod.uninstall(paths)
    return _changes(install_mod.hooks_dir(paths), changes)


def store_problem(store_db: Path) -> str | None:
    """Why store.db is unusable (not SQLite, truncated, not a file), or None; a header check."""
    from looma_git.index.storedb import damage

    if os.path.lexists(store_db) and not store_db.is_file():
        return f"{store_db} is not a file"
    problem = damage(store_db)
    return f"{problem}; run `looma reindex`" if problem else None


def _pid_alive(lock: Path) -> bool:
    try:
        pid = int(lock.read_text().strip() or "0")
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def status(paths: RepoPaths, *, path_fallback: bool) -> HooksStatus:
    """Per-hook state, queue lengths, last drain/error and latency percentiles.

    `path_fallback`: whether `looma`/`git-looma` is on PATH (the edge looks it up).
    """
    from looma_git.hooks import install as install_mod
    from looma_git.wire.cli import DrainErrorOut, HookOut, HooksStatus, LastDrainOut

    sd = paths.state_dir
    problems: list[str] = []
    hooks = []
    for h in install_mod.inspect_hooks(paths):
        exists = os.access(h.python, os.X_OK) if h.python else None
        hooks.append(HookOut(name=h.name, path=str(h.path), state=h.state, chained=h.chained,
                             python=h.python, python_exists=exists, manager=h.manager,
                             shim_path=str(h.shim_path) if h.shim_path else None))
        if h.problem:
            problems.append(h.problem)
        if h.python and not exists and not path_fallback:
            problems.append(f"{h.name}: interpreter {h.python} is gone and looma is not on PATH: "
                            "the hook does nothing (run `looma hooks install` again)")
    if os.path.lexists(sd) and not sd.is_dir():
        problems.append(f"{sd} is not a directory: hooks cannot queue anything")
    elif sd.is_dir() and not os.access(sd, os.W_OK):
        problems.append(f"{sd} is not writable: hooks cannot queue anything")
    q = sd / queue.COMMITS
    if os.path.lexists(q) and not q.is_file():
        problems.append(f"{q} is not a regular file: post-commit cannot queue commits")
    if (p := store_problem(paths.store_db)) is not None:
        problems.append(p)
    installed = [h for h in hooks if h.state in ("installed", "outdated")]
    if installed and sd.is_dir() and not (sd / "clone-id").exists():
        problems.append("looma is not initialized in this clone: the hooks do nothing "
                        "(run `looma init`)")
    if installed and install_mod.hooks_path_scope(paths) in ("global", "system"):
        problems.append("the hooks are in a global core.hooksPath: they run in every "
                        "repository on this machine (and do nothing where `looma init` has "
                        "not run)")
    spawn = sd / drain_mod.SPAWN
    with contextlib.suppress(OSError):
        if spawn.is_dir() and time.time() - spawn.stat().st_mtime > 300 \
                and not _pid_alive(spawn / "pid"):
            problems.append(f"{spawn} is stale (the drainer it launched is gone): the next "
                            "commit replaces it, or run `looma hook drain`")
    rewrite_ref = git.config_get(paths.worktree or paths.git_dir, "notes.rewriteRef")
    if installed and rewrite_ref is None:
        problems.append("notes.rewriteRef is not set: notes will not follow amend/rebase "
                        "(run `looma init`)")
    data = state.read_state(sd) if sd.is_dir() else {}
    samples = data.get("samples", {}) if isinstance(data.get("samples"), dict) else {}
    latency = {k: state.percentiles([float(v) for v in vals])
               for k, vals in samples.items() if isinstance(vals, list) and vals}
    log_err = state.last_log_error(sd) if sd.is_dir() else None
    return HooksStatus(
        hooks_dir=str(install_mod.hooks_dir(paths)), hooks=hooks,
        queue_length=len(queue.pending(q)) if sd.is_dir() else 0,
        rewrites_length=len(queue.pending(sd / queue.REWRITES)) if sd.is_dir() else 0,
        drainer_running=_pid_alive(sd / drain_mod.LOCK),
        last_drain=_recorded(LastDrainOut, data.get("last_drain")),
        last_error=_recorded(DrainErrorOut, data.get("last_error")),
        log_error=log_err.line if log_err else None, latency=latency,
        notes_rewrite_ref=rewrite_ref, problems=problems)


def _recorded(model: type[_M], value: object) -> _M | None:
    """A part of hooks-state.json as its wire model; None when absent or not that shape (a
    damaged or hand-edited file must not make `hooks status` fail)."""
    from pydantic import ValidationError

    try:
        return model.model_validate(value) if isinstance(value, dict) else None
    except ValidationError:
        return None


def _require_store(paths: RepoPaths) -> None:
    if (p := store_problem(paths.store_db)) is not None:
        raise InvalidDataError(p, hint="run `looma reindex`")


def _short(report: object) -> str:
    return " ".join(repr(report).split())[:300]


def steps(paths: RepoPaths, env: DiscoveryEnv) -> list[drain_mod.Step]:
    """The drain steps, in order: ingest, rewrites -> ledger ops, link queued commits."""

    def ingest(batch: drain_mod.Batch) -> str:
        from looma_git.hooks import scan

        _require_store(paths)
        # Stats against store.db's cursors first (hooks/scan.py): after a commit usually no
        # transcript grew, and then the ingest machinery need not start at all.
        quiet = scan.unchanged(paths) if not env.overrides else None
        if quiet is not None:
            return f"no new transcript lines ({quiet})"
        from looma_git.api.ingest import ingest_summary
        from looma_git.errors import LockError

        try:
            return _short(ingest_summary(paths, env))
        except LockError:  # (not an error of the drain: the next drain reads what that misses)
            return "skipped: another looma ingest or pass is running and stores what is new"

    def rewrites(batch: drain_mod.Batch) -> str:
        if not batch.rewrites:
            return "no rewrites"
        from looma_git.api import ledger as api_ledger
        from looma_git.ledger.ops import OpDraft

        # The same pair can arrive twice: an autosquash runs post-rewrite `amend` for each
        # fixup and then `rebase` with the same line; an earlier drain may have recorded it.
        recorded = dict(api_ledger.load_state(paths).rewrites)
        pairs = []
        for r in batch.rewrites:
            if r.old != r.new and recorded.get(r.old) != r.new:
                recorded[r.old] = r.new
                pairs.append((r.old, r.new))
        drafts = [OpDraft(op="commit.rewrite", target={"type": "commit", "id": old},
                          payload={"old": old, "new": new}) for old, new in pairs]
        if drafts:
            api_ledger.append(paths, drafts, actor="system")
        return f"{len(drafts)} commit.rewrite op(s)"

    def link(batch: drain_mod.Batch) -> str:
        if not batch.link_shas:
            return "no commits"
        _require_store(paths)
        from looma_git.api.linking import link_commits

        return _short(link_commits(paths, list(batch.link_shas), by="hook"))

    return [drain_mod.Step("ingest", ingest),
            drain_mod.Step("rewrites", rewrites, consumes="rewrites"),
            drain_mod.Step("link", link, consumes="commits")]


def drain_report(paths: RepoPaths, env: DiscoveryEnv,
                 step_list: list[drain_mod.Step] | None = None) -> drain_mod.DrainReport:
    """Run one drainer (exits at once when another holds the lock); never raises for a step.
    The core report: what the background drain uses (no wire model, no pydantic)."""
    sd = paths.state_dir
    try:
        sd.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReadOnlyError(f"cannot create {sd}: {exc.strerror or exc}") from exc
    cwd = paths.worktree or paths.git_dir
    try:
        rep = drain_mod.run_drain(sd, cwd, step_list if step_list is not None else steps(paths, env))
    except OSError as exc:
        state.log(sd, f"error: drainer cannot run: {exc}")
        raise ReadOnlyError(f"drainer cannot run in {sd}: {exc.strerror or exc}") from exc
    return rep


def drain_result(rep: drain_mod.DrainReport) -> DrainResult:
    """The wire form of a drain report (`looma hook drain -v`)."""
    from looma_git.wire.cli import DrainResult, DrainStepOut

    return DrainResult(ran=rep.ran, passes=rep.passes, commits=rep.commits,
                       rewrites=rep.rewrites, requeued=rep.requeued, dropped=rep.dropped,
                       duration_ms=round(rep.duration_ms, 3),
                       steps=[DrainStepOut(name=s.name, status=s.status, ms=s.ms,
                                           detail=s.detail) for s in rep.steps])


def drain(paths: RepoPaths, env: DiscoveryEnv,
          step_list: list[drain_mod.Step] | None = None) -> DrainResult:
    """Run one drainer (exits at once when another holds the lock); never raises for a step."""
    return drain_result(drain_report(paths, env, step_list))


# The shim detaches the pre-push step from the push, so it can afford to wait: for the push
# to end, for a running drainer (so the pushed commits' links travel with them), then sync.
PREPUSH_DRAIN_WAIT_S = 60.0
PREPUSH_PUSH_WAIT_S = 600.0


def prepush(paths: RepoPaths, env: DiscoveryEnv, remote: str, *,
            pushed: list[tuple[str, str]] | None = None, git_pid: int | None = None,
            drain_wait_s: float = PREPUSH_DRAIN_WAIT_S) -> PrepushOut:
    """The pre-push hook's step (the shim runs it detached: this process is the only one).
    With `git_pid` (the shim's parent), it first waits for that `git push` to end and checks
    that the `pushed` (local sha, remote ref) pairs landed: when the remote refused the push,
    looma's refs are not pushed either. Then it drains queued commits (after a running
    drainer, bounded) and syncs looma's refs with `remote`'s sharing targets, in this
    process. Never raises; logs one `pre-push REMOTE: STATUS` line (and one per target)."""
    from looma_git.hooks import pushwait
    from looma_git.store import share_config
    from looma_git.store import sync as store_sync
    from looma_git.wire.cli import PrepushOut

    sd = paths.state_dir
    try:
        if git_pid:
            pushwait.wait_exit(pushwait.git_ancestor(git_pid), PREPUSH_PUSH_WAIT_S)
            bad = pushwait.refused(paths.worktree or paths.git_dir, remote, pushed or [])
            if bad:
                out = PrepushOut(status="skipped", message=(
                    f"the push of {', '.join(bad)} did not land (refused or failed), so "
                    "looma's refs were not pushed either"))
                state.log(sd, f"pre-push {remote}: skipped: {out.message}")
                return out
        end = time.monotonic() + drain_wait_s
        while _pid_alive(sd / drain_mod.LOCK) and time.monotonic() < end:
            time.sleep(0.1)
        if queue.pending(sd / queue.COMMITS) or queue.pending(sd / queue.REWRITES):
            drain_report(paths, env)
        targets = share_config.read_settings(paths).targets_for(remote)
        if not targets:
            out = PrepushOut(status="skipped", message=f"sharing not enabled for {remote}")
        elif store_sync.sync_targets(paths, targets):
            out = PrepushOut(status="pushed", remotes=targets)
        else:
            out = PrepushOut(status="failed", remotes=targets, message="see hooks.log")
    except Exception as exc:  # the push has gone ahead; all that is left is the log line
        out = PrepushOut(status="failed", message=f"{type(exc).__name__}: {exc}")
    state.log(sd, f"pre-push {remote}: {out.status}" + (f" ({out.message})" if out.message
                                                        else ""))
    return out


def record_rewrites(paths: RepoPaths, kind: str, text: str, now: int) -> int:
    """Append git's post-rewrite `<old> <new>` lines to the rewrites queue; returns the count."""
    lines = []
    for raw in text.splitlines():
        parts = raw.split()
        if len(parts) >= 2:
            lines.append(f"{parts[0]} {parts[1]} {kind} {now}")
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    queue.put_back(paths.state_dir / queue.REWRITES, lines)
    return len(lines)
