"""Memories a pass reuses from the memo without decoding them (`Packed`, `MemoryList`).

Each cluster's memories are kept as one pickle (`Packed`, decoded when first read) and a
pass's as the clusters' parts (`MemoryList`). At 5,000 sessions the memories were half of what every pass unpickled from the memo (5.7 of
10.7 MB) while an appending pass reads only the memories of the clusters it derived anew: the
others are published already and their rows in store.db are what serialising them gives
(index/workmodel.save_graph keeps them by id)."""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")


class Decoded(Sequence[T]):
    """A sequence read through `_all()` (its items, decoded on first use): indexing,
    iteration, equality with any sequence of the same items, hashing and repr. Shared by the
    memo's packed memories and store.db's stored candidates (index/workmodel)."""

    __slots__ = ()

    def _all(self) -> tuple[T, ...]:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        return self._all()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Sequence):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._all()!r})"


class Packed(Decoded[Any]):
    """One cluster's memories (MemoryView), their ids readable without decoding them."""

    def __init__(self, ids: tuple[str, ...], blob: bytes,
                 items: tuple[Any, ...] | None = None) -> None:
        self.ids = ids
        self._blob = blob
        self._items = items

    @classmethod
    def of(cls, items: Iterable[Any]) -> Packed:
        got = tuple(items)
        return cls(tuple(m.id for m in got), pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL),
                   got)

    def _all(self) -> tuple[Any, ...]:
        if self._items is None:
            self._items = pickle.loads(self._blob)
        return self._items

    @property
    def decoded(self) -> bool:
        return self._items is not None

    def __reduce__(self) -> tuple[Any, ...]:
        return (Packed, (self.ids, self._blob))  # (stored encoded: decoded when read)

    def __len__(self) -> int:
        return len(self.ids)


class MemoryList(Decoded[Any]):
    """A pass's memories, cluster by cluster in the pass's order: `parts` (cluster id, its
    memories, a tuple or `Packed`); iterating decodes what was packed."""

    def __init__(self, parts: Iterable[tuple[str, Sequence[Any]]]) -> None:
        self.parts = tuple((cid, ms) for cid, ms in parts if len(ms))
        self._flat: tuple[Any, ...] | None = None

    def of(self, clusters: set[str] | frozenset[str]) -> MemoryList:
        """The memories of these clusters only."""
        return MemoryList((cid, ms) for cid, ms in self.parts if cid in clusters)

    def _all(self) -> tuple[Any, ...]:
        if self._flat is None:
            self._flat = tuple(m for _, ms in self.parts for m in ms)
        return self._flat

    def __len__(self) -> int:
        return sum(len(ms) for _, ms in self.parts)
