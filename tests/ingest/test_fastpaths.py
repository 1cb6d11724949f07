"""The ingest fast paths give exactly what the plain calls they replace give."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.index.event_writer import extra_json
from looma_git.ingest.agent_text import RAW_JSON_MAX, parse_utc, raw_json, utc_z
from looma_git.ingest.base import _CANONICAL, event_id
from looma_git.ingest.codex.ids import id_and_raw, ts_of
from looma_git.ingest.jsonl import parse_json_line

_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["\ud800", "é", "\u2028", "a\"b\\c", "</script>", "\x00"])
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_text, kids, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(sid=_text, seq=st.integers(min_value=0, max_value=10**12),
       obj=st.dictionaries(_text, _json, max_size=6))
def test_codex_id_and_raw_equal_the_two_separate_dumps(sid, seq, obj):
    assert id_and_raw("codex", sid, seq, obj) == (event_id("codex", sid, seq, obj), raw_json(obj))


def test_codex_id_and_raw_on_values_encoders_spell_differently():
    # (msgspec, say, writes 1e-05 as 0.00001 and inf as null: a faster encoder must not)
    objs = [{"a": 1e-05}, {"a": [1e16, -2.5e-07]}, {"a": float("inf")}, {"a": float("-inf")},
            {"b": None, "a": "x"}, {"a": "ratio:0.5 at [1e3"}, {"é": "\u2028", "e": "\x7f\x00"},
            {"z": 2**70, "a": -0, "m": True}, {"a": "\ud800"}]
    for obj in objs:
        assert id_and_raw("codex", "s", 3, obj) == (event_id("codex", "s", 3, obj),
                                                   raw_json(obj)), obj


def test_codex_id_and_raw_keep_the_stub_for_oversized_records():
    obj = {"type": "response_item", "payload": {"output": "x" * (RAW_JSON_MAX + 10)}}
    eid, raw = id_and_raw("codex", "s", 7, obj)
    assert eid == event_id("codex", "s", 7, obj)
    assert raw == raw_json(obj) and json.loads(raw)["truncated"] is True


def test_codex_id_without_raw_for_records_kept_by_reference():
    for obj in ({"type": "response_item", "payload": {"output": "x" * (RAW_JSON_MAX + 10)}},
                {"a": 1e-05, "b": "é"}, {"a": float("inf")}):
        assert id_and_raw("codex", "s", 7, obj, need_raw=False) == (
            event_id("codex", "s", 7, obj), "")


@given(st.one_of(st.text(max_size=30), st.integers(), st.floats(), st.none()))
def test_cached_timestamps_equal_utc_z(value):
    assert ts_of(value) == utc_z(value)
    assert ts_of(value) == utc_z(value)  # the cached answer too


def _loads(text: str):
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "too_deep"
    except ValueError:
        return None, "bad_json"


@settings(max_examples=500, deadline=None)
@given(st.one_of(
    _json.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.text(alphabet='{}[]",:0123456789abcdeflnrstu \\/.-+\t\x0b', max_size=30),
    _json.map(json.dumps).flatmap(
        lambda s: st.integers(0, len(s)).map(lambda i: s[:i] + "}" + s[i:]))))
def test_parse_json_line_equals_json_loads(text):
    assert repr(parse_json_line(text)) == repr(_loads(text))


def test_parse_json_line_reports_deep_nesting():
    assert parse_json_line("[" * 100_000 + "]" * 100_000) == (None, "too_deep")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.none() | _text | _json, max_size=6))
def test_event_id_hashes_the_canonical_dump_of_its_parts(parts):
    # str/None parts take the direct path, anything else the encoder: the same JSON text.
    import hashlib

    blob = _CANONICAL.encode(tuple(parts))
    assert event_id(*parts) == hashlib.sha256(
        blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_stamp = st.builds(
    lambda y, mo, d, h, mi, s, frac: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}Z",
    st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
    st.integers(0, 61), st.integers(0, 61),
    st.sampled_from(["", ".5", ".12", ".123", ".1234", ".123456789"]))


@settings(max_examples=500, deadline=None)
@given(_stamp | st.text(max_size=30))
def test_utc_z_fast_path_equals_the_parse(value):
    assert utc_z(value) == parse_utc(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_text, _text | _json), max_size=6))
def test_extra_json_is_the_sorted_dump_of_the_last_value_per_key(pairs):
    extra = tuple(pairs)
    want = json.dumps(dict(extra), sort_keys=True, ensure_ascii=False) if extra else None
    assert extra_json(extra) == want
