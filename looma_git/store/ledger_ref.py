"""refs/looma/ledger: reading op files from its tree and appending op batches by CAS."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from looma_git.errors import NotFoundError, UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.ledger.fold import Folder, _touched, effective_ops
from looma_git.ledger.ops import OP_TYPES, Actor, Op, OpDraft, build_op, op_path
from looma_git.ledger.projections import FORMAT_FILE, memory_bytes, workitem_bytes
from looma_git.ledger.state import LedgerState
from looma_git.store import fold_cache, fold_delta, gcpause, ledger_read, notes_delta, ops_cache
from looma_git.store.clone import SYSTEM_ACTOR, read_clone_id, user_actor
from looma_git.store.ledger_read import _PARSED, ReadResult, read_tree  # tests reset _PARSED here
from looma_git.store.ledger_tree import (
    DIR_MODE,
    FILE_MODE,
    LedgerTree,
    serialize,
)
from looma_git.store.ledger_tree import (
    entry as tree_entry,
)
from looma_git.store.locking import cas_update
from looma_git.store.notes import Touched
from looma_git.store.objects import RawObject, raw_object
from looma_git.store.refnames import LEDGER_REF_B
from looma_git.store.repo import (
    make_commit,
    open_repo,
    ref_value,
    write_objects,
)

LEDGER_REF = LEDGER_REF_B
_FORMAT = raw_object(b"blob", FORMAT_FILE)
# Payload keys holding ids, shas or op ids: never redacted (they are not free text).
_ID_KEYS = {"prev", "workitem", "from", "patch_id", "old", "new", "superseded_by", "by",
            "kind", "lifecycle", "status", "band", "agent", "session", "event", "hash", "id"}

_FOLDS: dict[str, tuple[bytes, Folder, ReadResult]] = {}  # common dir -> last fold
_ENTRIES: dict[str, fold_cache.Entry] = {}  # common dir -> the fold-cache entry of _FOLDS
_TREES: dict[str, LedgerTree] = {}  # common dir -> tree of the last commit this process wrote


def release_fold(paths: RepoPaths) -> None:
    """Forget this process's fold of the repository's ledger and its parsed op files (the
    state dir's fold and ops caches keep them): a command's last step frees ~150 MB at 5,000
    sessions before it embeds. The next read here loads the fold cache again."""
    key = str(paths.common_dir)
    _FOLDS.pop(key, None)
    _ENTRIES.pop(key, None)
    _TREES.pop(key, None)
    _PARSED.clear()  # keyed by blob, not by repository: one command, one repository


# Free text (and what it nests: evidence quotes, alias lists) passes the stricter shared gate:
# after redaction, a value still holding a key-like token is cut at that token.
_FREE_TEXT_KEYS = {"text", "quote", "quotes", "summary", "title", "aliases", "alias", "note",
                   "reason", "label", "message", "description", "name", "evidence", "rationale",
                   "goal", "detail", "body", "content"}


def _redact_value(value: Any, key: str | None = None, strict: bool = False,
                  seen: dict[tuple[bool, str], str] | None = None) -> Any:
    """The single choke point for text written to git: every string of an op payload and
    rationale (projections and notes are rendered from sealed ops) goes through here; `seen`:
    what this batch redacted already (pure: a pass's batch repeats its texts thousands of times)."""
    if isinstance(value, str):
        if key in _ID_KEYS:
            return value
        gate = strict or key in _FREE_TEXT_KEYS
        if seen is not None and (hit := seen.get((gate, value))) is not None:
            return hit
        from looma_git.redact import redact_shared, redact_text

        out = redact_shared(value)[0] if gate else redact_text(value)
        if seen is not None:
            seen[(gate, value)] = out
        return out
    if isinstance(value, dict):
        return {k: _redact_value(v, k, strict or key in _FREE_TEXT_KEYS, seen)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_value(v, key, strict, seen) for v in value]
    return value


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class LedgerStore:
    """Reads and appends the op files of refs/looma/ledger; never touches HEAD or the index."""

    def __init__(self, paths: RepoPaths) -> None:
        self.paths = paths
        self.notes_touched: Touched | None = None  # of the last append (store/notes.py)

    # ---------------------------------------------------------------- reading
    def read(self) -> ReadResult:
        """(head, valid ops, kept unknown-version files, rejected files with reasons)."""
        with open_repo(self.paths) as repo:
            head = ref_value(repo, LEDGER_REF)
            return read_tree(repo, head)

    def folded(self) -> tuple[ReadResult, Folder]:
        """The read result and the fold at the current head: from this process's memory or
        the state dir's fold cache when they hold that head (no git object is read then),
        else folded (incrementally when it can be, see `store/ledger_read.py`)."""
        from looma_git.store import git

        found = git.resolve_ref(self.paths.common_dir, LEDGER_REF.decode())
        head = found.encode() if found else None
        hit = self._cached(head)
        if hit is not None:
            return hit
        with open_repo(self.paths) as repo:
            return self._folded(repo, ref_value(repo, LEDGER_REF))

    def state(self) -> LedgerState:
        """The folded state at the current head (the cheap call every pass may make)."""
        return self.folded()[1].state

    def _cached(self, head: bytes | None) -> tuple[ReadResult, Folder] | None:
        """The fold at `head` from memory or the fold cache, without reading the ref."""
        if head is None:
            return None
        key = str(self.paths.common_dir)
        cached = _FOLDS.get(key)
        if cached is not None and cached[0] == head:
            return cached[2], cached[1]
        if fold_cache.peek_head(self.paths.state_dir) != head:
            return None
        entry = fold_cache.load(self.paths.state_dir)
        return self._use(entry) if entry is not None and entry.head == head else None

    def _use(self, entry: fold_cache.Entry, result: ReadResult | None = None
             ) -> tuple[ReadResult, Folder]:
        """Make `entry` this process's fold of its head."""
        key = str(self.paths.common_dir)
        paths, head = self.paths, entry.head
        if result is None:
            def load_ops() -> list[Op]:
                with open_repo(paths) as repo:
                    return read_tree(repo, head).ops

            result = ReadResult(head, None, entry.kept, entry.rejected, loader=load_ops,
                                max_lamport=entry.max_lamport)
        folder = entry.folder
        if entry.projections_match:
            folder.dirty_workitems, folder.dirty_memories = set(), set()
            folder.full = False  # type: ignore[attr-defined]
        else:  # the head's projections were not written from this fold: render all once
            folder.dirty_workitems = set(folder.state.workitems)
            folder.dirty_memories = set(folder.state.memories)
            folder.full = True  # type: ignore[attr-defined]
        if entry.tree is not None and entry.tree.commit == head:
            _TREES[key] = entry.tree
        _FOLDS[key] = (head, folder, result)
        _ENTRIES[key] = entry
        return result, folder

    def _folded(self, repo: Any, head: bytes | None) -> tuple[ReadResult, Folder]:
        if head is None:
            empty = Folder()
            empty.finish()
            empty.full = True  # type: ignore[attr-defined]
            return ReadResult(head=None), empty
        hit = self._cached(head)
        if hit is not None:
            return hit
        sd = self.paths.state_dir
        entry = fold_cache.load(sd)
        if entry is not None:
            entry = ledger_read.advance(repo, entry, head)
        result: ReadResult | None = None
        if entry is None:
            entry, result = ledger_read.full_entry(repo, head)
        fold_cache.save(sd, entry)
        return self._use(entry, result)

    # ---------------------------------------------------------------- writing
    def append(self, drafts: list[OpDraft], actor_kind: str = "user",
               actor_name: str | None = None) -> list[Op]:
        """Seal drafts into ops and commit them (plus regenerated projections) as one batch.

        `actor_name` overrides the recorded name of a user actor (e.g. the MCP client acting
        for the git user, whose email is kept so the op stays attributable)."""
        if not drafts:
            return []
        if actor_kind not in ("user", "system"):
            raise UsageError(f"actor must be user or system, not {actor_kind!r}")
        clone = read_clone_id(self.paths)
        actor = user_actor(self.paths) if actor_kind == "user" else SYSTEM_ACTOR
        if actor_name and actor_kind == "user":
            actor = Actor(kind="user", name=actor_name, email=actor.email)
        for d in drafts:
            if d.op not in OP_TYPES:
                raise UsageError(f"unknown op type {d.op!r}",
                                 hint="one of: " + ", ".join(OP_TYPES))
        written: list[Op] = []
        # (blob id, op, fields) of the op files written: the parsed-op cache learns them, so
        # the next process reading the ledger does not parse what this one just sealed
        self._cache_pending: list[tuple[bytes, Op, dict[str, Any]]] = []
        key = str(self.paths.common_dir)
        # Sealing, rendering and folding a batch makes ~10 containers per op, most of them kept:
        # collections walked the caller's heap (a cold pass's, at its 2,087 ops) again and again.
        with open_repo(self.paths) as repo, gcpause.paused():
            def build(old: bytes | None) -> bytes:
                written.clear()
                self._cache_pending.clear()
                result, folder = self._folded(repo, old)
                base = _ENTRIES.pop(key, None)
                if base is not None and base.head != old:
                    base = None
                # whether the stored fold at `old` holds its tree (the commit patches it)
                had_tree = base is not None and base.tree is not None and base.tree.commit == old
                if old is not None and _FOLDS.get(key, (None,))[0] == old:
                    del _FOLDS[key]  # we are about to mutate it
                ops = self._seal(drafts, result, folder, actor, clone)
                written.extend(ops)
                if any(o.op == "undo" for o in ops):
                    base = None  # undo changes what is effective: the next reader folds anew
                    folder = Folder()
                    folder.apply(effective_ops([*result.ops, *ops]))
                    folder.dirty_workitems = set(folder.state.workitems)
                    folder.dirty_memories = set(folder.state.memories)
                    folder.full = True  # type: ignore[attr-defined]
                else:
                    folder.apply(ops)
                folder.finish()
                dirty = None if getattr(folder, "full", False) or base is None \
                    else set(folder.dirty_workitems)  # what the commit re-renders
                self._pending_touch = (old, notes_delta.touched_commits(ops, folder.state, dirty))
                commit_id, objects, tree = self._commit(repo, old, ops, folder, actor)
                write_objects(repo, objects)
                after = result.extended(commit_id, ops)
                self._pending = (commit_id, folder, after)
                self._pending_tree = tree
                self._pending_entry = fold_delta.next_entry(base, commit_id, ops, folder, tree)
                self._pending_step = None if self._pending_entry is None else (
                    old, fold_delta.step_of(ops, tree, self._pending_entry, self._changes,
                                            had_tree))
                return commit_id

            msg = f"looma: {len(drafts)} op(s) by {actor.kind}"
            _, new = cas_update(repo, LEDGER_REF, build, message=msg.encode())
            if new is not None and self._pending[0] == new:
                parent, shas = self._pending_touch
                self.notes_touched = Touched(parent.decode() if parent else None, new.decode(),
                                             shas)
                _FOLDS[key] = self._pending
                _TREES[key] = self._pending_tree
                if self._pending_entry is not None and self._pending_step is not None:
                    _ENTRIES[key] = self._pending_entry
                    parent, step = self._pending_step
                    fold_delta.save_step(self.paths.state_dir, parent, self._pending_entry, step)
                disk = ops_cache.for_state_dir(self.paths.state_dir)
                for blob_id, op, fields in self._cache_pending:
                    disk.put(blob_id, op, fields)
                disk.flush()
        return list(written)

    def _seal(self, drafts: list[OpDraft], result: ReadResult, folder: Folder, actor: Actor,
              clone: str) -> list[Op]:
        lamport = max(result.max_lamport, folder.state.head_lamport)
        known: dict[str, Op] | None = None  # built only when the batch holds an undo
        ts = utc_now()
        out: list[Op] = []
        heads_extra: dict[str, str] = {}
        seen: dict[tuple[bool, str], str] = {}  # (gate, text) -> redacted, for this batch
        for d in drafts:
            lamport += 1
            payload = dict(_redact_value(d.payload, seen=seen))
            if d.op == "undo":
                if known is None:
                    known = {o.id: o for o in [*result.ops, *out]}
                target = known.get(d.inverse_of or "")
                if target is None:
                    raise NotFoundError(f"undo: no op {d.inverse_of!r} in the ledger")
                if actor.kind == "system" and target.is_user:
                    raise UsageError("a system op cannot undo a user op")
            if actor.kind == "user":
                tmp = Op(v=0, id="", lamport=0, ts="", actor=actor, clone="", op=d.op,
                         target=_target(d), payload=payload)
                touched = _touched(tmp)
                prev = set(folder.prev_for(touched))
                prev |= {heads_extra[t] for t in touched if t in heads_extra}
                payload["prev"] = sorted(prev)
            op = build_op(OpDraft(d.op, {"type": d.target.get("type"), "id": d.target.get("id")},
                                  payload,
                                  _redact_value(d.rationale, "rationale", seen=seen) if d.rationale
                                  else None,
                                  d.inverse_of),
                          lamport=lamport, ts=ts, actor=actor, clone=clone)
            if actor.kind == "user":
                for t in _touched(op):
                    heads_extra[t] = op.id
            if known is not None:
                known[op.id] = op
            out.append(op)
        return out

    def _commit(self, repo: Any, parent: bytes | None, ops: list[Op], folder: Folder,
                actor: Actor) -> tuple[bytes, list[RawObject], LedgerTree]:
        """The new ledger commit: only touched ops/<xx> subtrees and dirty projections change."""
        from looma_git.ledger import yamlio

        key = str(self.paths.common_dir)
        tree = _TREES.pop(key, None)
        if tree is None or tree.commit != parent:
            tree = LedgerTree.load(repo, parent)
        objects: list[RawObject] = []

        def add(type_name: bytes, raw: bytes) -> bytes:
            obj = raw_object(type_name, raw)
            objects.append(obj)
            return obj.id

        # ops/: existing files kept byte-for-byte (also unknown-version and rejected ones)
        by_prefix: dict[bytes, list[Op]] = {}
        for op in ops:
            by_prefix.setdefault(op.id[:2].encode(), []).append(op)
        # what this commit changes in the tree, for the fold cache's step (store/fold_delta.py)
        self._changes = fold_delta.Changes(sorted(by_prefix))
        for prefix, group in sorted(by_prefix.items()):
            sub = tree.ops_sub(repo, prefix)
            for op in group:
                name = f"{op.id}.yaml".encode()
                fields = op.fields()
                blob_id = add(b"blob", yamlio.dump(fields))
                sub[name] = tree_entry(FILE_MODE, name, blob_id)
                self._cache_pending.append((blob_id, op, fields))
            raw = serialize(sub, only_files=b"ops/" + prefix in tree.plain)
            tree.ops[prefix] = tree_entry(DIR_MODE, prefix, add(b"tree", raw))
        root: dict[bytes, bytes] = {
            b"format.yaml": tree_entry(FILE_MODE, b"format.yaml", _FORMAT.id),
            b"ops": tree_entry(DIR_MODE, b"ops", add(b"tree", serialize(tree.ops)))}
        if tree.root.get(b"format.yaml") != root[b"format.yaml"]:
            objects.append(_FORMAT)

        full = getattr(folder, "full", False)
        st = folder.state
        for name, items, dirty, render in (
            (b"workitems", st.workitems, folder.dirty_workitems, workitem_bytes),
            (b"memories", st.memories, folder.dirty_memories, memory_bytes),
        ):
            old = tree.projections.get(name, {})
            entries = {} if full else old
            changed: dict[bytes, bytes] = {}  # what the fold cache's step records
            for oid in (items if full else dirty):
                if oid in items:
                    fname = f"{oid}.yaml".encode()
                    blob = raw_object(b"blob", render(items[oid]))  # type: ignore[arg-type]
                    line = tree_entry(FILE_MODE, fname, blob.id)
                    if old.get(fname) != line:
                        objects.append(blob)  # an unchanged blob is already in the old tree
                        changed[fname] = line
                    entries[fname] = line
            tree.projections[name] = entries
            if full:
                tree.plain.add(name)
                self._changes.whole.add(name)
                changed = entries
            if changed or full:
                self._changes.projections[name] = changed
            if entries:
                sub_tree = raw_object(b"tree", serialize(entries, only_files=name in tree.plain))
                root[name] = tree_entry(DIR_MODE, name, sub_tree.id)
                if root[name] != tree.root.get(name):
                    objects.append(sub_tree)
        folder.dirty_workitems, folder.dirty_memories = set(), set()
        folder.full = False  # type: ignore[attr-defined]

        root_id = add(b"tree", serialize(root))
        tree.root = root
        author = f"{actor.name} <{actor.email}>".encode()
        kinds = sorted({o.op for o in ops})
        commit = make_commit(root_id, [parent] if parent else [],
                             f"looma: {len(ops)} op(s): {', '.join(kinds)}\n", author)
        objects.append(RawObject(b"commit", commit.id, commit.as_raw_string()))
        tree.commit = commit.id
        return commit.id, objects, tree


def _target(d: OpDraft) -> Any:
    from looma_git.ledger.ops import OpTarget

    return OpTarget(type=str(d.target.get("type")), id=d.target.get("id"))


def op_file_path(op: Op) -> str:
    return op_path(op.id)


def _now() -> float:
    return time.time()
