"""Codex event ids and raw JSON from one canonical dump per record, and cached timestamps."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import msgspec

from looma_git.index.event_writer import c_encoder
from looma_git.ingest.agent_text import RAW_JSON_MAX, raw_json, utc_z
from looma_git.ingest.base import event_id

# What json.dumps(..., ensure_ascii=False, separators=(",", ":"), sort_keys=True) builds on
# every call, built once.
_CANON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_CANON_C = c_encoder(_CANON)  # its C encoder, made once (encode() makes one per call)
_TS_CACHE: dict[str, str | None] = {}
_TS_CACHE_MAX = 4096


def ts_of(value: Any) -> str | None:
    """`utc_z(value)`, memoized for strings: a rollout repeats each timestamp on many records."""
    if not isinstance(value, str):
        return utc_z(value)
    hit = _TS_CACHE.get(value, _TS_CACHE)
    if hit is not _TS_CACHE:
        return hit  # type: ignore[return-value]
    out = utc_z(value)
    if len(_TS_CACHE) >= _TS_CACHE_MAX:
        _TS_CACHE.clear()
    _TS_CACHE[value] = out
    return out


# Rollout lines are decoded by msgspec with a float hook that counts the floats it meets
# (float(text): what json.loads makes of a number, 1e999 included). A record decoded without
# a float (no NaN/Infinity, no lone surrogate either: those lines take the json path) is
# dumped by msgspec's sorted encoder to the very bytes of the canonical dump, 2x faster for
# an id; only floats are spelled differently there (`1e16`, `0.000015` for 1e+16, 1.5e-05).
_FLOATS = [0]


def _count_float(text: str) -> float:
    _FLOATS[0] += 1
    return float(text)


DECODE: Callable[[bytes], Any] = msgspec.json.Decoder(float_hook=_count_float).decode
_SORTED_DUMP = msgspec.json.Encoder(order="sorted").encode
_STR_JSON: Callable[[str], str] = json.encoder.encode_basestring


def floats_decoded() -> int:
    """How many floats DECODE has met so far (a line met none when this did not move)."""
    return _FLOATS[0]


def id_and_raw(agent: str, sid: str, seq: int, obj: Any, need_raw: bool = True, *,
               plain: bool = False) -> tuple[str, str]:
    """`(event_id(agent, sid, seq, obj), raw_json(obj))` with `obj` serialized once.

    Both are the sorted, compact, non-ASCII-escaping dump of `obj`; event_id wraps it in the
    JSON array of its parts. Records come from json.loads, so `default=str` in event_id never
    fires and the two dumps are the same text. Anything unusual takes the original calls.
    `need_raw=False` (a record kept by reference): raw comes back "", and an oversized record
    is not dumped a second time for its stub. `plain`: `obj` is a record DECODE decoded
    without a float, which msgspec may dump.
    """
    if plain and type(obj) is dict and type(sid) is str and type(seq) is int:
        try:
            data = _SORTED_DUMP(obj)
        except (TypeError, ValueError, OverflowError, RecursionError):
            data = b""
        if data:
            head = f"[{_STR_JSON(agent)},{_STR_JSON(sid)},{seq},"
            eid = hashlib.sha256(head.encode("utf-8", "surrogatepass") + data + b"]"
                                 ).hexdigest()[:32]
            if not need_raw:
                return eid, ""
            text = data.decode("utf-8")
            return eid, text if len(text) <= RAW_JSON_MAX else raw_json(obj)
    try:
        if _CANON_C is not None and type(obj) is dict:
            blob = "".join(_CANON_C(obj, 0))
            head = "".join(_CANON_C([agent, sid, seq], 0))
        else:
            blob = _CANON.encode(obj)
            head = _CANON.encode([agent, sid, seq])
    except (TypeError, ValueError, RecursionError):
        return event_id(agent, sid, seq, obj), raw_json(obj) if need_raw else ""
    whole = f"{head[:-1]},{blob}]"
    eid = hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    if not need_raw:
        return eid, ""
    return eid, blob if len(blob) <= RAW_JSON_MAX else raw_json(obj)
