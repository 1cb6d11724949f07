"""The fold cache's memories, unpickled only when read: by WorkItem for a derive, else all.

A drain's one `commit.link` loads the stored fold to append it. Its memories (one per promoted
decision, ~5,000 records with their evidence at 5,000 sessions) were ~60% of that load
(~0.06 CPU-s, growing with the history) although the append reads only the memories of the
WorkItem it re-derives. So `fold_cache` stores them apart, pickled per WorkItem, and loads
them as a `LazyMemories`: a dict that fills itself (in the fold's order) on the first access
of any kind; `of_workitems` unpickles just the groups a derive asks for, and those objects are
the ones the full dict holds afterwards (an op that changes one changes the one every reader
sees). A save of a dict never filled writes its groups back as they were read.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from typing import Any

from looma_git.store.gcpause import paused

_PROTOCOL = pickle.HIGHEST_PROTOCOL


def _key(workitem: object) -> str:
    return workitem if isinstance(workitem, str) else ""


Section = tuple[list[str], dict[str, bytes]]


def dump(memories: dict[str, Any]) -> Section:
    """The memories as stored (one more pickle of the fold cache's file): their ids in order
    and one pickle per WorkItem."""
    if isinstance(memories, LazyMemories) and not memories.filled:
        return memories.order, memories.chunks
    groups: dict[str, list[Any]] = {}
    for m in memories.values():
        groups.setdefault(_key(m.workitem), []).append(m)
    return list(memories), {k: pickle.dumps(v, protocol=_PROTOCOL) for k, v in groups.items()}


def load(section: object) -> LazyMemories:
    if not isinstance(section, tuple) or len(section) != 2:
        raise ValueError("not a memories section")
    order, chunks = section
    if not isinstance(order, list) or not isinstance(chunks, dict):
        raise ValueError("not a memories section")
    return LazyMemories(order, chunks)


class LazyMemories(dict):
    """`LedgerState.memories` straight from the fold cache (see the module docstring)."""

    def __init__(self, order: list[str], chunks: dict[str, bytes]) -> None:
        super().__init__()
        self.order = order
        self.chunks = chunks
        self.opened: dict[str, list[Any]] = {}
        self.filled = not order

    def _group(self, key: str) -> list[Any]:
        got = self.opened.get(key)
        if got is None:
            raw = self.chunks.get(key)
            with paused():
                got = pickle.loads(raw) if raw is not None else []
            self.opened[key] = got
        return got

    def fill(self) -> None:
        if self.filled:
            return
        self.filled = True
        by_id = {m.id: m for key in self.chunks for m in self._group(key)}
        dict.update(self, {mid: by_id[mid] for mid in self.order if mid in by_id})
        self.chunks, self.opened, self.order = {}, {}, []

    def of_workitems(self, workitems: Iterable[str]) -> Iterable[Any]:
        """The memories whose `workitem` is one of these (what derive asks); all unfilled
        groups stay pickled."""
        if self.filled:
            want = set(workitems)
            return [m for m in dict.values(self) if _key(m.workitem) in want]
        return [m for w in sorted(set(workitems)) if w for m in self._group(w)]

    # Every other way in fills the dict first, then is the dict's own.
    def __getitem__(self, key: Any) -> Any:
        self.fill()
        return dict.__getitem__(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.fill()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self.fill()
        dict.__delitem__(self, key)

    def __contains__(self, key: object) -> bool:
        self.fill()
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[Any]:
        self.fill()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[Any]:
        self.fill()
        return dict.__reversed__(self)

    def __len__(self) -> int:
        return dict.__len__(self) if self.filled else len(self.order)

    def __eq__(self, other: object) -> bool:
        self.fill()
        if isinstance(other, LazyMemories):
            other.fill()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        self.fill()
        return dict.__repr__(self)

    def __or__(self, other: Any) -> Any:
        self.fill()
        return dict(self) | other

    def __ror__(self, other: Any) -> Any:
        self.fill()
        return other | dict(self)

    def __ior__(self, other: Any) -> Any:
        self.fill()
        dict.update(self, other)
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        self.fill()  # a plain dict in any copy or pickle
        return (dict, (dict(dict.items(self)),))

    def get(self, key: Any, default: Any = None) -> Any:
        self.fill()
        return dict.get(self, key, default)

    def keys(self) -> Any:
        self.fill()
        return dict.keys(self)

    def values(self) -> Any:
        self.fill()
        return dict.values(self)

    def items(self) -> Any:
        self.fill()
        return dict.items(self)

    def pop(self, key: Any, *default: Any) -> Any:
        self.fill()
        return dict.pop(self, key, *default)

    def popitem(self) -> Any:
        self.fill()
        return dict.popitem(self)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self.fill()
        return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.fill()
        dict.update(self, *args, **kwargs)

    def copy(self) -> dict[Any, Any]:
        self.fill()
        return dict(dict.items(self))

    def clear(self) -> None:
        self.fill()
        dict.clear(self)
