"""Token-set similarity of two strings, exactly as rapidfuzz's `fuzz.token_set_ratio` computes
it, in pure Python: importing rapidfuzz costs a fresh `resume` more than all its title matches."""

from __future__ import annotations

from functools import lru_cache


def _lcs(a: str, b: str) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyrö 2004: one big-int step
    per character of `b`)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    s = (1 << len(a)) - 1
    for ch in b:
        u = s & masks.get(ch, 0)
        s = (s + u) | (s - u)
    return bin(s)[-len(a):].count("0")


def _norm(dist: int, lensum: int) -> float:
    return (100 - 100 * dist / lensum) if lensum else 100.0


@lru_cache(maxsize=16384)  # a resume that consults meaning ranks the same names twice
def token_set_ratio(s1: str, s2: str) -> float:
    """0-100: 100 when one string's words are a subset of the other's, else the best Indel
    ratio among (common words + each side's own words) and (own words vs own words)."""
    a, b = set(s1.split()), set(s2.split())
    if not a or not b:
        return 0.0
    common = a & b
    only_a, only_b = a - b, b - a
    if common and (not only_a or not only_b):
        return 100.0
    ja, jb = " ".join(sorted(only_a)), " ".join(sorted(only_b))
    la, lb = len(ja), len(jb)
    sect = len(" ".join(common))
    sect_a = sect + (sect != 0) + la
    sect_b = sect + (sect != 0) + lb
    indel = la + lb - 2 * _lcs(ja, jb)
    result = _norm(indel, sect_a + sect_b)
    if not sect:
        return result
    return max(result, _norm((sect != 0) + la, sect + sect_a),
               _norm((sect != 0) + lb, sect + sect_b))
