"""Deterministic YAML emission for ledger files and their safe, bounded loading."""

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


# Emission runs for every op and every touched projection on each write, so string scalars
# (ids, keys, enum words repeat constantly) are memoised; the cache is bounded and cleared whole.
_STR_CACHE: dict[str, str] = {}
_STR_CACHE_MAX = 65_536
_STR_CACHE_LEN = 100  # longer strings are mostly one-off free text


def _str_scalar(value: str) -> str:
    if _PLAIN_OK.match(value) and value.lower() not in _RESERVED:
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidDataError(f"string is not valid Unicode: {exc}") from exc
    quoted = json.dumps(value, ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def _cached_str(value: str) -> str:
    out = _STR_CACHE.get(value)
    if out is None:
        out = _str_scalar(value)
        if len(value) <= _STR_CACHE_LEN:
            if len(_STR_CACHE) >= _STR_CACHE_MAX:
                _STR_CACHE.clear()
            _STR_CACHE[value] = out
    return out


def scalar(value: Any) -> str:
    """One YAML scalar, quoted only when a plain scalar could be misread."""
    if type(value) is str:
        return _cached_str(value)
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
        return _str_scalar(value)
    raise InvalidDataError(f"unsupported value type {type(value).__name__} in ledger data")


def flow(value: Any) -> str:
    """A one-line flow rendering; nested mapping keys sorted."""
    t = type(value)
    if t is str:
        return _cached_str(value)
    if t is list or t is tuple or (t is not dict and isinstance(value, (list, tuple))):
        return "[" + ", ".join([flow(v) for v in value]) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{" + ", ".join([f"{_key(k)}: {flow(value[k])}" for k in sorted(value)]) + "}"
    return scalar(value)


def _key(k: Any) -> str:
    if type(k) is str:
        return _cached_str(k)
    if not isinstance(k, str):
        raise InvalidDataError(f"mapping keys must be strings, got {type(k).__name__}")
    return scalar(k)


def dump(mapping: dict[str, Any]) -> bytes:
    """Emit a top-level mapping (its own key order kept; nested keys sorted) as UTF-8 bytes."""
    out: list[str] = []
    _block_mapping(mapping, 0, out, ordered=True)
    return ("\n".join(out) + "\n").encode("utf-8")


_CONTAINERS = (dict, list, tuple)


def _block_mapping(mapping: dict[str, Any], indent: int, out: list[str], ordered: bool) -> None:
    pad = " " * indent
    keys = list(mapping) if ordered else sorted(mapping)
    cache = _STR_CACHE
    for k in keys:
        v = mapping[k]
        key = cache.get(k) if type(k) is str else None
        if key is None:
            key = _key(k)
        t = type(v)
        if t is str:  # the common cases first, without a call (same text as below)
            text = cache.get(v)
            out.append(f"{pad}{key}: {text if text is not None else _cached_str(v)}")
            continue
        if v is None or t is bool or t is int or t is float:
            out.append(f"{pad}{key}: {scalar(v)}")
            continue
        if t is list or t is tuple:  # each item rendered once, for either layout
            items = [flow(item) for item in v]
            inline = "[" + ", ".join(items) + "]"
            if not v or len(inline) <= _INLINE_MAX:
                out.append(f"{pad}{key}: {inline}")
            else:
                out.append(f"{pad}{key}:")
                out.extend([f"{pad}- {item}" for item in items])
            continue
        head = f"{pad}{key}:"
        inline = flow(v)
        if not v or len(inline) <= _INLINE_MAX or not isinstance(v, _CONTAINERS):
            out.append(f"{head} {inline}")
        elif isinstance(v, dict) and indent == 0:
            out.append(head)
            _block_mapping(v, indent + 2, out, ordered=False)
        elif isinstance(v, (list, tuple)):
            out.append(head)
            out.extend([f"{pad}- {flow(item)}" for item in v])
        else:
            out.append(f"{head} {inline}")


# ---------------------------------------------------------------- loading


def load(data: bytes, *, what: str, max_bytes: int) -> Any:
    """Decode one ledger YAML file safely: size cap, strict UTF-8, no anchors/aliases/tags.

    Files this module wrote take a fast exact path (parsed, then re-emitted and compared byte
    for byte, so a wrong fast parse can never be accepted); anything else goes through
    ruamel's pure-Python safe loader after an event scan that refuses anchors, aliases and tags.
    """
    if len(data) > max_bytes:
        raise InvalidDataError(f"{what}: {len(data)} bytes exceeds the {max_bytes}-byte limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidDataError(f"{what}: not valid UTF-8 ({exc.reason} at byte {exc.start})") \
            from exc
    try:
        fast = _FastParser(text).document()
        if isinstance(fast, dict) and dump(fast) == data:
            return fast
    except (ValueError, IndexError, InvalidDataError, RecursionError):
        pass
    return _ruamel_load(text, what)


def _ruamel_load(text: str, what: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent

    yaml = YAML(typ="safe", pure=True)
    try:
        for ev in yaml.parse(text):
            if isinstance(ev, AliasEvent) or getattr(ev, "anchor", None):
                raise InvalidDataError(f"{what}: YAML anchors/aliases are not allowed")
            tag = getattr(ev, "tag", None) if isinstance(
                ev, (ScalarEvent, CollectionStartEvent)) else None
            if tag is not None and tag != "!":
                raise InvalidDataError(f"{what}: YAML tags ({ev.tag}) are not allowed")
        return yaml.load(text)
    except InvalidDataError:
        raise
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidDataError(f"{what}: invalid YAML: {first}") from exc


class _FastParser:
    """Parses exactly the subset `dump` emits; anything else raises and falls back."""

    def __init__(self, text: str) -> None:
        if not text.endswith("\n"):
            raise ValueError("no final newline")
        self.lines = text[:-1].split("\n")
        self.i = 0

    def document(self) -> dict[str, Any]:
        result = self._mapping(0)
        if self.i != len(self.lines):
            raise ValueError("trailing content")
        return result

    def _mapping(self, indent: int) -> dict[str, Any]:
        pad = " " * indent
        result: dict[str, Any] = {}
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.startswith(pad) or line[indent:indent + 1] in (" ", "-", ""):
                break
            key, pos = self._scalar_token(line, indent, stop=":")
            if not isinstance(key, str) or key in result or line[pos:pos + 1] != ":":
                raise ValueError("bad key")
            rest = line[pos + 1:]
            self.i += 1
            if rest == "":
                nxt = self.lines[self.i] if self.i < len(self.lines) else ""
                if nxt.startswith(pad + "- "):
                    items = []
                    while self.i < len(self.lines) and self.lines[self.i].startswith(pad + "- "):
                        items.append(self._whole(self.lines[self.i], indent + 2))
                        self.i += 1
                    result[key] = items
                else:
                    result[key] = self._mapping(indent + 2)
            elif rest.startswith(" "):
                result[key] = self._whole(line, pos + 2)
            else:
                raise ValueError("bad mapping line")
        return result

    def _whole(self, line: str, start: int) -> Any:
        value, pos = self._value(line, start)
        if pos != len(line):
            raise ValueError("trailing characters")
        return value

    def _value(self, s: str, pos: int) -> tuple[Any, int]:
        ch = s[pos]
        if ch == "{":
            out: dict[str, Any] = {}
            pos += 1
            if s[pos] == "}":
                return out, pos + 1
            while True:
                key, pos = self._scalar_token(s, pos, stop=":")
                if s[pos:pos + 2] != ": " or not isinstance(key, str):
                    raise ValueError("bad flow key")
                out[key], pos = self._value(s, pos + 2)
                if s[pos] == "}":
                    return out, pos + 1
                if s[pos:pos + 2] != ", ":
                    raise ValueError("bad flow mapping")
                pos += 2
        if ch == "[":
            items: list[Any] = []
            pos += 1
            if s[pos] == "]":
                return items, pos + 1
            while True:
                item, pos = self._value(s, pos)
                items.append(item)
                if s[pos] == "]":
                    return items, pos + 1
                if s[pos:pos + 2] != ", ":
                    raise ValueError("bad flow sequence")
                pos += 2
        return self._scalar_token(s, pos, stop=",]}")

    @staticmethod
    def _scalar_token(s: str, pos: int, stop: str) -> tuple[Any, int]:
        if s[pos] == '"':
            end = pos + 1
            while s[end] != '"':
                end += 2 if s[end] == "\\" else 1
            return json.loads(s[pos:end + 1]), end + 1
        end = pos
        while end < len(s) and s[end] not in stop:
            end += 1
        token = s[pos:end]
        if token == "null":
            return None, end
        if token in ("true", "false"):
            return token == "true", end
        if _INT_RE.match(token):
            return int(token), end
        if _FLOAT_RE.match(token) or token.startswith(("-", "0", "1", "2", "3", "4", "5", "6",
                                                         "7", "8", "9", ".")):
            return float(token), end
        return token, end
