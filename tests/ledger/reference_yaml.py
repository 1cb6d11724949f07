"""The ledger YAML emitter as first written (b400d9b), kept as the byte-exact reference."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from looma_git.errors import InvalidDataError

# Strings emitted plain must read back as the same string under YAML 1.1 *and* 1.2 readers
# (git users feed these files to all sorts of tools), so anything that could resolve to a bool,
# null, number or timestamp, or that needs flow/indicator care, is double-quoted instead.
_PLAIN_OK = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+-]+)*\Z")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
# Characters JSON leaves raw but YAML forbids (or treats as line breaks / BOM) inside "...".
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_INLINE_MAX = 100  # collections whose flow form is short stay on the key's line
_INT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[-+][0-9]+)?\Z")


def scalar(value: Any) -> str:
    """One YAML scalar, quoted only when a plain scalar could be misread."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidDataError(f"non-finite number {value!r} cannot be stored")
        text = repr(value)
        return text
    if isinstance(value, str):
        if _PLAIN_OK.match(value) and value.lower() not in _RESERVED:
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidDataError(f"string is not valid Unicode: {exc}") from exc
        quoted = json.dumps(value, ensure_ascii=False)
        return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    raise InvalidDataError(f"unsupported value type {type(value).__name__} in ledger data")


def flow(value: Any) -> str:
    """A one-line flow rendering; nested mapping keys sorted."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{" + ", ".join(f"{_key(k)}: {flow(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value)


def _key(k: Any) -> str:
    if not isinstance(k, str):
        raise InvalidDataError(f"mapping keys must be strings, got {type(k).__name__}")
    return scalar(k)


def dump(mapping: dict[str, Any]) -> bytes:
    """Emit a top-level mapping (its own key order kept; nested keys sorted) as UTF-8 bytes."""
    out: list[str] = []
    _block_mapping(mapping, 0, out, ordered=True)
    return ("\n".join(out) + "\n").encode("utf-8")


def _block_mapping(mapping: dict[str, Any], indent: int, out: list[str], ordered: bool) -> None:
    pad = " " * indent
    keys = list(mapping) if ordered else sorted(mapping)
    for k in keys:
        v = mapping[k]
        head = f"{pad}{_key(k)}:"
        inline = flow(v)
        if not isinstance(v, (dict, list, tuple)) or not v or len(inline) <= _INLINE_MAX:
            out.append(f"{head} {inline}")
        elif isinstance(v, dict) and indent == 0:
            out.append(head)
            _block_mapping(v, indent + 2, out, ordered=False)
        elif isinstance(v, (list, tuple)):
            out.append(head)
            out.extend(f"{pad}- {flow(item)}" for item in v)
        else:
            out.append(f"{head} {inline}")


