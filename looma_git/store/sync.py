"""`looma sync`'s round trip: fetch looma's refs, union-merge, push by CAS, then move local refs."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from looma_git.errors import ConflictError, LockError, NotInitializedError, RemoteError
from looma_git.gitrepo import RepoPaths
from looma_git.ledger import validate
from looma_git.ledger.ops import Op
from looma_git.ledger.state import Conflict
from looma_git.store import merge, remote
from looma_git.store.clone import read_clone_id, user_actor
from looma_git.store.locking import writer_lock
from looma_git.store.refnames import tracking_ref
from looma_git.store.repo import open_repo, ref_value, write_objects

MAX_RETRIES = 5


@dataclass
class SyncResult:
    """What one sync did; `ops_out` counts local op files the remote lacked before the push."""

    remote: str
    url: str
    ops_in: int = 0
    kept_in: int = 0
    ops_out: int = 0
    pushed: bool = False
    retries: int = 0
    fetched: bool = False
    rejected: list[validate.Rejected] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    new_conflicts: int = 0
    remote_dropped: int = 0
    ledger: str | None = None
    notes: str | None = None
    ops: dict[str, Op] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _set_ref(repo: object, ref: bytes, old: bytes | None, new: bytes | None,
             message: bytes) -> bool:
    """CAS one local ref; False when it moved under us."""
    from dulwich.file import FileLocked

    if new is None or new == old:
        return True
    try:
        return bool(repo.refs.set_if_equals(ref, old or remote.ZERO, new,  # type: ignore[attr-defined]
                                            message=message))
    except FileLocked:
        raise LockError(f"{ref.decode()} is locked by another git or looma process",
                        hint="retry; if nothing is running, remove the stale .lock file") \
            from None


def sync(paths: RepoPaths, remote_name: str, url: str, *, fetch: bool = True,
         push: bool = True, max_retries: int = MAX_RETRIES,
         before_push: Callable[[int], None] | None = None) -> SyncResult:
    """Fetch, merge and push looma's refs with `remote_name` at `url`.

    Local refs move only after the push succeeded (or when `push` is False), so a network
    failure at any point leaves them unchanged. A lost race (the remote moved between fetch
    and push) fetches and merges again, at most `max_retries` times; nothing is ever forced.
    `before_push(attempt)` runs just before each push (tests use it to race or cut the line).
    """
    read_clone_id(paths)
    t_ledger = tracking_ref(remote_name, "ledger").encode()
    t_notes = tracking_ref(remote_name, "notes").encode()
    actor = user_actor(paths)
    author = f"{actor.name} <{actor.email}>".encode()
    result = SyncResult(remote_name, url)
    git_dir = paths.common_dir
    with writer_lock(paths.state_dir), open_repo(paths) as repo:
        from looma_git.store.ledger_ref import LedgerStore

        before = {(c.target, c.ops) for c in LedgerStore(paths).state().conflicts}
        for attempt in range(max_retries + 1):
            local = ref_value(repo, remote.LEDGER)
            if local is None:
                raise NotInitializedError("refs/looma/ledger does not exist in this clone",
                                          hint="run `looma init`")
            local_notes = ref_value(repo, remote.NOTES)
            old_track = ref_value(repo, t_ledger)
            old_track_notes = ref_value(repo, t_notes)
            if fetch or attempt > 0:
                haves = [h for h in (local, local_notes, old_track, old_track_notes) if h]
                got = remote.fetch(repo, url, haves)
                result.fetched = True
            else:
                got = remote.RemoteRefs(old_track, old_track_notes)
            if got.ledger is not None:
                merge.check_commit(repo, got.ledger, "refs/looma/ledger")
                merge.check_ledger_tree(repo, got.ledger)
            if got.notes is not None:
                merge.check_commit(repo, got.notes, "refs/notes/looma")
            dropped = 0
            if old_track is not None and got.ledger is not None and old_track != got.ledger:
                now = merge.op_files(repo, got.ledger)
                dropped = sum(1 for p in merge.op_files(repo, old_track) if p not in now)

            lm = merge.merge_ledgers(repo, git_dir, local, got.ledger, author,
                                     f"looma: sync with {remote_name}\n")
            nm = merge.merge_notes(repo, git_dir, lm.state, local_notes, got.notes, author,
                                   f"looma: notes, sync with {remote_name}\n")
            write_objects(repo, [*lm.objects, *nm.objects])

            pushed = False
            if push:
                updates: dict[bytes, tuple[bytes | None, bytes]] = {}
                if lm.head != got.ledger:
                    updates[remote.LEDGER] = (got.ledger, lm.head)
                if nm.head is not None and nm.head != got.notes:
                    updates[remote.NOTES] = (got.notes, nm.head)
                if before_push is not None:
                    before_push(attempt)
                if updates:
                    outcome = remote.push(repo, url, updates)
                    if not outcome.ok:
                        if outcome.errors and not outcome.raced and attempt == max_retries:
                            raise RemoteError(
                                f"{url} refused the update: " + "; ".join(
                                    f"{k.decode()}: {v}" for k, v in outcome.errors.items()),
                                hint="nothing was changed locally")
                        result.retries += 1
                        continue
                    pushed = True

            msg = f"looma: sync with {remote_name}".encode()
            if not _set_ref(repo, remote.LEDGER, local, lm.head, msg):
                result.retries += 1
                continue  # the local ledger moved (git CLI?): merge again
            _set_ref(repo, remote.NOTES, local_notes, nm.head, msg)
            track = (lm.head, nm.head) if pushed else (got.ledger, got.notes)
            for ref, old, new in ((t_ledger, old_track, track[0]),
                                  (t_notes, old_track_notes, track[1])):
                _set_ref(repo, ref, old, new, msg)

            result.ops_in, result.kept_in, result.ops_out = lm.ops_in, lm.kept_in, lm.ops_out
            result.pushed = pushed
            result.rejected, result.remote_dropped = lm.rejected, dropped
            result.conflicts = list(lm.state.conflicts)
            result.new_conflicts = sum(1 for c in result.conflicts
                                       if (c.target, c.ops) not in before)
            result.ledger = lm.head.decode()
            result.notes = nm.head.decode() if nm.head else None
            result.ops = lm.ops
            if dropped:
                result.warnings.append(
                    f"the remote's ledger lost {dropped} op file(s) since the last sync "
                    "(force-pushed?); they stay here" + (" and were pushed back" if pushed
                                                           else ""))
            for r in lm.rejected:
                result.warnings.append(f"rejected {r.path}: {r.reason}")
            if lm.kept_in:
                result.warnings.append(f"{lm.kept_in} op file(s) of an unknown format version "
                                       "kept and skipped (a newer looma wrote them)")
            return result
    raise ConflictError(f"{url} kept changing during sync; gave up after {max_retries} retries",
                        hint="run `looma sync` again")


def fetched_unmerged(paths: RepoPaths, remotes: list[str]) -> list[str]:
    """The remotes whose fetched ledger (refs/looma/remotes/<remote>/ledger, e.g. from a plain
    `git fetch`) is not yet part of the local ledger."""
    from looma_git.store import git
    from looma_git.store.refnames import LEDGER_REF

    out = []
    for name in remotes:
        fetched = git.rev_parse_commit(tracking_ref(name, "ledger"), git_dir=paths.common_dir)
        if fetched is not None and not git.is_ancestor(paths.common_dir, fetched, LEDGER_REF):
            out.append(name)
    return out


def _log(state_dir: Path, message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with contextlib.suppress(OSError), (state_dir / "hooks.log").open("a") as fh:
        fh.write(f"looma-sync {stamp} {message}\n")


def sync_targets(paths: RepoPaths, targets: list[str]) -> bool:
    """The pre-push sync: each target remote in turn, one hooks.log line each; never raises.
    True when every target synced."""
    from looma_git.errors import LoomaError, UsageError
    from looma_git.store import share_config

    ok = True
    for name in targets:
        try:
            url = share_config.remote_url(paths, name)
            if url is None:
                raise UsageError(f"remote {name!r} has no URL")
            r = sync(paths, name, share_config.resolve_url(paths, url))
            _log(paths.state_dir, f"pre-push: synced {name}: {r.ops_in} in, {r.ops_out} out, "
                                  f"pushed={r.pushed}, retries={r.retries}")
        except LoomaError as exc:
            ok = False
            _log(paths.state_dir, f"pre-push: error: sync {name}: {exc.message}")
        except Exception as exc:
            ok = False
            _log(paths.state_dir, f"pre-push: error: sync {name}: {type(exc).__name__}: {exc}")
    return ok
