"""iter_jsonl's msgspec fast path yields exactly what its json path yields, line by line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from looma_git.ingest import jsonl
from looma_git.ingest.base import Skip

# Lines where a fast decoder could plausibly disagree with json.loads: numbers at and past the
# 64-bit and digit limits, NaN/Infinity, surrogates (paired, lone, in raw UTF-8), invalid
# UTF-8, BOM, control characters, nesting around the recursion limit, non-objects, duplicates.
EDGE_LINES = [
    b'{"a": 1}',
    b'{"a":18446744073709551615,"b":18446744073709551616,"c":-9223372036854775809}',
    b'{"a":' + b"9" * 4300 + b"}",
    b'{"a":' + b"9" * 4301 + b"}",
    b'{"a":123456789012345678901234567890.5e-3,"b":1e308,"c":2.2250738585072014e-308}',
    b'{"a":1e400}', b'{"a":-1e400}', b'{"a":1.5e-400}', b'{"a":-0.0,"b":-0}',
    b'{"a":NaN}', b'{"a":Infinity}', b'{"a":-Infinity}',
    b'{"a":"\\ud83d\\ude00"}', b'{"a":"\\ud800"}', b'{"a":"\\udc00x"}', b'{"a":"\\ud800\\u0041"}',
    b'{"\\ud800":1}', b'{"a":"\\udbff\\udfff"}',
    b'{"a":"\xed\xa0\x80"}', b'{"a":"\xff"}', b'{"a":"caf\xc3\xa9"}', b'\xef\xbb\xbf{"a":1}',
    b'{"a":"\x01"}', b'{"a":"\\u0000"}', b'{"a":"tab\there"}',
    b'{"a":1,"a":2}', b'{"a":1}x', b'{"a":01}', b'{"a":.5}', b'{"a":"\\x"}', b'{"a":1,}',
    b'[1,2]', b'"text"', b'12', b'null', b'{}',
    b'{"a":' + b"[" * 900 + b"]" * 900 + b"}",
    b'{"a":' + b"[" * 1100 + b"]" * 1100 + b"}",
    b'{"a":' + b'{"b":' * 1200 + b"1" + b"}" * 1200 + b"}",
    # whitespace around the object: JSON's own (decoded as read) and bytes.strip's wider set
    b'  {"a": 1}  ', b'{"a": 2}\r', b'\t{"a": 3}\t', b'{"a": 4}\x0c', b'\x0b{"a": 5}',
    b'{"a": NaN}\x0c',
]


def _read(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[list[tuple[object, ...]], list[Skip], list[int]]:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(jsonl, "_FAST", None)
        skips: list[Skip] = []
        pos = [0]
        lines = [(_kinds(ln.obj), ln.lineno, ln.end, ln.start, ln.raw)
                 for ln in jsonl.iter_jsonl(path, 0, skips, pos_out=pos)]
    return lines, skips, pos


def _kinds(value: object) -> list[object]:
    """The value as a flat token list with every scalar's type (repr alone would not tell 1
    from True in a set, NaN != NaN makes equality useless, and deep values exceed recursion)."""
    out: list[object] = []
    stack: list[object] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.append(("dict", len(v)))
            for k, x in reversed(list(v.items())):
                stack.append(x)
                stack.append(("key", k))
        elif isinstance(v, list):
            out.append(("list", len(v)))
            stack.extend(reversed(v))
        elif isinstance(v, float) and math.isnan(v):
            out.append(("nan",))
        else:
            out.append((type(v).__name__, v))
    return out


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert jsonl._FAST is not None, "msgspec is a dependency: the fast path must be on"
    assert _read(path, True, monkeypatch) == _read(path, False, monkeypatch)


def test_edge_lines_read_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "edge.jsonl"
    path.write_bytes(b"\n".join(EDGE_LINES) + b"\n  \n{\"tail\": 1}")
    _same(path, monkeypatch)
    lines, skips, _ = _read(path, True, monkeypatch)
    # The json path's verdicts stand: these are the reasons it gives (not the fast parser's).
    assert {s.reason for s in skips} >= {"bad_json", "not_object", "lone_surrogate",
                                          "invalid_utf8", "too_deep"}
    assert len(lines) > 20


def test_recursion_limit_moves_by_a_level_or_two(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # json's limit counts the caller's Python frames, so where a line nested ~1,000 deep
    # turns from parsed into too_deep already depended on where iter_jsonl was called from;
    # msgspec counts its levels a little differently. Every depth away from that boundary
    # reads alike; at it, the verdict may move by at most a few levels.
    path = tmp_path / "deep.jsonl"
    depths = range(700, 1100)
    path.write_bytes(b"".join(b'{"a":' + b"[" * n + b"]" * n + b"}\n" for n in depths))
    fast, fast_skips, fast_pos = _read(path, True, monkeypatch)
    slow, slow_skips, slow_pos = _read(path, False, monkeypatch)
    assert fast_pos == slow_pos and slow and slow_skips
    assert {s.reason for s in fast_skips} == {s.reason for s in slow_skips} == {"too_deep"}
    # lines 1..k parse, the rest are too deep, in both; k differs by at most 3 levels
    assert [ln[1] for ln in slow] == list(range(1, len(slow) + 1))
    assert [ln[1] for ln in fast] == list(range(1, len(fast) + 1))
    assert abs(len(fast) - len(slow)) <= 3
    common = min(len(fast), len(slow))
    assert fast[:common] == slow[:common]


def test_fixture_transcripts_read_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parents[2]
    paths = sorted(p for d in ("fixtures", "tests/ingest") for p in (root / d).rglob("*.jsonl"))
    assert len(paths) > 20
    for path in paths:
        _same(path, monkeypatch)


_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
            | st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\x00", "é", "\u2028"]))
_values = st.recursive(_scalars, lambda kids: st.lists(kids, max_size=4)
                       | st.dictionaries(st.text(max_size=6), kids, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(objs=st.lists(st.dictionaries(st.text(max_size=6), _values, max_size=5), max_size=6),
       ascii_=st.booleans())
def test_generated_lines_read_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    objs: list[dict[str, object]], ascii_: bool) -> None:
    path = tmp_path / "gen.jsonl"
    text = "".join(json.dumps(o, ensure_ascii=ascii_) + "\n" for o in objs)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    _same(path, monkeypatch)


def test_codex_float_counting_decoder_reads_alike(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from looma_git.ingest.codex.ids import DECODE

    path = tmp_path / "edge.jsonl"
    path.write_bytes(b"\n".join(EDGE_LINES) + b"\n")
    skips: list[Skip] = []
    got = [(_kinds(ln.obj), ln.lineno, ln.end, ln.start, ln.raw)
           for ln in jsonl.iter_jsonl(path, 0, skips, decoder=DECODE)]
    assert (got, skips) == _read(path, False, monkeypatch)[:2]
