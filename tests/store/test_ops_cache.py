"""The persistent parsed-op cache: same ops as a parse, local only, damage ignored and rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

from looma_git.api import ledger as api
from looma_git.gitrepo import RepoPaths
from looma_git.ledger import validate, yamlio
from looma_git.ledger.ops import Op, OpDraft, build_op
from looma_git.store import ledger_ref, ops_cache
from looma_git.store.clone import SYSTEM_ACTOR
from looma_git.store.ledger_ref import LedgerStore, ReadResult
from tests.helpers import git
from tests.store.ledger_helpers import create, init, inject

NASTY = ["no", "on", "yes", "0123", "1e3", "2026-11-29", "null", "~", "", "a: b\n#c", "é \u2028 ☃"]


def _forget_process_state() -> None:
    """What a fresh process starts with: nothing parsed, folded or cached in memory."""
    ledger_ref._PARSED.clear()
    ledger_ref._FOLDS.clear()
    ledger_ref._TREES.clear()
    ops_cache._CACHES.clear()


def _fresh_read(paths: RepoPaths) -> ReadResult:
    _forget_process_state()
    return LedgerStore(paths).read()


def _cache_file(paths: RepoPaths) -> Path:
    return paths.state_dir / ops_cache.FILE_NAME


def _cache_lines(paths: RepoPaths) -> dict[str, dict]:
    out = {}
    for line in _cache_file(paths).read_bytes().decode().split("\n"):  # not splitlines: \u2028
        if not line:
            continue
        blob, _, body = line.partition(" ")
        out[blob] = json.loads(body)
    return out


def _op_blobs(repo: Path) -> dict[str, str]:
    """blob id -> path of every op file, read with the git binary."""
    out = git(repo, "ls-tree", "-r", "refs/looma/ledger", "ops/")
    return {line.split()[2]: line.split("\t")[1] for line in out.splitlines()}


def _parsed_by_git(repo: Path) -> dict[str, Op]:
    """Every op file parsed straight from `git cat-file` (no cache involved)."""
    out: dict[str, Op] = {}
    for blob, path in _op_blobs(repo).items():
        data = git(repo, "cat-file", "blob", blob).encode() + b"\n"
        parsed = validate.parse_op_file(path, blob, data)
        if isinstance(parsed, Op):
            out[parsed.id] = parsed
    return out


def _dumps(ops: list[Op]) -> list[str]:
    # JSON with types visible (1 vs 1.0 vs true), so equal-but-differently-typed values differ
    return sorted(json.dumps(o.fields(), sort_keys=True) for o in ops)


def _write_some_ops(paths: RepoPaths) -> None:
    wid = create(paths, "Implement OAuth Login", aliases=NASTY, confidence=0.5)
    api.append(paths, [OpDraft("workitem.update", {"type": "workitem", "id": wid},
                               {"summary": "line one\nline two: \"quoted\"", "confidence": 1.0,
                                "files": [], "extra": {"n": 3, "f": 2.5e-7, "b": True,
                                                       "none": None}})], actor="user")
    api.append(paths, [OpDraft("commit.link", {"type": "commit", "id": "a" * 40},
                               {"workitem": wid, "confidence": 0.9, "by": "hook"})],
               actor="system")


def test_append_fills_the_cache_and_a_fresh_read_equals_a_parse(repo: Path) -> None:
    paths = init(repo)
    _write_some_ops(paths)
    blobs = _op_blobs(repo)
    lines = _cache_lines(paths)
    assert set(lines) == set(blobs)  # every op file this clone wrote, keyed by its blob id
    cached = _fresh_read(paths)
    by_git = _parsed_by_git(repo)
    assert _dumps(cached.ops) == _dumps(list(by_git.values()))
    _cache_file(paths).unlink()
    parsed = _fresh_read(paths)
    assert _dumps(parsed.ops) == _dumps(cached.ops)
    assert set(_cache_lines(paths)) == set(blobs)  # the read rebuilt it
    # local only: the cache lives in the state dir and is in no ref looma shares
    listing = git(repo, "ls-tree", "-r", "--name-only", "refs/looma/ledger")
    assert "ops-cache" not in listing
    assert git(repo, "for-each-ref", "--format=%(refname)").count("cache") == 0


def test_ops_written_elsewhere_are_cached_on_first_read_and_bad_files_never(
        repo: Path, tmp_path: Path) -> None:
    paths = init(repo)
    create(paths, "local")
    other = build_op(OpDraft("workitem.create", {"type": "workitem"}, {"title": "teammate"}),
                     lamport=2, ts="2026-11-29T10:00:00Z", actor=SYSTEM_ACTOR, clone="c" * 16)
    good = yamlio.dump(other.fields())
    bad_id = "b" * 64
    inject(repo, {f"ops/{other.id[:2]}/{other.id}.yaml": good,
                  f"ops/bb/{bad_id}.yaml": b"v: 1\nid: nonsense\n",
                  f"ops/{'c' * 2}/{'c' * 64}.yaml": good}, tmp_path)  # right bytes, wrong name
    first = _fresh_read(paths)
    assert other.id in {o.id for o in first.ops}
    assert {r.op_id for r in first.rejected} == {bad_id, "c" * 64}
    lines = _cache_lines(paths)
    assert len(lines) == 2 and all(Op.model_validate(v).id in {o.id for o in first.ops}
                                   for v in lines.values())
    second = _fresh_read(paths)  # served from the cache: same verdicts for every file
    assert _dumps(second.ops) == _dumps(first.ops)
    assert sorted(map(repr, second.rejected)) == sorted(map(repr, first.rejected))


def test_a_damaged_cache_is_ignored_and_rebuilt(repo: Path) -> None:
    paths = init(repo)
    _write_some_ops(paths)
    expected = _dumps(list(_parsed_by_git(repo).values()))
    path = _cache_file(paths)
    entries = path.read_bytes().splitlines()
    assert len(entries) == 3
    blob0 = entries[0].partition(b" ")[0]
    blob1, _, body1 = entries[1].partition(b" ")
    tampered = json.loads(body1)
    tampered["payload"]["summary"] = "someone edited the cache"  # id kept: hash no longer fits
    damaged = [
        blob0 + b" " + body1,  # another op's entry under this blob: wrong path for it
        blob1 + b" " + json.dumps(tampered).encode(),
        entries[2][:60],  # cut short by a crash
        b"garbage line",
    ]
    path.write_bytes(b"\n".join(damaged))
    assert _dumps(_fresh_read(paths).ops) == expected
    # rewritten: only good entries remain, one per op file, each naming its own blob
    lines = _cache_lines(paths)
    assert {b: f"ops/{v['id'][:2]}/{v['id']}.yaml" for b, v in lines.items()} == _op_blobs(repo)
    assert _dumps([Op.model_validate(v) for v in lines.values()]) == expected
    assert _dumps(_fresh_read(paths).ops) == expected
    path.write_bytes(b"\x00\xff not a cache at all")
    assert _dumps(_fresh_read(paths).ops) == expected
    assert set(_cache_lines(paths)) == set(_op_blobs(repo))


def test_a_state_dir_that_cannot_hold_the_cache_costs_only_a_parse(repo: Path) -> None:
    paths = init(repo)
    _write_some_ops(paths)
    _cache_file(paths).unlink()
    _cache_file(paths).mkdir()  # a directory in the way: every write fails
    expected = _dumps(list(_parsed_by_git(repo).values()))
    assert _dumps(_fresh_read(paths).ops) == expected
    create(paths, "one more")
    assert len(_fresh_read(paths).ops) == 4
