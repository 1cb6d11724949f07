"""Canonical JSON and the content hash that names every ledger op."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from looma_git.errors import InvalidDataError


def canonical_json(obj: Any) -> bytes:
    """Sorted keys, no insignificant whitespace, UTF-8 (not \\u-escaped), no NaN/inf."""
    try:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
        return text.encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise InvalidDataError(f"value cannot be stored in the ledger: {exc}") from exc


def content_id(fields: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON of every field except `id`."""
    body = {k: v for k, v in fields.items() if k != "id"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def derived_id(prefix: str, op_id: str, part: int | None = None) -> str:
    """Ids of objects an op creates: `wi_`+op.id[:10], or for split parts a hash of `op.id:i`."""
    if part is None:
        return prefix + op_id[:10]
    return prefix + hashlib.sha256(f"{op_id}:{part}".encode()).hexdigest()[:10]
