"""Golden files: the one update switch (LOOMA_UPDATE_GOLDEN=1) and the one comparison."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

UPDATE = os.environ.get("LOOMA_UPDATE_GOLDEN") == "1"
HOW = "regenerate with LOOMA_UPDATE_GOLDEN=1 and say so in the commit"


def check_text(path: Path, text: str, what: str = "") -> None:
    """Assert `path` holds exactly `text`; with the switch on, write it first."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; {HOW}"
    assert path.read_text(encoding="utf-8") == text, f"{what or 'golden mismatch'}: {path}; {HOW}"


def dump_json(value: Any) -> str:
    """The stored form of a JSON golden: indented, sorted, UTF-8, newline-terminated."""
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def check_json(path: Path, value: Any) -> None:
    """Assert `path` holds `value` as JSON (compared parsed, so key order never matters)."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_json(value), encoding="utf-8")
    assert path.exists(), f"missing golden {path}; {HOW}"
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(dump_json(value)), \
        f"golden mismatch: {path}; {HOW}"
