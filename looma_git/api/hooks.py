"""Library surface for git hooks: install/uninstall/status of the shims and the drain run."""

from __future__ import annotations

import importlib
import os
import subprocess
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from looma_git.errors import InvalidDataError, ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.hooks import drain as drain_mod
from looma_git.hooks import install as install_mod
from looma_git.hooks import queue, state
from looma_git.ingest.base import DiscoveryEnv

_SQLITE_MAGIC = b"SQLite format 3\x00"


class HookChangeOut(BaseModel):
    name: str
    path: str
    action: str
    detail: str = ""


class InstallResult(BaseModel):
    hooks_dir: str
    changes: list[HookChangeOut]


class HookOut(BaseModel):
    name: str
    path: str
    state: str  # installed | outdated | foreign | absent
    chained: bool
    python: str | None = None
    python_exists: bool | None = None


class HooksStatus(BaseModel):
    """`looma hooks status --json`."""

    hooks_dir: str
    hooks: list[HookOut]
    queue_length: int
    rewrites_length: int
    drainer_running: bool
    last_drain: dict[str, Any] | None = None
    last_error: dict[str, Any] | None = None  # from hooks-state.json (a failed drain step)
    log_error: str | None = None  # the last error line in hooks.log (shim, drainer, traceback)
    latency: dict[str, dict[str, float]] = {}
    notes_rewrite_ref: str | None = None
    problems: list[str] = []


class DrainResult(BaseModel):
    ran: bool
    passes: int
    commits: int
    rewrites: int
    requeued: int
    dropped: int
    duration_ms: float
    steps: list[dict[str, Any]]


def _changes(base: Path, changes: list[install_mod.HookChange]) -> InstallResult:
    return InstallResult(hooks_dir=str(base), changes=[
        HookChangeOut(name=c.name, path=str(c.path), action=c.action, detail=c.detail)
        for c in changes])


def install(paths: RepoPaths, python: str) -> InstallResult:
    """Install (or refresh) every shim with `python` baked in; idempotent."""
    changes = install_mod.install(paths, python)
    return _changes(install_mod.hooks_dir(paths), changes)


def uninstall(paths: RepoPaths) -> InstallResult:
    """Remove the shims and restore chained foreign hooks byte-for-byte."""
    changes = install_mod.uninstall(paths)
    return _changes(install_mod.hooks_dir(paths), changes)


def store_problem(store_db: Path) -> str | None:
    """Why store.db is unusable (not SQLite, not a file), or None; a cheap header check."""
    try:
        if not store_db.exists():
            return None
        if not store_db.is_file():
            return f"{store_db} is not a file"
        with store_db.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        return f"cannot read {store_db}: {exc.strerror or exc}"
    if head and head != _SQLITE_MAGIC:
        return f"{store_db} is corrupt (not an SQLite database); run `looma reindex`"
    return None


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


def _git_config(paths: RepoPaths, key: str) -> str | None:
    proc = subprocess.run(["git", "config", "--get", key], cwd=paths.worktree or paths.git_dir,
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def status(paths: RepoPaths, *, path_fallback: bool) -> HooksStatus:
    """Per-hook state, queue lengths, last drain/error and latency percentiles.

    `path_fallback`: whether `looma`/`git-looma` is on PATH (the edge looks it up).
    """
    sd = paths.state_dir
    problems: list[str] = []
    hooks = []
    for h in install_mod.inspect_hooks(paths):
        exists = os.access(h.python, os.X_OK) if h.python else None
        hooks.append(HookOut(name=h.name, path=str(h.path), state=h.state, chained=h.chained,
                             python=h.python, python_exists=exists))
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
    rewrite_ref = _git_config(paths, "notes.rewriteRef")
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
        last_drain=data.get("last_drain"), last_error=data.get("last_error"),
        log_error=log_err.line if log_err else None, latency=latency,
        notes_rewrite_ref=rewrite_ref, problems=problems)


