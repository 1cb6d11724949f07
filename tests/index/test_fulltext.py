"""FullTextIndex against real Tantivy: quality basics, hostile queries, writes, rebuilds, locking."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from looma_git.errors import InvalidDataError, LockError
from looma_git.index.fulltext import Doc, FullTextIndex, mark_ranges
from looma_git.index.meta import file_lock
from tests.helpers import REPO_ROOT

CORPUS = [
    Doc("m1", "message", "Deploy notes", "We deployed the sidecars to k8s yesterday; rollout was slow.",
        ts=100, workitem="wi-deploy", agent="claude", session="s1"),
    Doc("m2", "message", "", "What's the plan for the c++ bindings? It is NOT safe to merge yet.",
        ts=200, workitem="wi-bindings", agent="codex", session="s2"),
    Doc("w1", "workitem", "Redis cache eviction", "Tune memory limits for the cache layer.",
        ts=300, workitem="wi-redis"),
    Doc("m3", "message", "Cache layer", "Switching the session store to redis for the eviction policy.",
        ts=400, workitem="wi-redis", session="s3"),
    Doc("d1", "memory", "Decision: use Tantivy", "Café naïve — we deployed Tantivy because BM25 is fast.",
        ts=500, workitem="wi-search"),
    Doc("x1", "session", "Scratch", "the x variable and the (x) tuple", ts=600),
]


@pytest.fixture
def index(tmp_path: Path) -> FullTextIndex:
    ix = FullTextIndex(tmp_path / "tantivy")
    assert ix.created and not ix.rebuilt and ix.needs_populate
    assert ix.add_many(CORPUS) == len(CORPUS)
    return ix


def ids(hits) -> list[str]:
    return [h.doc_id for h in hits]


def test_stemming_matches_other_word_forms(index: FullTextIndex) -> None:
    assert "m1" in ids(index.search("deploying sidecar"))
    assert ids(index.search("rollouts"))[0] == "m1"


def test_title_match_outranks_body_match(index: FullTextIndex) -> None:
    # w1 has "redis" in the title, m3 only in the body (with similar lengths).
    assert ids(index.search("redis"))[:2] == ["w1", "m3"]


def test_hit_carries_stored_fields(index: FullTextIndex) -> None:
    hit = index.search("rollout")[0]
    assert (hit.doc_id, hit.doc_type, hit.workitem, hit.session, hit.title, hit.ts) == (
        "m1", "message", "wi-deploy", "s1", "Deploy notes", 100)
    assert hit.score > 0
    nothing = index.search("tuple")[0]
    assert nothing.workitem is None and nothing.session is None


def test_snippet_marks_matched_terms_after_multibyte_text(index: FullTextIndex) -> None:
    hit = next(h for h in index.search("deploy") if h.doc_id == "d1")
    # Tantivy reports byte offsets; the text before the match has multi-byte characters.
    assert "we «deployed» Tantivy" in hit.snippet
    assert "<b>" not in hit.snippet


def test_snippet_falls_back_to_body_head_for_title_only_match(index: FullTextIndex) -> None:
    hit = next(h for h in index.search("scratch"))
    assert hit.doc_id == "x1" and hit.snippet == "the x variable and the (x) tuple"


def test_mark_ranges_ignores_bad_ranges() -> None:
    assert mark_ranges("héllo wörld", [(7, 13), (0, 6)]) == "«héllo» «wörld»"
    assert mark_ranges("abc", [(2, 99), (1, 1)]) == "abc"


def test_type_and_workitem_filters(index: FullTextIndex) -> None:
    assert ids(index.search("redis", types=["message"])) == ["m3"]
    assert ids(index.search("redis", types={"workitem", "memory"})) == ["w1"]
    assert ids(index.search("cache", workitem="wi-redis")) == ["w1", "m3"]
    assert index.search("deployed", workitem="wi-redis") == []
    assert index.search("redis", types=[]) == []
    assert index.search("redis", limit=0) == []
    assert len(index.search("the", limit=2)) == 2


@pytest.mark.parametrize(("query", "expected"), [
    ("what's", "m2"),
    ("k8s: deploy", "m1"),
    ("(x", "x1"),
    ("x)", "x1"),
    ("NOT safe", "m2"),
    ("c++", "m2"),
    ("title:", None),
    ("foo:bar", None),
    ("redis AND", "w1"),
    ("[1 TO rollout", "m1"),  # "to" is a function word and is not searched
    ("{x", "x1"),
    ("\"x", "x1"),
    ("rollout^2", "m1"),
    ("rollout\u00a0slow", "m1"),
    ("`x`", "x1"),
    ("naïve café", "d1"),
    ("日本語", None),
])
def test_hostile_queries_never_raise_and_find_words(index: FullTextIndex, query: str,
                                                   expected: str | None) -> None:
    hits = index.search(query)
    if expected is None:
        assert hits == []
    else:
        assert ids(hits)[0] == expected


@pytest.mark.parametrize("query", ['""', "-", "+", "*", "\\", "'", "^", "", "   ", "()", "--- !!! ???"])
def test_pure_punctuation_returns_empty(index: FullTextIndex, query: str) -> None:
    assert index.terms(query) == []
    assert index.search(query) == []


def test_upsert_replaces_and_delete_removes(index: FullTextIndex) -> None:
    index.upsert(Doc("m1", "message", "Rollback notes", "We rolled back the canary.", ts=999))
    assert index.count() == len(CORPUS)
    assert ids(index.search("canary")) == ["m1"]
    assert "m1" not in ids(index.search("sidecar"))
    index.delete("m1")
    index.delete("never-existed")
    assert index.search("canary") == []
    assert index.count() == len(CORPUS) - 1
    index.delete_many(["m2", "m3"])
    assert index.count() == len(CORPUS) - 3


def test_add_many_without_replace_keeps_duplicates_and_replace_dedupes(tmp_path: Path) -> None:
    ix = FullTextIndex(tmp_path / "t")
    ix.add_many([Doc("a", "message", "one", "alpha")], replace=False)
    ix.add_many([Doc("a", "message", "two", "alpha")], replace=False)
    assert ix.count() == 2
    ix.add_many([Doc("a", "message", "three", "alpha")])
    assert [h.title for h in ix.search("alpha")] == ["three"]


def test_clear(index: FullTextIndex) -> None:
    index.clear()
    assert index.count() == 0
    assert index.search("redis") == []


def test_invalid_doc_rolls_back_whole_batch(index: FullTextIndex) -> None:
    with pytest.raises(InvalidDataError):
        index.add_many([Doc("n1", "message", "brandnew", "brandnew"), Doc("n2", "decision", "x", "y")])
    with pytest.raises(InvalidDataError):
        index.upsert(Doc("", "message", "t", "b"))
    assert index.search("brandnew") == []
    assert index.count() == len(CORPUS)


def test_reopen_persists_and_other_instance_sees_new_commits(index: FullTextIndex, tmp_path: Path) -> None:
    other = FullTextIndex(tmp_path / "tantivy")
    assert not other.created and not other.rebuilt and not other.needs_populate
    assert other.count() == len(CORPUS)
    index.upsert(Doc("late", "memory", "Late arrival", "zebra"))
    assert ids(other.search("zebra")) == ["late"]


def test_schema_mismatch_rebuilds_and_keeps_foreign_files(tmp_path: Path) -> None:
    import tantivy

    d = tmp_path / "tantivy"
    d.mkdir()
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("text", stored=True)
    old = tantivy.Index(sb.build(), path=str(d))
    w = old.writer(heap_size=15_000_000, num_threads=1)
    w.add_document(tantivy.Document(id="old", text="legacy words"))
    w.commit()
    w.wait_merging_threads()
    del w, old
    (d / "NOTES.txt").write_text("not tantivy's\n")

    ix = FullTextIndex(d)
    assert ix.rebuilt and ix.needs_populate and not ix.created
    assert ix.rebuild_reason and "schema" in ix.rebuild_reason.lower()
    assert ix.count() == 0
    ix.add_many(CORPUS)
    assert ids(ix.search("redis"))[0] == "w1"
    assert (d / "NOTES.txt").read_text() == "not tantivy's\n"
    assert not FullTextIndex(d).rebuilt


def test_corrupt_meta_json_rebuilds(index: FullTextIndex, tmp_path: Path) -> None:
    (tmp_path / "tantivy" / "meta.json").write_text("garbage{")
    ix = FullTextIndex(tmp_path / "tantivy")
    assert ix.rebuilt and ix.count() == 0
    ix.add_many(CORPUS[:1])
    assert ids(ix.search("sidecar")) == ["m1"]


@pytest.mark.parametrize("damage", ["truncate", "remove"])
def test_damaged_segment_rebuilds(index: FullTextIndex, tmp_path: Path, damage: str) -> None:
    d = tmp_path / "tantivy"
    segments = [p for p in d.iterdir() if p.suffix in (".term", ".store")]
    assert segments
    for p in segments:
        if damage == "truncate":
            p.write_bytes(b"xx")
        else:
            p.unlink()
    ix = FullTextIndex(d)
    assert ix.rebuilt and ix.count() == 0


_WRITER_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from looma_git.errors import LockError
    from looma_git.index.fulltext import Doc, FullTextIndex
    d, tag, batches, per, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    ix = FullTextIndex(Path(d), lock_timeout=timeout)
    try:
        for b in range(batches):
            ix.add_many(Doc(f"{tag}-{b}-{i}", "message", f"proc {tag}", f"word{tag} batch{b} item{i}")
                        for i in range(per))
    except LockError as exc:
        print("LOCKED", exc.message)
        sys.exit(exc.exit_code)
""")


