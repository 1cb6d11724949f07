"""The per-cluster memo of the last pass in store.db (`refine_memo`): what each cluster's view,
memories and link target were derived from, so an incremental pass reuses them unchanged."""

from __future__ import annotations

import sqlite3
from typing import Any

from looma_git.index.workmodel import get_meta, set_meta


class StoredMemo(dict[str, Any]):
    """The stored ClusterMemo entries by cluster id, each unpickled when first read: a
    cluster that is not the last pass's (a new seed, a new id) never costs its entry's
    decoding. A damaged entry reads as absent (recomputed, never trusted)."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        super().__init__()
        self._blobs = blobs

    def _load(self, key: str) -> Any:
        import pickle

        if key not in self._blobs:
            return None
        try:
            value = pickle.loads(self._blobs.pop(key))
        except Exception:  # a damaged entry is recomputed, never trusted
            return None
        dict.__setitem__(self, key, value)
        return value

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (
            isinstance(key, str) and self._load(key) is not None)

    def __missing__(self, key: str) -> Any:
        value = self._load(key)
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        value = dict.get(self, key)
        return value if value is not None else (self._load(key) if key in self._blobs
                                                else None) or default

    def ids(self) -> set[str]:
        """Every stored id, read or not."""
        return set(dict.keys(self)) | set(self._blobs)


def load_memo(conn: sqlite3.Connection, code: str) -> dict[str, Any]:
    """The last pass's ClusterMemo per cluster id ({} when it was written by other code)."""
    if get_meta(conn, "memo_code") != code:
        return {}
    return StoredMemo({cid: bytes(blob) for cid, blob in
                       conn.execute("SELECT id, blob FROM refine_memo")})


def save_memo(conn: sqlite3.Connection, memo: dict[str, Any], old: dict[str, Any],
              code: str) -> None:
    """Write the entries that are not the loaded ones (same object: reused), drop the rest."""
    import pickle

    if get_meta(conn, "memo_code") != code:
        conn.execute("DELETE FROM refine_memo")
        old = {}
    stored = old.ids() if isinstance(old, StoredMemo) else set(old)
    conn.executemany("DELETE FROM refine_memo WHERE id=?",
                     [(k,) for k in stored if k not in memo])
    conn.executemany("INSERT OR REPLACE INTO refine_memo(id, blob) VALUES (?,?)",
                     [(k, pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL))
                      for k, v in memo.items() if dict.get(old, k) is not v])
    set_meta(conn, "memo_code", code)
