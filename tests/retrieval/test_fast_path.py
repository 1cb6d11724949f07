"""The resume fast path: skipping the semantic boost only when it cannot matter, and the
records snapshot keyed by the ledger head."""

from __future__ import annotations

import pickle
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.api import index as api_index
from looma_git.api import ledger as api_ledger
from looma_git.api import query
from looma_git.gitrepo import find_repo
from looma_git.ledger.ops import OpDraft
from looma_git.retrieval import head_records, match, snapshot
from looma_git.retrieval.records import ItemRecord, LinkRecord, MemoryRecord
from tests.helpers import git

WORDS = ("oauth login session timeout refresh search index ranking cache redis billing "
         "invoice retry token").split()


def item(id: str, title: str, files: tuple[str, ...] = (), conf: float = 0.8,
         aliases: tuple[str, ...] = ()) -> ItemRecord:
    return ItemRecord(id=id, title=title, kind="feature", status="active", lifecycle="active",
                      confidence=conf, band="high", files=files, aliases=aliases, branch=None,
                      summary="", sessions=(), commits=(), memories=(), updated="",
                      promoted=True)


ITEMS = [
    item("wi_a", "Implement OAuth Login", ("auth/oauth.py",)),
    item("wi_b", "Fix Session Timeout on Refresh", ("auth/session.py",)),
    item("wi_c", "Search Indexing", ("search/index.py",)),
    item("wi_d", "Search Ranking", ("search/rank.py",)),
    item("wi_e", "Redis Cache Retry", ("cache/redis.py",), aliases=("cache retry",)),
    item("wi_f", "Billing Invoice Tokens", ("billing/invoice.py",)),
]


@settings(max_examples=300, deadline=None)
@given(goal=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
       cosines=st.lists(st.one_of(st.none(), st.floats(-1.0, 1.0)), min_size=len(ITEMS),
                        max_size=len(ITEMS)))
def test_skipping_meaning_never_changes_the_outcome(goal: str, cosines: list[float | None]
                                                    ) -> None:
    """The rule behind loading no model: when words decide, no cosine can change the answer."""
    lexical = match.rank(goal, ITEMS)
    if not match.lexical_decides(lexical):
        return
    semantic = {it.id: c for it, c in zip(ITEMS, cosines, strict=True) if c is not None}
    state_lex, chosen_lex = match.outcome(lexical)
    state_sem, chosen_sem = match.outcome(match.rank(goal, ITEMS, semantic))
    assert state_lex == state_sem == "confident"
    assert [m.item.id for m in chosen_lex] == [m.item.id for m in chosen_sem]


def test_decisive_and_undecided_rankings() -> None:
    assert match.lexical_decides(match.rank("redis cache retry", ITEMS))  # confident
    assert not match.lexical_decides(match.rank("kubernetes helm", ITEMS))  # cold: maybe a paraphrase
    assert not match.lexical_decides(match.rank("search", ITEMS))  # a near-tie


def _record() -> ItemRecord:
    mem = MemoryRecord(id="mem_1", kind="decision", text="Use PKCE", workitem="wi_a",
                       confidence=0.9, band="high", lifecycle="active", promoted=True,
                       evidence=({"quote": "use PKCE", "agent": "codex", "session": "s1",
                                  "event": "e1"},))
    return ItemRecord(id="wi_a", title="OAuth", kind="feature", status="active",
                      lifecycle="active", confidence=0.82, band="high",
                      files=("auth/oauth.py",), aliases=("login",), branch="feat/oauth",
                      summary="PKCE flow", sessions=(("claude-code", "s1"), ("codex", "s2")),
                      commits=(LinkRecord(sha="a" * 40, confidence=0.8, by="hook"),),
                      memories=(mem,), updated="2026-01-01T00:00:00Z", promoted=True,
                      features=(("commits", 1.0), ("sessions", 0.4)))


