"""Deterministic YAML: nasty values round-trip through write -> git show -> load."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.errors import InvalidDataError
from looma_git.ledger import yamlio

_CS: tuple[Literal["Cs"]] = ("Cs",)
NASTY = ["no", "on", "yes", "off", "y", "n", "NO", "True", "0123", "1e3", "2026-11-29",
         "2026-11-29T20:55:40Z", "null", "~", "", " ", "  lead", "trail ", "a: b", "#x", "- x",
         "x #y", "{a}", "[b]", "*alias", "&anchor", "!tag", "%dir", "@at", "`tick", "'q'",
         '"dq"', "multi\nline", "tab\there", "\x00\x01\x7f\x85\u2028\ufeff", "é", "😀",
         "0x1F", "1_000", "1:20", ".inf", ".NaN", "-", "?", ":", "|", ">", "=", "<<", "a,b"]


def test_nasty_strings_roundtrip_fast_and_ruamel() -> None:
    doc = {"v": 1, "s": NASTY, "m": {k or "empty": k for k in NASTY}, "f": [0.1, 1e-05, 1e16,
           -2.5, 1.0], "i": [0, -1, 2**62], "b": [True, False, None]}
    data = yamlio.dump(doc)
    assert yamlio.load(data, what="t", max_bytes=1 << 20) == doc
    assert yamlio._ruamel_load(data.decode(), "t") == doc
    assert yamlio.dump(doc) == data  # deterministic


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63),
                     st.floats(allow_nan=False, allow_infinity=False),
                     st.text(st.characters(exclude_categories=_CS), max_size=20))
_values = st.recursive(_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(
    st.text(st.characters(exclude_categories=_CS), max_size=8), c, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(st.characters(exclude_categories=_CS), min_size=1,
                               max_size=8), _values, min_size=1, max_size=5))
def test_any_value_reads_back_identically(doc: dict) -> None:
    data = yamlio.dump(doc)
    assert yamlio._ruamel_load(data.decode(), "t") == doc
    assert yamlio.load(data, what="t", max_bytes=1 << 22) == doc


@pytest.mark.parametrize("text,needle", [
    ("a: &x 1\nb: *x\n", "anchors"), ("a: !!str 1\n", "tags"), ("a: !foo x\n", "tags"),
    ("a: !!python/object:os.system x\n", "tags"), ("a: [1, 2\n", "invalid YAML"),
])
def test_hostile_yaml_rejected(text: str, needle: str) -> None:
    with pytest.raises(InvalidDataError, match=needle):
        yamlio.load(text.encode(), what="t", max_bytes=1 << 20)


def test_size_and_utf8_limits() -> None:
    with pytest.raises(InvalidDataError, match="exceeds"):
        yamlio.load(b"a: " + b"x" * 100 + b"\n", what="t", max_bytes=50)
    with pytest.raises(InvalidDataError, match="UTF-8"):
        yamlio.load(b"a: \xff\xfe\n", what="t", max_bytes=1000)
