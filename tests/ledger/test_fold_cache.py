"""The persistent fold (store/fold_cache.py): whatever way a process gets the fold at a head
(the cache, ops folded on top of it, a full fold), it is the state a full fold gives."""

from __future__ import annotations

import shutil
from pathlib import Path

from looma_git.api import ledger as api
from looma_git.gitrepo import RepoPaths
from looma_git.ledger import fold as fold_mod
from looma_git.ledger.ops import OpDraft
from looma_git.ledger.projections import workitem_bytes
from looma_git.store import fold_cache, fold_delta, ledger_read, ledger_ref, ops_cache
from looma_git.store.ledger_ref import LedgerStore
from tests.helpers import git
from tests.store.ledger_helpers import create, init, inject


def _fresh() -> None:
    """What a fresh process starts with: nothing parsed, folded or cached in memory."""
    ledger_ref._PARSED.clear()
    ledger_ref._FOLDS.clear()
    ledger_ref._ENTRIES.clear()
    ledger_ref._TREES.clear()
    ops_cache._CACHES.clear()


def _full(paths: RepoPaths):  # the reference: every op file read and folded here
    _fresh()
    return fold_mod.fold(LedgerStore(paths).read().ops)


def _same(paths: RepoPaths) -> None:
    _fresh()
    got = api.load_state(paths)
    want = _full(paths)
    assert got.workitems == want.workitems and got.memories == want.memories
    assert got.links == want.links and got.rewrites == want.rewrites
    assert got.constraints == want.constraints and got.conflicts == want.conflicts
    assert got.head_lamport == want.head_lamport and got.observations == want.observations
    assert {w: workitem_bytes(x) for w, x in got.workitems.items()} == \
        {w: workitem_bytes(x) for w, x in want.workitems.items()}


def _cache_head(paths: RepoPaths) -> str | None:
    head = fold_cache.peek_head(paths.state_dir)
    return head.decode() if head else None


def _rename(paths: RepoPaths, wid: str, title: str) -> None:
    api.append(paths, [OpDraft("workitem.rename", {"type": "workitem", "id": wid},
                               {"title": title})], actor="user")


def test_each_append_leaves_the_fold_of_its_head(repo: Path) -> None:
    paths = init(repo)
    wid = create(paths, "Add rate limiting", files=["api/limit.py"])
    create(paths, "Fix retries")
    _rename(paths, wid, "Rate limiting for the API")
    assert _cache_head(paths) == git(repo, "rev-parse", "refs/looma/ledger")
    _same(paths)
    # a fresh process took the cached fold: no op file was parsed for it
    _fresh()
    LedgerStore(paths).state()
    assert not ledger_ref._PARSED


def test_ops_added_after_the_cached_head_fold_on_top(repo: Path, tmp_path: Path) -> None:
    paths = init(repo)
    wid = create(paths, "Add pagination")
    saved = tmp_path / "saved"
    shutil.copytree(paths.state_dir, saved)
    old_head = _cache_head(paths)
    create(paths, "Add caching")
    _rename(paths, wid, "Cursor pagination")
    # the cache knows only the older head (as if the writer of the new ops left none)
    for name in (fold_cache.FILE_NAME, fold_delta.FILE_NAME):
        (paths.state_dir / name).unlink(missing_ok=True)
        if (saved / name).exists():
            shutil.copy(saved / name, paths.state_dir / name)
    _fresh()
    store = LedgerStore(paths)
    with ledger_ref.open_repo(paths) as r:
        entry = fold_cache.load(paths.state_dir)
        assert entry is not None and entry.head.decode() == old_head
        moved = ledger_read.advance(r, entry, ledger_ref.ref_value(r, ledger_ref.LEDGER_REF))
        assert moved is not None  # linear history: folded on top, not from scratch
    assert store.state().workitems[wid].title == "Cursor pagination"
    _same(paths)


