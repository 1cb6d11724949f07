"""How op payload values become state fields: the settable fields and their normalisation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from looma_git.ledger.canonical import canonical_json

# Payload fields a workitem.create/update and a memory op may set.
WI_FIELDS = ("title", "kind", "status", "summary", "files", "aliases", "branch", "confidence",
             "band", "features", "evidence", "sessions", "last_active")
MEM_FIELDS = ("kind", "text", "workitem", "confidence", "band", "features", "lifecycle",
              "superseded_by", "evidence", "said_at")
_LISTS = ("files", "aliases", "evidence", "sessions")


def iterable(value: Any) -> bool:
    """Whether a payload value can be iterated. YAML gives str, list, dict, number, bool or
    null; a str or dict is read as it always was (its characters, its keys)."""
    return value is not None and not isinstance(value, (int, float))


def sorted_unique(items: Any) -> tuple[str, ...]:
    """The strings of `items`, sorted and deduplicated (anything else dropped)."""
    if not iterable(items):
        return ()
    return tuple(sorted({i for i in items if isinstance(i, str)}))


def union_dicts(a: Iterable[dict[str, Any]], b: Iterable[dict[str, Any]]) -> tuple[dict, ...]:
    """The mappings of both, deduplicated and ordered by their canonical JSON."""
    seen: dict[bytes, dict[str, Any]] = {}
    for item in [*(a if iterable(a) else ()), *(b if iterable(b) else ())]:
        if isinstance(item, dict):
            seen.setdefault(canonical_json(item), item)
    return tuple(seen[k] for k in sorted(seen))


def set_fields(obj: Any, payload: dict[str, Any], names: tuple[str, ...], skip: set[str]) -> None:
    """Copy the payload's `names` (except `skip`) onto `obj`, normalised. A value no fold step
    could read is ignored (a confidence that is not a number, a list field given a number,
    features that are not a mapping), so an op from another clone can never stop a fold."""
    for name in names:
        if name not in payload or name in skip:
            continue
        value = payload[name]
        if name in _LISTS and value and not iterable(value):
            continue
        if name == "features" and value and not isinstance(value, dict):
            continue
        if name in ("files", "aliases"):
            value = sorted_unique(value or [])
        elif name in ("evidence", "sessions"):
            value = union_dicts((), value or [])
        elif name == "confidence":
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            value = float(min(1.0, max(0.0, value)))
        elif name == "features":
            value = {k: float(v) for k, v in (value or {}).items()
                     if isinstance(v, (int, float)) and not isinstance(v, bool)}
        setattr(obj, name, value)