def _optional(module: str) -> ModuleType:
    """Import an api module another part of looma provides; missing -> StepUnavailable."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise drain_mod.StepUnavailable(f"{module} is not available") from exc
        raise


def _require_store(paths: RepoPaths) -> None:
    if (p := store_problem(paths.store_db)) is not None:
        raise InvalidDataError(p, hint="run `looma reindex`")


def _short(report: object) -> str:
    return " ".join(repr(report).split())[:300]


def steps(paths: RepoPaths, env: DiscoveryEnv) -> list[drain_mod.Step]:
    """The drain steps, in order: ingest, rewrites -> ledger ops, link queued commits."""

    def ingest(batch: drain_mod.Batch) -> str:
        _require_store(paths)
        fn = getattr(_optional("looma_git.api.ingest"), "ingest", None)
        if fn is None:
            raise drain_mod.StepUnavailable("looma_git.api.ingest.ingest is not available")
        return _short(fn(paths, env))

    def rewrites(batch: drain_mod.Batch) -> str:
        if not batch.rewrites:
            return "no rewrites"
        append = getattr(_optional("looma_git.api.ledger"), "append", None)
        if append is None:
            raise drain_mod.StepUnavailable("looma_git.api.ledger.append is not available")
        from looma_git.ledger.ops import OpDraft

        drafts = [OpDraft(op="commit.rewrite", target={"type": "commit", "id": r.old},
                          payload={"old": r.old, "new": r.new})
                  for r in batch.rewrites if r.old != r.new]
        if drafts:
            append(paths, drafts, actor="system")
        return f"{len(drafts)} commit.rewrite op(s)"

    def link(batch: drain_mod.Batch) -> str:
        if not batch.link_shas:
            return "no commits"
        _require_store(paths)
        fn = getattr(_optional("looma_git.api.linking"), "link_commits", None)
        if fn is None:
            raise drain_mod.StepUnavailable("looma_git.api.linking.link_commits is not available")
        return _short(fn(paths, list(batch.link_shas), by="hook"))

    return [drain_mod.Step("ingest", ingest),
            drain_mod.Step("rewrites", rewrites, consumes="rewrites"),
            drain_mod.Step("link", link, consumes="commits")]


def drain(paths: RepoPaths, env: DiscoveryEnv,
          step_list: list[drain_mod.Step] | None = None) -> DrainResult:
    """Run one drainer (exits at once when another holds the lock); never raises for a step."""
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
    return DrainResult(ran=rep.ran, passes=rep.passes, commits=rep.commits,
                       rewrites=rep.rewrites, requeued=rep.requeued, dropped=rep.dropped,
                       duration_ms=round(rep.duration_ms, 3),
                       steps=[{"name": s.name, "status": s.status, "ms": s.ms,
                               "detail": s.detail} for s in rep.steps])


# The pre-push child is detached from the push, so it can afford to wait: for a running
# drainer (so the pushed commits' links travel with them) and for the sync itself.
PREPUSH_DRAIN_WAIT_S = 60.0
PREPUSH_SYNC_BUDGET_S = 120.0


def prepush(paths: RepoPaths, env: DiscoveryEnv, remote: str, *,
            drain_wait_s: float = PREPUSH_DRAIN_WAIT_S,
            budget_s: float = PREPUSH_SYNC_BUDGET_S) -> str:
    """The pre-push hook's detached step: drain queued commits (after a running drainer,
    bounded), then `api.sync.prepush` for `remote`. Never raises; returns the logged line."""
    sd = paths.state_dir
    try:
        end = time.monotonic() + drain_wait_s
        while _pid_alive(sd / drain_mod.LOCK) and time.monotonic() < end:
            time.sleep(0.1)
        if queue.pending(sd / queue.COMMITS) or queue.pending(sd / queue.REWRITES):
            drain(paths, env)
        fn = getattr(_optional("looma_git.api.sync"), "prepush", None)
        if fn is None:
            raise drain_mod.StepUnavailable("looma_git.api.sync.prepush is not available")
        out = fn(paths, remote, budget_s=budget_s)
        line = f"pre-push {remote}: {out.status}" + (f" ({out.message})" if out.message else "")
    except Exception as exc:  # the push has gone ahead; all that is left is the log line
        line = f"pre-push {remote}: error: {type(exc).__name__}: {exc}"
    state.log(sd, line)
    return line


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