def test_an_older_sorting_op_from_a_teammate_refolds(repo: Path, tmp_path: Path) -> None:
    """A synced op that sorts before the folded ones cannot fold on top: a full fold runs and
    the result is the same as without any cache. So does an undo."""
    paths = init(repo)
    wid = create(paths, "Add webhooks")
    _rename(paths, wid, "Webhooks v2")
    head = git(repo, "rev-parse", "refs/looma/ledger")
    # a teammate's rename with a low lamport, committed straight into the ref
    from looma_git.ledger import yamlio
    from looma_git.ledger.ops import Actor, build_op

    early = build_op(OpDraft("workitem.rename", {"type": "workitem", "id": wid},
                             {"title": "Webhooks (teammate)", "prev": []}),
                     lamport=1, ts="2026-01-01T00:00:00Z",
                     actor=Actor(kind="user", name="T", email="t@example.com"), clone="c_other")
    inject(repo, {f"ops/{early.id[:2]}/{early.id}.yaml": yamlio.dump(early.fields())}, tmp_path)
    assert git(repo, "rev-parse", "refs/looma/ledger") != head
    _fresh()
    with ledger_ref.open_repo(paths) as r:
        entry = fold_cache.load(paths.state_dir)
        assert entry is not None
        assert ledger_read.advance(r, entry, ledger_ref.ref_value(r, ledger_ref.LEDGER_REF)) \
            is None
    _same(paths)
    last = api.log(paths, limit=1)[0]
    api.append(paths, [OpDraft("undo", {"type": "op", "id": last.id}, inverse_of=last.id)],
               actor="user")
    _same(paths)


