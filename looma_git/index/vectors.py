"""The sqlite-vec vector store (via apsw): cosine KNN over doc vectors stamped with a model id."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from looma_git.errors import InvalidDataError, LoomaError, ReadOnlyError

SCHEMA_VERSION = "1"
MAX_K = 4096  # sqlite-vec refuses k above this


class VectorStoreUnavailable(LoomaError):
    """apsw or sqlite-vec cannot be loaded (or the file cannot be opened); fall back to lexical."""

    exit_code = 5
    code = "vectors_unavailable"


def _connect(path: Path) -> Any:
    """An apsw connection with sqlite-vec loaded; the stdlib sqlite3 cannot load extensions."""
    try:
        import apsw
    except ImportError as exc:
        raise VectorStoreUnavailable(f"vector search needs apsw and sqlite-vec: {exc}") from None
    extension = _extension_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except PermissionError as exc:
        raise ReadOnlyError(f"cannot create {path.parent}: {exc.strerror}") from exc
    try:
        db = apsw.Connection(str(path))
    except apsw.Error as exc:
        raise VectorStoreUnavailable(f"cannot open vector store {path}: {exc}") from None
    try:
        db.enable_load_extension(True)
        db.load_extension(extension)
        db.enable_load_extension(False)
    except (apsw.Error, AttributeError, OSError) as exc:
        db.close()
        raise VectorStoreUnavailable(f"cannot load the sqlite-vec extension: {exc}") from None
    db.setbusytimeout(10_000)
    return db


def _extension_path() -> str:
    """sqlite-vec's loadable extension, located without importing the package (whose
    import pulls in numpy: ~0.14 s of a fresh process)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        base = Path(loc) / "vec0"
        if any(base.with_suffix(ext).is_file() for ext in (".so", ".dylib", ".dll")):
            return str(base)
    raise VectorStoreUnavailable("vector search needs sqlite-vec (its vec0 extension is missing)")


def stamp(path: Path) -> tuple[str, int] | None:
    """(model id, dimension) of an existing store, read without loading any model; None when
    there is no usable store."""
    if not Path(path).is_file():
        return None
    try:
        import apsw

        db = apsw.Connection(str(path))
    except Exception:  # ImportError, apsw.Error: no store to read
        return None
    try:
        meta: dict[str, str] = {str(k): str(v) for k, v in
                                db.execute("SELECT key, value FROM vec_meta").fetchall()}
        if meta.get("schema") != SCHEMA_VERSION or not meta.get("model_id"):
            return None
        return str(meta["model_id"]), int(meta["dim"])
    except Exception:  # a damaged or foreign file is no store
        return None
    finally:
        db.close()


