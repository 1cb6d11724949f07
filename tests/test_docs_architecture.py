"""docs/architecture.md's module table: one row per package, none doubled (a union merge of
two branches that each edited a row kept both versions three times in stop 30 and 31)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_each_package_has_one_row() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = Counter(re.findall(r"^\| `([a-z_]+)/` \|", text, flags=re.M))
    assert {name: n for name, n in rows.items() if n > 1} == {}
    packages = {p.name for p in (ROOT / "looma_git").iterdir()
                if (p / "__init__.py").is_file() and not p.name.startswith("_")}
    assert packages - {"cli"} <= set(rows), sorted(packages - {"cli"} - set(rows))