def test_a_damaged_or_foreign_cache_is_ignored(repo: Path) -> None:
    paths = init(repo)
    create(paths, "Add soft deletes")
    path = paths.state_dir / fold_cache.FILE_NAME
    body = path.read_bytes()
    head, rest = body.split(b"\n", 1)
    for bad in (head + b"\n" + rest[: len(rest) // 2],  # cut short
                head.replace(fold_cache.fingerprint(), b"0" * 32) + b"\n" + rest,  # other code
                b"looma-fold 1 x y\n", b"", b"\x00" * 64):
        path.write_bytes(bad)
        _same(paths)
    # the head in the header must be the entry's
    path.write_bytes(head[:-40] + b"f" * 40 + b"\n" + rest)
    _fresh()
    assert fold_cache.load(paths.state_dir) is None


def test_append_renders_only_what_its_ops_change(repo: Path, monkeypatch) -> None:
    """With the cached fold of the head it writes on, an append re-renders only the
    projections its ops touch (the others keep their blob ids), and `looma verify` agrees."""
    paths = init(repo)
    a = create(paths, "Add localization")
    b = create(paths, "Add compression")
    before = git(repo, "ls-tree", "-r", "refs/looma/ledger", "workitems/")
    _fresh()
    rendered: list[str] = []

    def counting(wi):  # type: ignore[no-untyped-def]
        rendered.append(wi.id)
        return workitem_bytes(wi)

    monkeypatch.setattr(ledger_ref, "workitem_bytes", counting)
    _rename(paths, a, "Localization of the UI")
    assert rendered == [a]
    after = git(repo, "ls-tree", "-r", "refs/looma/ledger", "workitems/")
    changed = set(after.splitlines()) - set(before.splitlines())
    assert len(changed) == 1 and a in next(iter(changed)) and b in before
    assert api.verify(paths).ok
    assert "error" not in git(repo, "fsck", "--no-progress").lower()
    _same(paths)


def _steps(paths: RepoPaths) -> int:
    base = fold_cache.base_head(paths.state_dir)
    return len(fold_delta._records(paths.state_dir, base)) if base else 0


def test_appends_are_steps_replayed_to_the_fold_of_each_head(repo: Path, tmp_path: Path,
                                                             monkeypatch) -> None:
    """An append records a step (its ops, its tree changes) instead of re-saving the whole
    fold; a fresh process replays them and gets the full fold's state, projections and tree,
    over a random mix of ops, across compactions; a step cut short or left beside a replaced
    entry is never replayed."""
    import random

    from tests.store.test_notes import fast_commits, link

    def seen(i: int) -> dict[str, object]:  # a session's observation: the fold derives
        return {"observe": {"sessions": [{  # files, title, summary, confidence from these
            "agent": "claude-code", "id": f"s{i}", "first": f"2026-01-0{1 + i % 9}T10:00:00Z",
            "last": f"2026-01-0{1 + i % 9}T11:00:00Z", "files": {f"f{i}.txt": 2},
            "prompt": f"please add feature number {i} to the search page"}]}}

    monkeypatch.setattr(fold_delta, "MAX_STEPS", 3)
    paths = init(repo)
    shas = fast_commits(repo, 6)
    rng = random.Random(7)
    wids = [create(paths, "Add search", files=["search.py"], **seen(0))]
    seen_steps = set()
    for i in range(1, 13):
        # a user rename of a derived title and a user merge: what a fold in batches once did
        # differently from the full fold (tests/ledger/test_fold.py)
        pick = rng.choice(("create", "link", "link", "update", "rename", "merge"))
        if pick == "rename":
            _rename(paths, rng.choice(wids), f"Renamed {i}")
        elif pick == "merge" and len(wids) > 1:
            a, b = rng.sample(wids, 2)
            api.append(paths, [OpDraft("workitem.merge", {"type": "workitem", "id": b},
                                       {"from": [a]})], actor="user")
        elif pick in ("create", "merge"):
            wids.append(create(paths, f"Effort {i}", files=[f"f{i}.txt"], **seen(i)))
        elif pick == "link":  # a commit's subject and time are its own, whoever links it
            n = rng.randrange(len(shas))
            link(paths, [shas[n]], rng.choice(wids), files=["search.py"],
                 subject=f"add search filter {n}", ts=f"2026-01-0{n + 1}T12:00:00Z")
        else:
            api.append(paths, [OpDraft("workitem.update", {"type": "workitem",
                                                             "id": rng.choice(wids)},
                                       seen(i))], actor="system")
        seen_steps.add(_steps(paths))
        assert _cache_head(paths) == git(repo, "rev-parse", "refs/looma/ledger")
        _same(paths)
        _fresh()  # the next append starts from the stored fold, as a drain does
    assert seen_steps >= {1, 2, 3} and max(seen_steps) <= 3  # steps, then a compaction
    # each append extended the tree the stored fold holds: the next commit is git's own tree
    assert api.verify(paths).ok
    # a batch of many ops (a pass, a cold ingest) saves the whole entry: replaying it would
    # cost every later reader its fold
    monkeypatch.setattr(fold_delta, "MAX_OPS", 2)
    link(paths, shas[:3], wids[0], files=["z.py"])
    assert _steps(paths) == 0 and _cache_head(paths) == git(repo, "rev-parse", "refs/looma/ledger")
    _same(paths)
    monkeypatch.setattr(fold_delta, "MAX_OPS", 64)
    # a step whose ops raise in the fold leaves no half-folded entry: the reader folds anew
    link(paths, [shas[2]], wids[0], files=["w.py"])
    assert _steps(paths) == 1
    with monkeypatch.context() as m:
        m.setattr(fold_delta, "_apply", lambda *a: 1 / 0)
        _fresh()
        assert fold_cache.load(paths.state_dir) is None
    _same(paths)
    # a step cut short: the replay stops before it, the reader folds the rest as before
    link(paths, [shas[0]], wids[0], files=["x.py"])
    delta = paths.state_dir / fold_delta.FILE_NAME
    assert _steps(paths) >= 1
    delta.write_bytes(delta.read_bytes()[:-5])
    _same(paths)
    # steps left beside an entry another process replaced: never replayed on the new entry
    link(paths, [shas[1]], wids[0], files=["y.py"])
    kept = delta.read_bytes()
    _fresh()
    with ledger_ref.open_repo(paths) as r:
        entry, _ = ledger_read.full_entry(r, ledger_ref.ref_value(r, ledger_ref.LEDGER_REF))
    fold_cache.save(paths.state_dir, entry)
    delta.write_bytes(kept)
    assert fold_cache.peek_head(paths.state_dir) == entry.head
    _same(paths)
