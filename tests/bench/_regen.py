"""A random string that a Python regex matches, generated from its parse tree (re._parser)."""

import random
import re._constants as C
import re._parser as P
import string

_PRINT = string.ascii_letters + string.digits
_CAT = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_WORD: _PRINT + "_",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_DIGIT: string.ascii_letters,
    C.CATEGORY_NOT_WORD: "-",
    C.CATEGORY_NOT_SPACE: _PRINT,
}


def _set(items):
    neg = False
    chars = set()
    for op, av in items:
        if op is C.NEGATE:
            neg = True
        elif op is C.LITERAL:
            chars.add(chr(av))
        elif op is C.RANGE:
            lo, hi = av
            chars.update(chr(c) for c in range(lo, min(hi, lo + 200) + 1))
        elif op is C.CATEGORY:
            chars.update(_CAT.get(av, ""))
    if neg:
        chars = set(_PRINT) - chars
    return sorted(chars) or ["x"]


def gen(pattern: str, rnd: random.Random, spread: int = 12) -> str:
    tree = P.parse(pattern)
    groups: dict[int, str] = {}

    def walk(seq) -> str:
        out = []
        for op, av in seq:
            if op is C.LITERAL:
                out.append(chr(av))
            elif op is C.NOT_LITERAL:
                out.append(rnd.choice([c for c in _PRINT if ord(c) != av]))
            elif op is C.ANY:
                out.append(rnd.choice(_PRINT))
            elif op is C.IN:
                out.append(rnd.choice(_set(av)))
            elif op is C.CATEGORY:
                out.append(rnd.choice(_CAT.get(av, "x")))
            elif op is C.BRANCH:
                out.append(walk(rnd.choice(av[1])))
            elif op is C.SUBPATTERN:
                gid, _a, _d, sub = av
                s = walk(sub)
                if gid:
                    groups[gid] = s
                out.append(s)
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
                lo, hi, sub = av
                if hi is C.MAXREPEAT:
                    lo, hi = max(lo, 8), max(lo, 8) + 2 * spread
                hi = min(hi, lo + 2 * spread)
                n = rnd.randint(lo, hi) if op is not C.MIN_REPEAT else lo
                out.append("".join(walk(sub) for _ in range(n)))
            elif op is C.GROUPREF:
                out.append(groups.get(av, ""))
            elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
                pass
            elif op is C.ATOMIC_GROUP:
                out.append(walk(av))
            else:
                raise ValueError(f"unsupported {op}")
        return "".join(out)

    return walk(tree)


def group_pattern(pattern: str, gid: int) -> str | None:
    """The source text of capture group `gid` (by scanning parens)."""
    depth_stack = []
    n = 0
    i = 0
    in_cls = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_cls:
            if c == "]":
                in_cls = False
        elif c == "[":
            in_cls = True
        elif c == "(":
            capturing = pattern[i + 1 : i + 2] != "?" or pattern[i + 1 : i + 3] == "?P"
            if capturing:
                n += 1
            depth_stack.append((i, capturing and n == gid))
        elif c == ")":
            start, mine = depth_stack.pop()
            if mine:
                inner = pattern[start + 1 : i]
                return inner
        i += 1
    return None
