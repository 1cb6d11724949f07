"""One-pass literal scans: whether any of many words occurs in a text, and which do."""

from __future__ import annotations

import re
from collections.abc import Iterable


def any_of(words: Iterable[str]) -> re.Pattern[str]:
    """A pattern that `search`es whether any of `words` occurs, as `any(w in text ...)` does:
    one pass over the text with the words factored by their characters (a trie), in place of
    a scan per word. A word another starts with stands for both (where the longer occurs, so
    does it)."""
    def trie(ws: list[str]) -> str:
        by: dict[str, list[str]] = {}
        for w in ws:
            by.setdefault(w[0], []).append(w[1:])
        alts = []
        for c, rests in sorted(by.items()):
            rest = "" if "" in rests else (
                re.escape(rests[0]) if len(rests) == 1 else "(?:" + trie(rests) + ")")
            alts.append(re.escape(c) + rest)
        return "|".join(alts)

    ws = sorted(set(words))
    if not ws or "" in ws:
        raise ValueError("any_of needs non-empty words")
    return re.compile(trie(ws))


class Occurring:
    """`{w for w in words if w in text}` from one `findall` of `any_of(words)` in place of a
    scan per word (90 `in` tests a message for the extractors' anchors: half their cost).

    The scan finds, left to right, the shortest word starting at each place it has not
    passed; a word it cannot report is one that starts inside a reported match or extends
    one (`shadows`), and only those are tested with `in`: the same set, exactly."""

    def __init__(self, words: Iterable[str]) -> None:
        ws = sorted(set(words))
        self.findall = any_of(ws).findall
        self.shadows = {m: _shadowed(m, ws) for m in ws}

    def __call__(self, text: str) -> set[str]:
        found = set(self.findall(text))
        for m in tuple(found):
            for x in self.shadows[m]:
                if x not in found and x in text:
                    found.add(x)
        return found


def _shadowed(m: str, words: list[str]) -> tuple[str, ...]:
    """The words an occurrence of which may start where one of `m` does (extending it) or
    inside it, so that a scan that reported `m` there passed over it: `x` starts with `m`,
    lies inside `m` after its first character, or starts with a proper tail of `m`."""
    tails = tuple(m[i:] for i in range(1, len(m)))
    inner = m[1:]
    return tuple(x for x in words if x != m and (
        x.startswith(m) or x in inner or (tails and x.startswith(tails))))