def test_snapshot_round_trip_and_invalidation(tmp_path: Path) -> None:
    rec = _record()
    (tmp_path / "records-snapshot.json").write_text("{}")  # a format-5 JSON snapshot
    snapshot.save(tmp_path, "h1", [rec])
    assert not (tmp_path / "records-snapshot.json").exists()  # replaced, not left behind
    assert snapshot.load(tmp_path, "h1") == [rec]
    assert snapshot.load(tmp_path, "h2") is None  # the ledger moved
    # ...told from the snapshot's first bytes: a head-mismatched file is not parsed (its
    # records part may be anything), a snapshot written otherwise is still read whole
    path = tmp_path / snapshot.SNAPSHOT_FILE
    good = path.read_bytes()
    lead, _, body = good.partition(b"\n")
    assert lead == b"looma-records %d h1" % snapshot.SNAPSHOT_FORMAT
    path.write_bytes(lead + b"\n" + body[: len(body) // 2])  # truncated: fold again
    assert snapshot.load(tmp_path, "h2") is None and snapshot.load(tmp_path, "h1") is None
    path.write_bytes(b"looma-records 5 h1\n" + body)  # an older format is not read
    assert snapshot.load(tmp_path, "h1") is None
    path.write_bytes(good)
    assert snapshot.load(tmp_path, "h1") == [rec] and snapshot.load(tmp_path, "h2") is None
    # A pickle of something else under the right lead (other code's records): fold again.
    path.write_bytes(lead + b"\n" + pickle.dumps({"items": [{"id": 3}], "terms": [],
                                                   "terms_probe": "", "fingerprints": {}}))
    assert snapshot.load(tmp_path, "h1") is None
    (tmp_path / snapshot.SNAPSHOT_FILE).write_text('{"format": 1, "ledger_commit": "h1", '
                                                   '"items": [{"id": 3}]}')
    assert snapshot.load(tmp_path, "h1") is None  # damaged: fold again, never raise
    (tmp_path / snapshot.SNAPSHOT_FILE).write_bytes(b"\xff not json")
    assert snapshot.load(tmp_path, "h1") is None


def _create(paths, title: str) -> str:
    op = api_ledger.append(paths, [OpDraft("workitem.create", {"type": "workitem", "id": None},
                                           {"title": title, "kind": "feature",
                                            "files": ["a.py"], "confidence": 0.7})],
                           actor="system")[0]
    return "wi_" + op.id[:10]


def test_records_follow_the_ledger_head(repo: Path) -> None:
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    first = _create(paths, "Implement OAuth Login")
    head1 = git(repo, "rev-parse", "refs/looma/ledger")
    assert [it.id for it in api_index.load_records(paths)] == [first]
    assert snapshot.load_prior(paths.state_dir)[0] == head1  # type: ignore[index]
    # A second process (no in-memory cache) reads the snapshot, not the fold.
    head_records._RECORDS.clear()
    assert [it.title for it in api_index.load_records(paths)] == ["Implement OAuth Login"]
    second = _create(paths, "Fix Session Timeout")
    ids = {it.id for it in api_index.load_records(paths)}
    assert ids == {first, second}
    assert query.resume(paths, "session timeout").candidates[0].id == second
    assert snapshot.load_prior(paths.state_dir)[0] == git(  # type: ignore[index]
        repo, "rev-parse", "refs/looma/ledger") != head1


def test_reindex_embeds_only_changed_texts(repo: Path, monkeypatch) -> None:
    from looma_git.index import embedder as emb_mod

    if emb_mod.load_default() is None:
        import pytest

        pytest.skip("no embedding model installed")
    seen: list[str] = []
    real = emb_mod.Embedder.embed

    def spy(self, texts, *a, **kw):  # records what really gets embedded
        seen.extend(texts)
        return real(self, texts, *a, **kw)

    monkeypatch.setattr(emb_mod.Embedder, "embed", spy)
    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    a = _create(paths, "Implement OAuth Login")
    b = _create(paths, "Fix Session Timeout")
    assert api_index.reindex(paths).vectors == 2 and len(seen) == 2
    seen.clear()
    assert api_index.reindex(paths).vectors == 2 and seen == []  # nothing changed
    api_ledger.append(paths, [OpDraft("workitem.update", {"type": "workitem", "id": b},
                                      {"summary": "refresh token races"})], actor="system")
    assert api_index.ensure_fresh(paths)
    assert len(seen) == 1 and "refresh token races" in seen[0]
    from looma_git.index.vectors import VectorStore

    e = emb_mod.load_default()
    assert e is not None
    with VectorStore(api_index.vectors_path(paths), e.dim, e.model_id) as vs:
        assert vs.count() == 2 and vs.has(a) and vs.has(b)
        near = vs.knn(e.embed_one("Fix Session Timeout. . refresh token races"), 1)
        assert near[0][0] == b and near[0][1] < 0.01
    seen.clear()
    api_index.vectors_path(paths).unlink()  # a lost vector store is rebuilt whole
    assert api_index.reindex(paths).vectors == 2 and len(seen) == 2


def test_a_new_heads_records_reuse_the_unchanged_and_equal_a_full_projection(repo: Path
                                                                             ) -> None:
    """After each write the records are the previous head's with only the WorkItems whose
    fold inputs changed projected again: equal to `from_ledger` of the whole fold, whatever
    the op (an update, a link, a memory, a rename, a merge, a false positive)."""
    import random

    from looma_git.retrieval.records import from_ledger
    from looma_git.store.ledger_ref import LedgerStore
    from tests.store.test_notes import fast_commits

    paths = find_repo(repo)
    api_ledger.init_repo(paths)
    wids = [_create(paths, f"Effort number {i}") for i in range(4)]
    shas = fast_commits(repo, 3)
    rng = random.Random(5)
    api_index.load_records(paths)
    for i in range(10):
        head_records._RECORDS.clear()  # each load a fresh process: from the prior snapshot
        api_index.load_records(paths)
        prior_fps = snapshot.load_prior(paths.state_dir)[2]  # type: ignore[index]
        w = rng.choice(wids)
        other = rng.choice([x for x in wids if x != w])
        kind = ("update", "link", "memory", "rename", "merge", "false")[i % 6]
        if kind == "update":
            draft = OpDraft("workitem.update", {"type": "workitem", "id": w},
                            {"summary": f"Changed: b{i}.py.", "confidence": 0.5})
        elif kind == "link":
            draft = OpDraft("commit.link", {"type": "commit", "id": rng.choice(shas)},
                            {"workitem": w, "subject": f"work {i}", "ts": "2026-02-01T00:00:00Z"})
        elif kind == "memory":
            draft = OpDraft("memory.promote", {"type": "memory", "id": f"m_{i:010d}"},
                            {"kind": "decision", "text": f"use plan {i}", "workitem": w})
        elif kind == "rename":
            draft = OpDraft("workitem.rename", {"type": "workitem", "id": w}, {"title": f"T {i}"})
        elif kind == "merge":
            draft = OpDraft("workitem.merge", {"type": "workitem", "id": w}, {"from": [other]})
        else:
            draft = OpDraft("node.false_positive", {"type": "workitem", "id": w}, {})
            wids.append(_create(paths, f"Effort number {10 + i}"))
        api_ledger.append(paths, [draft], actor="user")
        head_records._RECORDS.clear()
        got = api_index.load_records(paths)
        want = from_ledger(LedgerStore(paths).state())
        assert got == want, kind
        # only the WorkItems the op changed are projected again; the rest are reused
        fps = snapshot.load_prior(paths.state_dir)[2]  # type: ignore[index]
        assert set(fps) == {it.id for it in got}
        again = {k for k in fps if prior_fps.get(k) != fps[k]}
        assert again <= {w, other, wids[-1]} and len(again) < len(fps), (kind, again)


def test_snapshot_of_other_record_shape_is_folded_again(tmp_path: Path, monkeypatch) -> None:
    rec = _record()
    snapshot.save(tmp_path, "h1", [rec])
    assert snapshot.load(tmp_path, "h1") == [rec]
    # Saved by code whose records had other fields (one more on ItemRecord): not read.
    monkeypatch.setattr(snapshot, "_SHAPE", (snapshot._SHAPE[0] + ("extra",), snapshot._SHAPE[1]))
    assert snapshot.load(tmp_path, "h1") is None
    snapshot.save(tmp_path, "h1", [rec])
    assert snapshot.load(tmp_path, "h1") == [rec]
