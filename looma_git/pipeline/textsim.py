"""One window's words against many clusters' at once: `evidence.text_similarity` for each,
equal to it bit for bit, computed with numpy arrays when the clusters are many."""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from looma_git.pipeline.clusters import Cluster
from looma_git.pipeline.evidence import IDF_PRIOR, Rarity, text_similarity
from looma_git.pipeline.signals import WorkSignal

# Fewer clusters than this are compared one by one (a hook's pass scores a few windows
# against a few clusters: no numpy import). Both ways give the same floats (see `Terms`).
BATCH_FROM = 16


@functools.lru_cache(maxsize=1 << 12)
def _tf(n: int) -> float:
    """A count's sublinear weight, as `evidence._sublinear` computes it."""
    return 1.0 + math.log(n)


class Terms:
    """What the batched comparison keeps between windows: an id per word, each word's
    window count by id (the resolver's `term_df`, mirrored), and each cluster's top words
    as arrays (rebuilt when the cluster's top words change).

    Why the floats are equal: each weight is the same product of the same two floats
    (`tf * idf`, idf from `math.log` of the same quotient, per distinct count), and each sum
    is taken in the same order, one addition at a time (`cumsum` along a row; padding adds
    0.0, which changes no sum), as `evidence._norm` and `evidence._cos` take theirs."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {"": 0}  # 0: the padding of shorter rows (never a word)
        self._df: Any = None  # np.ndarray of window counts by id, once numpy is in use
        self._src: Counter[str] | None = None  # the counts it mirrors
        self._rows: dict[str, tuple[tuple[tuple[str, int], ...], Any, Any]] = {}

    def counted(self, df: Counter[str], terms: set[str]) -> None:
        """`df` (the mirrored counts) just counted one more window using each of `terms`."""
        if self._df is None or df is not self._src:
            return
        ids = self.ids
        arr = self._df
        for t in terms:
            i = ids.get(t)
            if i is not None:
                arr[i] += 1

    def _id(self, t: str) -> int:
        i = self.ids.get(t)
        if i is None:
            i = self.ids[t] = len(self.ids)
            if self._df is not None:
                if i >= len(self._df):
                    import numpy as np

                    self._df = np.concatenate([self._df, np.zeros(len(self._df), np.int64)])
                assert self._src is not None
                self._df[i] = self._src.get(t, 0)
        return i

    def _counts(self, df: Counter[str]) -> Any:
        import numpy as np

        if self._df is None or df is not self._src:
            self._src = df
            arr = np.zeros(max(1024, 2 * len(self.ids)), np.int64)
            for t, i in self.ids.items():
                arr[i] = df.get(t, 0)
            self._df = arr
        return self._df

    def _row(self, c: Cluster) -> tuple[Any, Any]:
        import numpy as np

        top = c.top_terms()
        got = self._rows.get(c.id)
        if got is not None and got[0] is top:
            return got[1], got[2]
        known = self.ids
        pairs = [(t, n) for t, n in top if n > 0]
        ids = np.array([known[t] if t in known else self._id(t) for t, _ in pairs], np.intp)
        tf = np.array([_tf(n) for _, n in pairs], np.float64)
        self._rows[c.id] = (top, ids, tf)
        return ids, tf

    def similarities(self, w: WorkSignal, clusters: Sequence[Cluster], idf: Rarity,
                     df: Counter[str]) -> list[float]:
        """`text_similarity(w, c, idf)` for each of `clusters`, in order; `df`: the word
        counts `idf` was made from."""
        a, na = idf.vector(w.terms)
        if not a:
            return [0.0] * len(clusters)
        if len(clusters) < BATCH_FROM:
            return [text_similarity(w, c, idf) for c in clusters]
        import numpy as np

        self._counts(df)
        rows = [self._row(c) for c in clusters]  # (may add words: the counts grow)
        counts = self._df
        width = max(1, max(len(ids) for ids, _ in rows))
        ids = np.zeros((len(rows), width), np.intp)
        tfs = np.zeros((len(rows), width), np.float64)
        for i, (r_ids, r_tf) in enumerate(rows):
            ids[i, :len(r_ids)] = r_ids
            tfs[i, :len(r_tf)] = r_tf
        # Each distinct count's idf as `Rarity.term` computes it (the same quotient of ints),
        # looked up by count (no sort: counts are at most the windows so far).
        used = counts[ids]
        present = np.zeros(int(used.max()) + 1, np.bool_)
        present[used] = True
        uniq = np.flatnonzero(present)
        top = 1 + idf.windows + IDF_PRIOR
        lut = np.zeros(len(present), np.float64)
        lut[uniq] = [math.log(top / (1 + d)) for d in uniq.tolist()]
        b = tfs * lut[used]
        nb = np.sqrt(np.cumsum(b * b, axis=1)[:, -1])
        # The window's words that any of these clusters has, in the window's order (a word
        # none has adds 0.0 to every dot product).
        mine = [(self.ids[t], v) for t, v in a.items() if t in self.ids]
        if not mine:
            return [0.0] * len(clusters)
        pos = np.full(len(self.ids), -1, np.intp)
        pos[[i for i, _ in mine]] = np.arange(len(mine))
        at = pos[ids]
        r, col = np.nonzero(at >= 0)
        shared = np.zeros((len(rows), len(mine)), np.float64)
        shared[r, at[r, col]] = b[r, col]
        dot = np.cumsum(shared * np.array([v for _, v in mine], np.float64), axis=1)[:, -1]
        out: list[float] = dot.tolist()
        norms: list[float] = nb.tolist()
        return [d / (na * n) if n else 0.0 for d, n in zip(out, norms, strict=True)]
