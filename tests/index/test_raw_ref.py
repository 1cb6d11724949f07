"""Raw records kept by reference: the stored form, and reading one back from the transcript."""

from __future__ import annotations

import json
import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from looma_git.index import storedb
from looma_git.index.event_writer import raw_ref
from looma_git.index.events import raw_record, read_spans

_spans = st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**9)), max_size=5)


@given(path=st.text(max_size=40), spans=_spans)
def test_raw_ref_is_the_compact_json_of_path_and_spans(path, spans):
    ref = raw_ref(path, tuple(spans))
    assert ref == json.dumps({"path": path, "spans": [list(s) for s in spans]},
                             ensure_ascii=False, separators=(",", ":"))
    assert json.loads(ref) == {"path": path, "spans": [list(s) for s in spans]}


def _store(tmp_path, raw_json: str, ref: str | None) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "s.db")
    storedb.ensure_schema(conn)
    conn.execute("INSERT INTO events(event_id, raw_json, raw_ref) VALUES('e1', ?, ?)",
                 (raw_json, ref))
    return conn


def test_raw_record_reads_the_spans_back_redacted(tmp_path):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    lines = [b'{"type":"x","n":1}\n', b'{"type":"y","text":"push with ' + token.encode() + b'"}\n',
             b'{"type":"z"}\n']
    f = tmp_path / "t.jsonl"
    f.write_bytes(b"".join(lines))
    spans = ((0, len(lines[0])), (len(lines[0]) + len(lines[1]), len(lines[2])),
             (len(lines[0]), len(lines[1])))
    conn = _store(tmp_path, "", raw_ref(str(f), spans))
    got = raw_record(conn, "e1")
    assert got is not None and token not in got and "[REDACTED:" in got
    parts = got.split("\n")
    assert [json.loads(p)["type"] for p in parts] == ["x", "z", "y"]


def test_raw_record_is_none_once_the_transcript_changed_under_it(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_bytes(b'{"type":"x"}\n{"type":"y"}\n')
    ref = raw_ref(str(f), ((13, 13),))
    assert read_spans(ref) == ['{"type":"y"}']
    f.write_bytes(b'{"type":"a much longer first line"}\n')  # rewritten
    assert read_spans(ref) is None
    f.unlink()
    assert read_spans(ref) is None
    assert read_spans("not json") is None


def test_raw_record_of_an_inline_record_and_of_an_unknown_event(tmp_path):
    conn = _store(tmp_path, '{"kept":"inline"}', None)
    assert raw_record(conn, "e1") == '{"kept":"inline"}'
    assert raw_record(conn, "nope") is None


def test_what_a_session_wrote_is_read_from_a_record_kept_by_reference(tmp_path):
    """Content links need the edit's text: a Claude Code record stored by reference (raw_json
    empty) is read back from the transcript for `written_lines`."""
    from looma_git.index.written import update_written
    from looma_git.pipeline.content import line_key

    new = "def exchange_code(code, verifier):\n    return client.fetch_token(code=code)"
    rec = {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Edit",
           "input": {"file_path": "/r/auth.py", "old_string": "pass", "new_string": new}}]}}
    line = (json.dumps(rec) + "\n").encode()
    f = tmp_path / "s.jsonl"
    f.write_bytes(line)
    conn = sqlite3.connect(tmp_path / "s.db")
    storedb.ensure_schema(conn)
    conn.execute("INSERT INTO events(event_id, agent, session_id, ts, raw_json, raw_ref, "
                 "ingested_at) VALUES('e1', 'claude-code', 's1', '2026-03-02T10:00:00Z', '', ?, 1)",
                 (raw_ref(str(f), ((0, len(line)),)),))
    conn.execute("INSERT INTO tool_calls(event_id, idx, name, kind) VALUES('e1', 0, 'Edit', 'edit')")
    conn.execute("INSERT INTO tool_files(event_id, idx, relpath) VALUES('e1', 0, 'auth.py')")
    assert update_written(conn) == 1
    keys = {k for (k,) in conn.execute("SELECT h FROM written_lines WHERE file='auth.py'")}
    assert keys == {line_key(x) for x in new.split("\n")}
