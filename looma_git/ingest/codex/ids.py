"""Codex event ids and raw JSON from one canonical dump per record, and cached timestamps."""

from __future__ import annotations

import hashlib
import json
from typing import Any

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


def id_and_raw(agent: str, sid: str, seq: int, obj: Any, need_raw: bool = True
               ) -> tuple[str, str]:
    """`(event_id(agent, sid, seq, obj), raw_json(obj))` with `obj` serialized once.

    Both are the sorted, compact, non-ASCII-escaping dump of `obj`; event_id wraps it in the
    JSON array of its parts. Records come from json.loads, so `default=str` in event_id never
    fires and the two dumps are the same text. Anything unusual takes the original calls.
    `need_raw=False` (a record kept by reference): raw comes back "", and an oversized record
    is not dumped a second time for its stub.
    """
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
