"""Library surface for team sharing: share enable/disable/status, sync, conflicts."""

from __future__ import annotations

from typing import Any

from looma_git.errors import UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.wire.cli import (
    ConflictOpOut,
    ConflictOut,
    ConflictsOut,
    RejectedOut,
    ShareChangeOut,
    SharedRemoteOut,
    ShareStatusOut,
    SyncOut,
)


def share_enable(paths: RepoPaths, remote: str = "origin", *, curation_url: str | None = None,
                 curation_name: str | None = None, git_push: bool = False) -> ShareChangeOut:
    """Opt `remote` (or a separate curation remote standing in for it) into sharing."""
    from looma_git.store import share_config
    from looma_git.store.clone import read_clone_id

    read_clone_id(paths)
    ch = share_config.enable(paths, remote, curation_url=curation_url,
                             curation_name=curation_name, git_push=git_push)
    if git_push:
        from looma_git.store.bootstrap import ensure_notes_ref

        ensure_notes_ref(paths, message="looma: notes")
    return ShareChangeOut(remote=ch.remote, url=ch.url, added=list(ch.added))


def share_disable(paths: RepoPaths, remote: str = "origin") -> ShareChangeOut:
    """Remove exactly the config `share_enable` added for `remote`."""
    from looma_git.store import share_config

    ch = share_config.disable(paths, remote)
    return ShareChangeOut(remote=ch.remote, url=ch.url, removed=list(ch.removed))


def share_status(paths: RepoPaths) -> ShareStatusOut:
    """The sharing configuration as looma reads it."""
    from looma_git.store import share_config

    st = share_config.read_settings(paths)
    return ShareStatusOut(
        enabled=[SharedRemoteOut(remote=r, url=share_config.remote_url(paths, r))
                 for r in st.enabled],
        curation=dict(st.curation))


def resolve_remote(paths: RepoPaths, remote: str | None) -> tuple[str, str]:
    """(name, url) of the sharing remote to sync: the one named, or the only one enabled."""
    from looma_git.store import share_config

    st = share_config.read_settings(paths)
    if remote is None:
        if not st.enabled:
            raise UsageError("sharing is not enabled in this clone",
                             hint="run `looma share enable [REMOTE]` first")
        if len(st.enabled) > 1:
            raise UsageError(f"several remotes share looma's refs: {', '.join(st.enabled)}",
                             hint="name one: `looma sync REMOTE`")
        remote = st.enabled[0]
    targets = st.targets_for(remote)
    if not targets:
        raise UsageError(f"sharing is not enabled for remote {remote!r}",
                         hint=f"run `looma share enable {remote}` first")
    name = targets[0]
    url = share_config.remote_url(paths, name)
    if url is None:
        raise UsageError(f"remote {name!r} has no URL", hint=f"git remote add {name} URL")
    return name, share_config.resolve_url(paths, url)


def _conflict_out(c: Any, ops: dict[str, Any]) -> ConflictOut:
    out = []
    for oid in c.ops:
        op = ops.get(oid)
        if op is None:
            continue
        payload = {k: v for k, v in op.payload.items() if k != "prev"}
        out.append(ConflictOpOut(id=op.id, op=op.op, lamport=op.lamport,
                                 actor=f"{op.actor.name} <{op.actor.email}>", clone=op.clone,
                                 ts=op.ts, payload=payload))
    return ConflictOut(target=c.target, kind=c.kind, winner=c.winner, ops=out)


def sync(paths: RepoPaths, remote: str | None = None, *, fetch: bool = True,
         push: bool = True) -> SyncOut:
    """Fetch, union-merge and push looma's refs with a sharing remote (see store/sync.py)."""
    from looma_git.store import sync as store_sync

    name, url = resolve_remote(paths, remote)
    r = store_sync.sync(paths, name, url, fetch=fetch, push=push)
    return SyncOut(
        remote=r.remote, url=r.url, ops_in=r.ops_in, ops_out=r.ops_out, kept_in=r.kept_in,
        conflicts=[_conflict_out(c, r.ops) for c in r.conflicts], new_conflicts=r.new_conflicts,
        pushed=r.pushed, fetched=r.fetched, retries=r.retries,
        rejected=[RejectedOut(path=x.path, op_id=x.op_id, reason=x.reason) for x in r.rejected],
        remote_dropped=r.remote_dropped, ledger=r.ledger, notes=r.notes, warnings=r.warnings)


def merge_fetched(paths: RepoPaths) -> list[SyncOut]:
    """Merge what a plain `git fetch` brought into refs/looma/remotes/<remote>/* for each
    sharing remote (no network, no push), so a teammate's ops count without `looma sync`."""
    from looma_git.store.share_config import read_settings
    from looma_git.store.sync import fetched_unmerged

    return [sync(paths, remote, fetch=False, push=False)
            for remote in fetched_unmerged(paths, list(read_settings(paths).enabled))]


def conflicts(paths: RepoPaths) -> ConflictsOut:
    """Concurrent conflicting user intents in the ledger, each resolved by (lamport, id)."""
    from looma_git.store.ledger_ref import LedgerStore

    result, folder = LedgerStore(paths).folded()
    ops = {o.id: o for o in result.ops}
    return ConflictsOut(conflicts=[_conflict_out(c, ops) for c in folder.state.conflicts])