def _spawn(d: Path, tag: str, batches: int, per: int, timeout: float) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen([sys.executable, "-c", _WRITER_SCRIPT, str(d), tag, str(batches), str(per),
                             str(timeout)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_concurrent_writer_processes_are_serialized(tmp_path: Path) -> None:
    d = tmp_path / "tantivy"
    FullTextIndex(d)
    procs = [_spawn(d, tag, batches=4, per=50, timeout=60) for tag in ("a", "b", "c")]
    for p in procs:
        _out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    ix = FullTextIndex(d)
    assert ix.count() == 3 * 4 * 50
    assert len(ix.search("worda", limit=1000)) == 200


def test_writer_waits_for_looma_lock_and_times_out(tmp_path: Path) -> None:
    d = tmp_path / "tantivy"
    ix = FullTextIndex(d, lock_timeout=0.2)
    with file_lock(ix.lock_path, timeout=1):
        blocked = _spawn(d, "z", batches=1, per=1, timeout=0.3)
        out, _ = blocked.communicate(timeout=120)
        assert blocked.returncode == LockError.exit_code
        assert "LOCKED" in out
        with pytest.raises(LockError):
            ix.upsert(Doc("in-proc", "message", "t", "b"))  # a second fd in-process is excluded too
    ok = _spawn(d, "z", batches=1, per=1, timeout=5)
    assert ok.wait(timeout=120) == 0
    assert ids(ix.search("wordz")) == ["z-0-0"]


def test_advanced_query_language_with_fallback(index: FullTextIndex) -> None:
    assert ids(index.search("redis AND NOT eviction", advanced=True)) == []
    assert ids(index.search("redis AND session", advanced=True)) == ["m3"]
    assert ids(index.search('"rollout was slow"', advanced=True)) == ["m1"]
    assert ids(index.search("title:redis", advanced=True, types=["workitem"])) == ["w1"]
    # Unparseable input falls back to plain words instead of raising.
    assert ids(index.search("what's", advanced=True)) == ["m2"]
    assert ids(index.search("k8s: deploy", advanced=True))[0] == "m1"
    assert index.search("-", advanced=True) == []


def test_damage_after_open_is_a_clear_error_then_rebuilds(index: FullTextIndex, tmp_path: Path) -> None:
    d = tmp_path / "tantivy"
    for p in d.iterdir():
        if p.suffix == ".store":
            with open(p, "r+b") as fh:  # same inode: the open searcher reads the damage
                fh.write(b"\xff" * 200)
    with pytest.raises(InvalidDataError) as info:
        index.search("redis")
    assert info.value.hint and "reindex" in info.value.hint
    again = FullTextIndex(d)
    assert again.rebuilt and again.count() == 0


def test_reset_discards_a_valid_index(index: FullTextIndex, tmp_path: Path) -> None:
    fresh = FullTextIndex(tmp_path / "tantivy", reset=True)
    assert fresh.rebuilt and fresh.needs_populate and fresh.count() == 0
    assert index.count() == 0  # the other handle sees the new, empty index
