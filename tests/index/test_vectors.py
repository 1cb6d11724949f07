"""VectorStore against real apsw + sqlite-vec: KNN order, kind filter, upserts, model stamps."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from looma_git.errors import InvalidDataError, LoomaError
from looma_git.index.vectors import VectorStore, VectorStoreUnavailable


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def store(tmp_path: Path):
    vs = VectorStore(tmp_path / "store.db", 4, "model-a")
    assert vs.created and not vs.needs_reembed
    vs.upsert_many([
        ("a", "memory", unit(1, 0, 0, 0)),
        ("b", "workitem", unit(1, 0.2, 0, 0)),
        ("c", "memory", unit(1, 1, 0, 0)),
        ("d", "session", unit(0, 0, 1, 0)),
        ("e", "memory", [-1.0, -1.0, 0.0, 0.0]),  # plain lists, unnormalised, are accepted too
    ])
    yield vs
    vs.close()


def test_knn_orders_by_cosine_distance(store: VectorStore) -> None:
    hits = store.knn(unit(1, 0, 0, 0), 5)
    assert [d for d, _ in hits] == ["a", "b", "c", "d", "e"]
    dists = [x for _, x in hits]
    assert dists == sorted(dists)
    assert dists[0] == pytest.approx(0.0, abs=1e-6)
    assert dists[2] == pytest.approx(1 - 1 / np.sqrt(2), abs=1e-5)
    assert dists[3] == pytest.approx(1.0, abs=1e-6)
    assert dists[4] == pytest.approx(1 + 1 / np.sqrt(2), abs=1e-5)
    assert [d for d, _ in store.knn(unit(1, 0, 0, 0), 2)] == ["a", "b"]


def test_knn_kind_filter(store: VectorStore) -> None:
    assert [d for d, _ in store.knn(unit(1, 0, 0, 0), 10, kind="memory")] == ["a", "c", "e"]
    assert [d for d, _ in store.knn(unit(1, 0, 0, 0), 10, kind=["session", "workitem"])] == ["b", "d"]
    assert store.knn(unit(1, 0, 0, 0), 10, kind="nothing") == []
    assert store.knn(unit(1, 0, 0, 0), 10, kind=[]) == []
    assert store.knn(unit(1, 0, 0, 0), 0) == []


def test_upsert_replaces_and_delete(store: VectorStore) -> None:
    assert store.count() == 5 and store.count("memory") == 3
    store.upsert("a", "workitem", unit(0, 0, 0, 1))
    assert store.count() == 5 and store.count("memory") == 2
    assert store.knn(unit(0, 0, 0, 1), 1) == [("a", pytest.approx(0.0, abs=1e-6))]
    assert store.delete("a") is True
    assert store.delete("a") is False
    assert not store.has("a") and store.has("b")
    assert store.delete_many(["b", "c", "zz"]) == 2
    assert store.count() == 2
    store.clear()
    assert store.count() == 0 and store.knn(unit(1, 0, 0, 0), 3) == []


def test_bad_vectors_are_refused_and_nothing_is_written(store: VectorStore) -> None:
    with pytest.raises(InvalidDataError):
        store.upsert_many([("n1", "memory", unit(1, 0, 0, 0)), ("n2", "memory", [1.0, 2.0])])
    with pytest.raises(InvalidDataError):
        store.upsert("n3", "memory", [float("nan"), 0, 0, 1])
    with pytest.raises(InvalidDataError):
        store.knn([1.0, 0.0], 3)
    assert store.count() == 5 and not store.has("n1")


def test_reopen_same_model_keeps_vectors_and_stamp_is_readable(tmp_path: Path, store: VectorStore) -> None:
    store.close()
    again = VectorStore(tmp_path / "store.db", 4, "model-a")
    assert not again.created and not again.needs_reembed and again.count() == 5
    again.close()
    # The stamp is an ordinary table: readable without the extension.
    with sqlite3.connect(tmp_path / "store.db") as plain:
        stamp = dict(plain.execute("SELECT key, value FROM vec_meta").fetchall())
    assert stamp == {"schema": "1", "model_id": "model-a", "dim": "4"}


@pytest.mark.parametrize(("dim", "model"), [(4, "model-b"), (3, "model-a")])
def test_model_or_dim_change_clears_and_asks_for_reembed(tmp_path: Path, store: VectorStore,
                                                        dim: int, model: str) -> None:
    store.close()
    changed = VectorStore(tmp_path / "store.db", dim, model)
    assert changed.needs_reembed and not changed.created
    assert changed.count() == 0
    changed.upsert("z", "memory", np.ones(dim, np.float32))
    assert [d for d, _ in changed.knn(np.ones(dim, np.float32), 3)] == ["z"]
    changed.close()
    settled = VectorStore(tmp_path / "store.db", dim, model)
    assert not settled.needs_reembed and settled.count() == 1
    settled.close()


def test_empty_store_reopened_with_new_model_needs_no_reembed(tmp_path: Path) -> None:
    VectorStore(tmp_path / "v.db", 4, "m1").close()
    vs = VectorStore(tmp_path / "v.db", 4, "m2")
    assert not vs.needs_reembed
    vs.close()


def test_shares_a_file_with_other_tables(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    with sqlite3.connect(db) as plain:
        plain.execute("CREATE TABLE events(id INTEGER PRIMARY KEY, body TEXT)")
        plain.execute("INSERT INTO events(body) VALUES ('kept')")
    with VectorStore(db, 4, "m") as vs:
        vs.upsert("a", "memory", unit(1, 1, 1, 1))
    with VectorStore(db, 4, "other") as vs:
        assert vs.needs_reembed
    with sqlite3.connect(db) as plain:
        assert plain.execute("SELECT body FROM events").fetchall() == [("kept",)]


def test_not_a_database_is_reported_as_unavailable(tmp_path: Path) -> None:
    bad = tmp_path / "junk.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(VectorStoreUnavailable) as info:
        VectorStore(bad, 4, "m")
    assert isinstance(info.value, LoomaError) and info.value.exit_code == 5
    assert bad.read_bytes().startswith(b"this is not sqlite")  # never deleted


def test_missing_extension_is_reported_as_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from looma_git.index import vectors

    monkeypatch.setattr(vectors, "_extension_path", lambda: str(tmp_path / "no-such-vec0"))
    with pytest.raises(VectorStoreUnavailable, match="sqlite-vec"):
        VectorStore(tmp_path / "v.db", 4, "m")


def test_invalid_construction_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidDataError):
        VectorStore(tmp_path / "v.db", 0, "m")
    with pytest.raises(InvalidDataError):
        VectorStore(tmp_path / "v.db", 4, "")