class VectorStore:
    """Vectors of one model in `path`. After opening, `needs_reembed` is True when stored
    vectors of another model or dimension were discarded, `created` when the store is new.
    """

    def __init__(self, path: Path, dim: int, model_id: str) -> None:
        if not isinstance(dim, int) or dim <= 0:
            raise InvalidDataError(f"vector dimension must be a positive integer, got {dim!r}")
        if not model_id:
            raise InvalidDataError("a vector store needs a model id")
        self.path = Path(path)
        self.dim = dim
        self.model_id = model_id
        self.needs_reembed = False
        self.created = False
        self._db = _connect(self.path)
        try:
            self._prepare()
        except Exception:
            self._db.close()
            raise

    def _prepare(self) -> None:
        import apsw

        db = self._db
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            with db:
                db.execute("CREATE TABLE IF NOT EXISTS vec_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                stamp = dict(db.execute("SELECT key, value FROM vec_meta").fetchall())
                wanted = {"schema": SCHEMA_VERSION, "model_id": self.model_id, "dim": str(self.dim)}
                if stamp == wanted and self._table_exists("vec_docs"):
                    return
                had_vectors = bool(stamp) and self._table_exists("vec_docs") and bool(
                    db.execute("SELECT 1 FROM vec_docs LIMIT 1").fetchall())
                # Vectors from another model (or width) live in another space: keeping
                # any of them would make KNN meaningless, so drop them all.
                db.execute("DROP TABLE IF EXISTS vec_items")
                db.execute("DROP TABLE IF EXISTS vec_docs")
                db.execute("CREATE TABLE vec_docs(id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE)")
                db.execute(
                    f"CREATE VIRTUAL TABLE vec_items USING vec0("
                    f"embedding float[{self.dim}] distance_metric=cosine, kind TEXT, +doc_id TEXT)")
                db.execute("DELETE FROM vec_meta")
                db.executemany("INSERT INTO vec_meta(key, value) VALUES (?, ?)", list(wanted.items()))
                self.needs_reembed = had_vectors
                self.created = not stamp
        except apsw.ReadOnlyError as exc:
            raise ReadOnlyError(f"vector store {self.path} is read-only: {exc}") from exc
        except apsw.Error as exc:
            raise VectorStoreUnavailable(f"vector store {self.path} is unusable: {exc}",
                                         hint="delete it; it is a cache that `looma reindex` recreates") from None

    def _table_exists(self, name: str) -> bool:
        return bool(self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchall())

    def _blob(self, vector: Any) -> bytes:
        if isinstance(vector, (bytes, bytearray, memoryview)):  # raw float32, as stored
            blob = bytes(vector)
            if len(blob) != 4 * self.dim:
                raise InvalidDataError(f"vector has {len(blob) // 4} dimensions, the store "
                                       f"expects {self.dim}")
            return blob
        import numpy as np

        arr = np.asarray(vector, dtype=np.float32).reshape(-1)
        if arr.shape[0] != self.dim:
            raise InvalidDataError(f"vector has {arr.shape[0]} dimensions, the store expects {self.dim}")
        if not np.all(np.isfinite(arr)):
            raise InvalidDataError("vector contains NaN or infinity")
        return bytes(arr.astype("<f4").tobytes())

    # -- writing ------------------------------------------------------------------------

    def upsert_many(self, items: Iterable[tuple[str, str, Any]]) -> int:
        """Insert or replace `(doc_id, kind, vector)` rows in one transaction; returns the count."""
        rows = [(str(doc_id), str(kind), self._blob(vec)) for doc_id, kind, vec in items]
        if not rows:
            return 0
        db = self._db
        with db:
            # vec0 has no INSERT OR REPLACE: delete then insert, inside one transaction.
            for doc_id, kind, blob in rows:
                self._delete_locked(doc_id)
                db.execute("INSERT INTO vec_docs(doc_id) VALUES (?)", (doc_id,))
                rowid = db.last_insert_rowid()
                db.execute("INSERT INTO vec_items(rowid, embedding, kind, doc_id) VALUES (?, ?, ?, ?)",
                           (rowid, blob, kind, doc_id))
        return len(rows)

    def upsert(self, doc_id: str, kind: str, vector: Any) -> None:
        """Insert or replace one vector."""
        self.upsert_many([(doc_id, kind, vector)])

    def _delete_locked(self, doc_id: str) -> bool:
        row = self._db.execute("SELECT id FROM vec_docs WHERE doc_id = ?", (doc_id,)).fetchone()
        if row is None:
            return False
        self._db.execute("DELETE FROM vec_items WHERE rowid = ?", (row[0],))
        self._db.execute("DELETE FROM vec_docs WHERE id = ?", (row[0],))
        return True

    def delete(self, doc_id: str) -> bool:
        """Remove a vector; True if it existed."""
        with self._db:
            return self._delete_locked(doc_id)

    def delete_many(self, doc_ids: Iterable[str]) -> int:
        """Remove these vectors in one transaction; returns how many existed."""
        with self._db:
            return sum(self._delete_locked(d) for d in doc_ids)

    def clear(self) -> None:
        """Remove every vector (the model stamp stays)."""
        with self._db:
            self._db.execute("DELETE FROM vec_items")
            self._db.execute("DELETE FROM vec_docs")

    # -- reading ------------------------------------------------------------------------

    def knn(self, vector: Any, k: int, kind: str | Sequence[str] | None = None) -> list[tuple[str, float]]:
        """The `k` nearest `(doc_id, cosine distance)`, nearest first; `kind` filters (one or several)."""
        if k <= 0:
            return []
        blob = self._blob(vector)
        sql = "SELECT doc_id, distance FROM vec_items WHERE embedding MATCH ? AND k = ?"
        params: list[Any] = [blob, min(int(k), MAX_K)]
        if isinstance(kind, str):
            sql += " AND kind = ?"
            params.append(kind)
        elif kind is not None:
            kinds = list(dict.fromkeys(kind))
            if not kinds:
                return []
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            params.extend(kinds)
        sql += " ORDER BY distance"
        rows = self._db.execute(sql, params).fetchall()
        return [(str(doc_id), float(dist)) for doc_id, dist in rows if not math.isnan(dist)]

    def count(self, kind: str | None = None) -> int:
        """Number of stored vectors (of one kind if given)."""
        if kind is None:
            return int(self._db.execute("SELECT count(*) FROM vec_docs").fetchone()[0])
        return int(self._db.execute("SELECT count(*) FROM vec_items WHERE kind = ?", (kind,)).fetchone()[0])

    def vector(self, doc_id: str) -> bytes | None:
        """The stored vector of `doc_id` (raw float32, as `upsert_many` takes it), or None."""
        row = self._db.execute("SELECT embedding FROM vec_items WHERE rowid = (SELECT id FROM "
                               "vec_docs WHERE doc_id = ?)", (doc_id,)).fetchone()
        return bytes(row[0]) if row is not None and row[0] is not None else None

    def has(self, doc_id: str) -> bool:
        """True if a vector is stored for `doc_id`."""
        return self._db.execute("SELECT 1 FROM vec_docs WHERE doc_id = ?", (doc_id,)).fetchone() is not None

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._db.close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
