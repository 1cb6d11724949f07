"""Raw records read back by byte span: the msgspec check gives what json.loads alone gave."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from looma_git.index.event_writer import raw_ref
from looma_git.index.events import read_spans, stored_raw, stored_records_many

_LINES = [
    b'{"type":"user","message":{"content":"hi \\u00e9"}}',
    b'{"n": NaN, "x": Infinity}',  # msgspec refuses these, json takes them
    b'{"s":"\\ud800 lone"}',  # a lone surrogate escape: json only
    b'{"big":1e999}',  # out of msgspec's range, json gives inf
    b'{"bad utf8":"\xff\xfe"}',  # read back with U+FFFD, as before
    b'{"cut": "half a rec',  # a rewritten file: no longer an object
    b'{"a":1} {"b":2}',  # two values on one line
    b'not json at all }',
    b'{"ctl":"a\x01b"}',  # a raw control character: invalid for both
    b'{}',
]


def _reference(data: bytes) -> str | None:
    """The check as it was: decode with replacement, then json.loads."""
    line = data.strip().decode("utf-8", "replace")
    if not (line.startswith("{") and line.endswith("}")):
        return None
    try:
        json.loads(line)
    except ValueError:
        return None
    return line


def _one(tmp_path: Path, data: bytes) -> list[str] | None:
    f = tmp_path / "t.jsonl"
    f.write_bytes(b"x\n" + data + b"\n")
    return read_spans(raw_ref(str(f), ((2, len(data) + 1),)))


def test_each_line_reads_back_as_json_loads_judged_it(tmp_path):
    for data in _LINES:
        want = _reference(data)
        assert _one(tmp_path, data) == (None if want is None else [want]), data


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_LINES) | st.binary(max_size=30).map(lambda b: b"{" + b + b"}"),
                min_size=1, max_size=4))
def test_records_of_several_lines_read_back_alike(tmp_path_factory, lines):
    f = tmp_path_factory.mktemp("spans") / "t.jsonl"
    blob = b"".join(ln.replace(b"\n", b" ") + b"\n" for ln in lines)
    f.write_bytes(blob)
    spans, at = [], 0
    for ln in lines:
        spans.append((at, len(ln) + 1))
        at += len(ln) + 1
    want = [_reference(ln.replace(b"\n", b" ")) for ln in lines]
    ref = raw_ref(str(f), tuple(spans))
    expect = None if any(w is None for w in want) else "\n".join(want)  # type: ignore[arg-type]
    assert stored_raw("", ref) == expect


def test_records_parse_back_as_json_loads_parsed_them(tmp_path):
    # (msgspec parses what it accepts; NaN, 1e999, a lone surrogate and invalid UTF-8 are
    # json.loads's, as before; repr: NaN != NaN)
    refs, want = [], []
    for n, data in enumerate(_LINES):
        f = tmp_path / f"r{n}.jsonl"
        f.write_bytes(b"x\n" + data + b"\n")
        refs.append(raw_ref(str(f), ((2, len(data) + 1),)))
        line = _reference(data)
        want.append(None if line is None else [json.loads(line)])
    assert repr(stored_records_many(refs)) == repr(want)
