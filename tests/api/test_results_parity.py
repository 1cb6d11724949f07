"""The read path's plain dataclasses (wire/plain.py) mirror their wire schemas field for field,
so the fast path (no pydantic) and `--json`/MCP can never drift apart."""

from __future__ import annotations

import dataclasses
import inspect

from looma_git.wire import cli as schemas
from looma_git.wire import plain as results


def test_every_result_dataclass_has_exactly_its_schema_fields() -> None:
    checked = 0
    for _, cls in inspect.getmembers(results, inspect.isclass):
        if not dataclasses.is_dataclass(cls) or not hasattr(cls, "_schema"):
            continue
        model = getattr(schemas, cls._schema)
        assert {f.name for f in dataclasses.fields(cls)} == set(model.model_fields), cls
        checked += 1
    assert checked >= 5
