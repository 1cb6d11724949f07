"""Go RE2 pattern syntax to Python re syntax (mid-pattern `(?i)`, `\\z`, `[` inside classes)."""

import re


def _fix_classes(rx: str) -> str:
    # inside [...], a literal '[' must be escaped for Python (FutureWarning: nested set)
    out = []
    i = 0
    in_cls = False
    while i < len(rx):
        c = rx[i]
        if c == "\\":
            out.append(rx[i : i + 2])
            i += 2
            continue
        if in_cls:
            if c == "[":
                out.append("\\[")
                i += 1
                continue
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_cls = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_cls = True
            if rx[i + 1 : i + 2] == "^":
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            if rx[i : i + 1] == "]":
                out.append("\\]")
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


_POSIX = {
    "[:alnum:]": "A-Za-z0-9",
    "[:alpha:]": "A-Za-z",
    "[:digit:]": "0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:xdigit:]": "0-9A-Fa-f",
    "[:space:]": "\\s",
    "[:punct:]": "!-/:-@\\[-`{-~",
    "[:word:]": "\\w",
}


def go_to_py(rx: str) -> str:
    rx = rx.replace("\\z", "\\Z")
    for k, v in _POSIX.items():
        rx = rx.replace(k, v)
    rx = _fix_classes(rx)
    return scope_flags(rx)


def scope_flags(rx: str) -> str:
    """A mid-pattern `(?i)` (any of `imsx`) -> `(?i:...)` up to the end of its enclosing group
    (Go scopes such flags; Python accepts them only at the start)."""
    flag = re.compile(r"\(\?([imsx]+)\)")
    while True:
        m = flag.search(rx, 1)
        if m is None:
            return rx
        depth = 0
        j = m.end()
        in_cls = False
        while j < len(rx):
            c = rx[j]
            if c == "\\":
                j += 2
                continue
            if in_cls:
                if c == "]":
                    in_cls = False
            elif c == "[":
                in_cls = True
            elif c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        rx = rx[:m.start()] + f"(?{m.group(1)}:" + rx[m.end():j] + ")" + rx[j:]
