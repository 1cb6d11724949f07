"""The domain package stays pure: frozen dataclasses, no I/O, no import of any other layer."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

DOMAIN = Path(__file__).resolve().parent.parent / "looma_git" / "domain"
ALLOWED = {"__future__", "dataclasses", "typing", "collections.abc"}


def test_domain_imports_only_itself_and_pure_stdlib() -> None:
    bad = []
    for path in sorted(DOMAIN.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{path.name}: {n}" for n in names
                    if n not in ALLOWED and not n.startswith("looma_git.domain")]
    assert not bad, bad


def test_every_domain_dataclass_is_frozen() -> None:
    classes = []
    for path in sorted(DOMAIN.glob("*.py")):
        mod = importlib.import_module(f"looma_git.domain.{path.stem}".removesuffix(".__init__"))
        classes += [v for v in vars(mod).values()
                    if isinstance(v, type) and dataclasses.is_dataclass(v)
                    and v.__module__ == mod.__name__]
    assert len(classes) >= 7
    assert all(c.__dataclass_params__.frozen for c in classes), classes  # type: ignore[attr-defined]
