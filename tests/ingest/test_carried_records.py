"""The records an adapter carries (ReadResult.records) are the ones reading their spans back
gives, so the ingest keys what edit events wrote from them (index/written.keyed_at_read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from looma_git.index.event_writer import raw_ref
from looma_git.index.events import stored_records_many
from looma_git.ingest.base import KEYED_KINDS, Source
from looma_git.ingest.claude import ClaudeAdapter
from looma_git.ingest.codex import CodexAdapter
from tests.helpers import FIXTURES

_TRANSCRIPTS = sorted(
    [("claude-code", p) for p in (FIXTURES / "claude-code").rglob("*.jsonl")]
    + [("codex", p) for p in (FIXTURES / "codex").rglob("*.jsonl")]
    + [("claude-code" if "/.claude/" in str(p) else "codex", p)
       for p in (FIXTURES / "real-cli").rglob("*.jsonl")
       if "/.claude/" in str(p) or "/.codex/" in str(p)])


def _read(agent: str, path: Path):  # -> ReadResult
    adapter = ClaudeAdapter() if agent == "claude-code" else CodexAdapter()
    return adapter.read(Source(agent, path, "jsonl"), None)


@pytest.mark.parametrize(("agent", "path"), _TRANSCRIPTS,
                         ids=[str(p.relative_to(FIXTURES)) for _, p in _TRANSCRIPTS])
def test_carried_records_are_what_their_spans_read_back_to(agent: str, path: Path) -> None:
    rr = _read(agent, path)
    spans = [s for ev in rr.events if any(c.kind in KEYED_KINDS for c in ev.tool_calls)
             for s in ev.raw_spans]
    assert set(rr.records) <= {offset for ev in rr.events for offset, _ in ev.raw_spans}
    # every keyed event's records are carried on these small transcripts
    assert {offset for offset, _ in spans} <= set(rr.records)
    back = stored_records_many([raw_ref(str(path), (s,)) for s in spans])
    assert repr(back) == repr([[rr.records[offset]] for offset, _ in spans])


def _edit_line(text: str, uuid: str) -> str:
    return json.dumps({"type": "assistant", "sessionId": "s1", "cwd": "/r", "uuid": uuid,
                       "timestamp": "2026-03-02T10:00:00Z", "message": {
                           "id": f"m-{uuid}", "role": "assistant", "content": [{
                               "type": "tool_use", "id": f"t-{uuid}", "name": "Write",
                               "input": {"file_path": "/r/a.py", "content": text}}]}})


def test_a_record_json_scrubbed_is_read_back_not_carried(tmp_path: Path) -> None:
    """A line with a lone surrogate escape is decoded by json.loads and scrubbed (U+FFFD) as
    read, which reading it back does not do: its event is keyed from the line read back."""
    from looma_git.index.written import keyed_at_read
    from looma_git.ingest.prepare import _row

    class Resolver:  # every path in the repository (files are not what this is about)
        def relpath(self, raw: str, cwd: str | None) -> str:
            return Path(raw).name

    lone = _edit_line("value_with_a_lone = '\ud800 here'\nsecond_line_of_it = 2", "u1")
    plain = _edit_line("an_ordinary_line_written = 1\nanother_ordinary_line = 2", "u2")
    path = tmp_path / "s1.jsonl"
    path.write_text(lone + "\n" + plain + "\n", encoding="utf-8")
    rr = _read("claude-code", path)
    assert sorted(ev.raw_spans[0][0] for ev in rr.events) == [0, len(lone) + 1]
    assert list(rr.records) == [len(lone) + 1]  # the plain line only
    source = Source("claude-code", path, "jsonl")
    rows = [_row("claude-code", ev, Resolver(), {}, source)  # type: ignore[arg-type]
            for ev in rr.events]
    spans = [ev.raw_spans for ev in rr.events]
    assert keyed_at_read(rows, spans, rr.records) == keyed_at_read(rows)
