"""Codex CLI adapter: every fixture against its golden, discovery, incremental reads, bad input."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
import zstandard

from looma_git.ingest.base import Cursor, DiscoveryEnv, Source
from looma_git.ingest.codex import CodexAdapter
from looma_git.ingest.registry import get_adapter
from tests.helpers import FIXTURES
from tests.ingest.cg_golden import check_golden, summarize

CODEX = FIXTURES / "codex"
FILES = sorted(p for p in CODEX.rglob("*") if p.is_file() and p.name.endswith(
    (".jsonl", ".json", ".jsonl.zst")))
REAL_ROLLOUT = next(p for p in FILES if p.name.startswith("rollout-2026-05-11"))
SYNTH = next(p for p in FILES if p.name.startswith("rollout-2025-08-14"))
LEGACY = next(p for p in FILES if p.name.endswith(".json"))
ZST = next(p for p in FILES if p.name.endswith(".zst"))


def read(path: Path, cursor: Cursor | None = None):
    return CodexAdapter().read(Source("codex", path, "jsonl"), cursor)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CODEX)))
def test_fixture_matches_golden(path: Path) -> None:
    result = read(path)
    assert not [s for s in result.skips if s.reason in ("unreadable", "bad_compression")]
    for ev in result.events:
        assert ev.source == "codex"
        assert ev.ts is None or ev.ts.endswith("Z")
    check_golden("codex", str(path.relative_to(CODEX)), summarize(result))


def test_registry_resolves_adapter() -> None:
    assert isinstance(get_adapter("codex"), CodexAdapter)


def test_real_rollout_fields() -> None:
    result = read(REAL_ROLLOUT)
    ev = result.events[0]
    assert ev.session_native_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert ev.project_root == "/Users/Sample_User/repos/codemie-ai/codemie-code"
    assert ev.agent_model == "gpt-5.5" and ev.ts == "2026-05-11T08:27:17.494Z"
    assert ev.role == "user" and ev.text == "show tools"
    # 13 agent messages appear twice (event_msg + response_item) and are counted once.
    assert sum(1 for e in result.events if e.role == "assistant" and e.text
               and not e.tool_calls) == 13
    assert result.noise["duplicate_text"] == 15  # 13 assistant + 2 user copies
    assert result.noise["agents_md"] == 1 and result.noise["environment_context"] == 1
    assert {s.reason for s in result.skips} == {"encrypted"}
    seqs = [e.seq for e in result.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    edits = [tc for e in result.events if e.role == "tool" for tc in e.tool_calls
             if tc.name == "apply_patch"]
    assert len(edits) == 3 and all(tc.exit_code == 0 for tc in edits)
    assert any(p.endswith("codemie-code-reasoning.test.ts") for tc in edits for p in tc.paths)
    failed = [tc for e in result.events for tc in e.tool_calls
              if tc.kind == "shell" and tc.exit_code not in (None, 0)]
    assert {tc.exit_code for tc in failed} == {1, 2}
    tests = [tc for e in result.events for tc in e.tool_calls if tc.test_outcome]
    assert {tc.test_outcome for tc in tests} == {"passed", "failed"}


def test_synthetic_enveloped_session() -> None:
    result = read(SYNTH)
    ev = result.events[0]
    assert (ev.git_branch, ev.git_remote) == ("fix/login-timeout",
                                             "git@github.com:example/webapp.git")
    assert ev.agent_model == "gpt-5-codex"
    tools = {tc.call_id: tc for e in result.events if e.role == "tool" for tc in e.tool_calls}
    assert tools["call_ls1"].command == "rg -n timeout src/auth" and tools["call_ls1"].exit_code == 0
    assert tools["call_ap1"].paths == ("/home/user/webapp/src/auth/login.py",
                                      "/home/user/webapp/tests/test_login_timeout.py")
    assert tools["call_t1"].test_outcome == "passed"
    assert (tools["call_t2"].command, tools["call_t2"].exit_code) == ("npm test", 1)
    assert tools["call_t2"].test_outcome == "failed"
    assert result.noise["duplicate_result"] == 1 and result.noise["tool_ack"] == 1
    plan = next(e for e in result.events if e.tool_calls and e.tool_calls[0].name == "update_plan")
    assert "- [pending] Fix the UI login test" in plan.text
    assert [e.role for e in result.events].count("summary") == 1
    # world_state (0.16x+) is consumed silently; unknown types stay skips (bad-input test)
    assert [s.reason for s in result.skips] == ["encrypted"]


def test_legacy_single_json_era() -> None:
    result = read(LEGACY)
    assert {e.session_native_id for e in result.events} == {"6f1c2a3b-1111-4c2d-9e8f-0a1b2c3d4e5f"}
    patch = next(tc for e in result.events for tc in e.tool_calls if tc.name == "apply_patch")
    assert patch.paths == ("src/tool/cli.py", "tests/test_verbose.py") and patch.kind == "edit"
    outcome = [tc.test_outcome for e in result.events for tc in e.tool_calls if tc.test_outcome]
    assert outcome == ["failed"]
    assert all(e.ts == "2025-04-20T09:15:02.118Z" for e in result.events)
    again = read(LEGACY, result.cursor)
    assert again.events == [] and again.cursor == result.cursor


def test_bare_era_and_filename_fallback(tmp_path: Path) -> None:
    bare = next(p for p in FILES if "rollout-4444" in p.name)
    result = read(bare)
    assert [e.role for e in result.events] == ["user", "assistant"]
    assert all(dict(e.extra)["era"] == "bare" for e in result.events)
    nameless = tmp_path / "rollout-2025-07-01T10-00-00-aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee.jsonl"
    nameless.write_text('{"type":"message","role":"user","content":"hi <cwd>x</cwd>"}\n')
    ev = read(nameless).events[0]
    assert ev.session_native_id == "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" and ev.text.startswith("hi")


def test_zst_matches_plain_and_rereads_by_hash(tmp_path: Path) -> None:
    zst_result = read(ZST)
    assert zst_result.events and zst_result.cursor.content_hash
    plain = tmp_path / ZST.name.removesuffix(".zst")
    plain.write_bytes(zstandard.ZstdDecompressor().decompress(ZST.read_bytes()))
    assert [e.event_id for e in read(plain).events] == [e.event_id for e in zst_result.events]
    assert read(ZST, zst_result.cursor).events == []
    tools = [tc for e in zst_result.events for tc in e.tool_calls if e.role == "tool"]
    assert [(tc.command, tc.exit_code, tc.test_outcome) for tc in tools] == [
        ("go test ./...", 0, "passed")]
    assert zst_result.noise["duplicate_result"] == 1


def test_corrupt_zst_is_skipped(tmp_path: Path) -> None:
    bad = tmp_path / "rollout-x.jsonl.zst"
    bad.write_bytes(ZST.read_bytes()[:-10])
    assert [s.reason for s in read(bad).skips] == ["bad_compression"]
    bad.write_bytes(b"not zstd at all\n")
    assert [s.reason for s in read(bad).skips] == ["bad_compression"]


def _split_copy(src: Path, dst: Path, n: int) -> list[bytes]:
    lines = src.read_bytes().splitlines(keepends=True)
    dst.write_bytes(b"".join(lines[:n]))
    return lines


def test_incremental_reads_equal_full_read(tmp_path: Path) -> None:
    full = read(REAL_ROLLOUT)
    dst = tmp_path / REAL_ROLLOUT.name
    lines = _split_copy(REAL_ROLLOUT, dst, 0)
    events, cursor, noise = [], None, 0
    for cut in (7, 40, 41, 150, 151, 300, len(lines)):
        dst.write_bytes(b"".join(lines[:cut]))
        result = read(dst, cursor)
        events += result.events
        noise += result.noise.get("duplicate_text", 0)
        cursor = result.cursor
    assert [e.event_id for e in events] == [e.event_id for e in full.events]
    assert [e.seq for e in events] == [e.seq for e in full.events]
    assert noise == full.noise["duplicate_text"]
    assert read(dst, cursor).events == []


def test_partial_last_line_waits_for_next_read(tmp_path: Path) -> None:
    dst = tmp_path / SYNTH.name
    lines = SYNTH.read_bytes().splitlines(keepends=True)
    dst.write_bytes(b"".join(lines[:5]) + lines[5][:20])
    first = read(dst)
    assert first.cursor.offset == len(b"".join(lines[:5]))
    dst.write_bytes(b"".join(lines))
    second = read(dst, first.cursor)
    full = read(SYNTH)
    assert [e.event_id for e in first.events + second.events] == [e.event_id for e in full.events]


def test_truncated_or_replaced_file_is_rescanned(tmp_path: Path) -> None:
    dst = tmp_path / SYNTH.name
    shutil.copy(SYNTH, dst)
    first = read(dst)
    dst.write_bytes(SYNTH.read_bytes().splitlines(keepends=True)[0])  # truncated
    again = read(dst, first.cursor)
    assert again.notes and again.cursor.offset < first.cursor.offset
    other = REAL_ROLLOUT.read_bytes()[:200_000]
    dst.write_bytes(other[: other.rfind(b"\n") + 1])  # replaced, longer than before
    replaced = read(dst, again.cursor)
    assert replaced.notes
    assert replaced.events[0].session_native_id == "019e1625-789d-76c0-80ab-3724b5ddb799"


BAD_LINES = [
    b'{"timestamp":"2025-08-14T12:00:00Z","type":"session_meta","payload":{"id":"bad-1","cwd":7}}\n',
    b"not json at all\n",
    b"[1, 2, 3]\n",
    b'"a string"\n',
    b'{"timestamp":"2025-08-14T12:00:01Z","type":"response_item","payload":"oops"}\n',
    b'{"timestamp":"2025-08-14T12:00:02Z","type":"response_item","payload":{"type":"message",'
    b'"role":"user","content":"content as a plain string"}}\n',
    b'{"timestamp":"2025-08-14T12:00:03Z","type":"response_item","payload":{"type":"message",'
    b'"role":"user","content":[7, null, {"type":"input_text","text":5}]}}\n',
    b'{"timestamp":"2025-08-14T12:00:04Z","type":"response_item","payload":{"type":"function_call",'
    b'"name":"shell","arguments":42,"call_id":["x"]}}\n',
    b'{"timestamp":"2025-08-14T12:00:05Z","type":"response_item","payload":{"type":'
    b'"function_call_output","call_id":"c9","output":{"weird":true}}}\n',
    b'{"timestamp":12345,"type":"event_msg","payload":{"type":"exec_command_end","exit_code":"0",'
    b'"command":"ls"}}\n',
    b'{"timestamp":"2025-08-14T12:00:06Z","type":"event_msg","payload":{"type":"user_message",'
    b'"message":"caf\xe9 invalid utf-8"}}\n',
    b'{"timestamp":"2025-08-14T12:00:07Z","type":"event_msg","payload":{"type":"patch_apply_end",'
    b'"changes":[1],"success":"yes"}}\n',
    b'{"timestamp":"not a time","type":"compacted","payload":{"message":null}}\n',
    b'{"no":"type"}\n',
    b'{"timestamp":"2025-08-14T12:00:08Z","type":"event_msg","payload":{"type":"agent_message"'
    b',"message":"truncat',
]


def test_bad_input_never_raises(tmp_path: Path) -> None:
    dst = tmp_path / "rollout-2025-08-14T12-00-00-bad.jsonl"
    dst.write_bytes(b"".join(BAD_LINES))
    result = read(dst)
    reasons = [s.reason for s in result.skips]
    assert {"bad_json", "not_object", "invalid_utf8", "malformed", "unknown_type"} <= set(reasons)
    assert all(e.session_native_id == "bad-1" for e in result.events)
    texts = [e.text for e in result.events if e.role == "user"]
    assert "content as a plain string" in texts and any("invalid utf-8" in t for t in texts)
    assert result.cursor.offset == len(b"".join(BAD_LINES[:-1]))  # partial line left


def test_event_ids_stable_across_runs() -> None:
    one, two = read(SYNTH), read(SYNTH)
    assert [e.event_id for e in one.events] == [e.event_id for e in two.events]
    assert len({e.event_id for e in one.events}) == len(one.events)


def _home_with_rollouts(root: Path) -> Path:
    day = root / "sessions" / "2025" / "08" / "14"
    day.mkdir(parents=True)
    shutil.copy(SYNTH, day / SYNTH.name)
    (day / (SYNTH.name + ".zst")).write_bytes(b"twin")  # plain wins over its .zst twin
    shutil.copy(LEGACY, root / "sessions" / LEGACY.name)
    (root / "archived_sessions").mkdir()
    shutil.copy(ZST, root / "archived_sessions" / ZST.name)
    shutil.copy(SYNTH, root / "archived_sessions" / SYNTH.name)  # sessions/ wins
    (root / "sessions" / "notes.txt").write_text("x")
    return root


def test_discovery_honours_codex_home_and_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _home_with_rollouts(home / ".codex")
    custom = _home_with_rollouts(tmp_path / "custom")
    adapter = CodexAdapter()
    default = adapter.discover(DiscoveryEnv(home=home))
    names = sorted(s.path.name for s in default)
    assert names == sorted([SYNTH.name, LEGACY.name, ZST.name])
    assert all(str(s.path).startswith(str(home / ".codex")) for s in default)
    assert "archived_sessions" not in str(next(s for s in default if s.path.name == SYNTH.name).path)
    kinds = {s.path.name: s.kind for s in default}
    assert kinds[SYNTH.name] == "jsonl" and kinds[ZST.name] == "json"
    via_env = adapter.discover(DiscoveryEnv(home=home, environ={"CODEX_HOME": str(custom)}))
    assert {s.path.parent.parent.parent.parent.parent for s in via_env
            if s.path.name == SYNTH.name} == {custom}
    both = adapter.discover(DiscoveryEnv(home=home, environ={
        "CODEX_HOME": f"{custom},{home / '.codex'}"}))
    assert len(both) == 3  # same rollout names: one copy each
    override = adapter.discover(DiscoveryEnv(home=home, overrides={"codex": (LEGACY,)}))
    assert [s.path for s in override] == [LEGACY]
    assert adapter.discover(DiscoveryEnv(home=tmp_path / "nowhere")) == []


def test_dump_is_json_serializable() -> None:
    for ev in read(ZST).events:
        json.loads(ev.raw_json)


def test_rollout_records_are_kept_by_reference_to_their_line() -> None:
    """A rollout's events carry their record as its file span; the span holds that record."""
    data = SYNTH.read_bytes()
    events = read(SYNTH).events
    assert events
    for ev in events:
        assert ev.raw_json == "" and len(ev.raw_spans) == 1
        offset, length = ev.raw_spans[0]
        record = json.loads(data[offset:offset + length])
        assert ev.seq == offset + length  # the record whose end offset is the event's seq
        assert isinstance(record, dict)
    for ev in read(ZST).events + read(LEGACY).events:  # no file offsets: copied, as before
        assert not ev.raw_spans and json.loads(ev.raw_json)


def test_event_ids_are_the_canonical_dump_whatever_the_numbers(tmp_path: Path) -> None:
    # (ids of records without a float are hashed from msgspec's sorted dump: a float, spelled
    # differently there, or a line json alone reads, must still give json's canonical id)
    from looma_git.ingest.base import event_id

    meta = {"timestamp": "2026-01-02T03:04:05.000Z", "type": "session_meta",
            "payload": {"id": "0199aaaa-0000-7000-8000-000000000001", "cwd": "/r"}}
    lines = [json.dumps(meta).encode()]
    outputs = ['{"exit_code": 0, "n": 1e-05}', '{"duration": 1e16, "big": 18446744073709551616}',
               '{"x": "caf\u00e9 \u2028 \\u0000"}', '{"ratio": 0.5, "ok": true}',
               '{"plain": [1, 2, {"z": null, "a": -0}]}']
    for i, extra in enumerate(outputs):
        rec = {"timestamp": f"2026-01-02T03:04:{10 + i:02d}.000Z", "type": "event_msg",
               "payload": {"type": "agent_message", "message": f"step {i} done"}}
        line = json.dumps(rec)[:-1] + ', "extra": ' + extra + "}"
        lines.append(line.encode())
    lines.append(b'{"timestamp":"2026-01-02T03:05:00.000Z","type":"event_msg","payload":'
                 b'{"type":"agent_message","message":"huge"},"n":1e999}')
    lines.append(b'{"timestamp":"2026-01-02T03:05:01.000Z","type":"event_msg","payload":'
                 b'{"type":"agent_message","message":"nan"},"n":NaN}')
    path = tmp_path / "rollout-2026-01-02T03-04-05-0199aaaa-0000-7000-8000-000000000001.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    data = path.read_bytes()
    events = read(path).events
    assert len(events) == len(lines) - 1
    for ev in events:
        (start, length), = ev.raw_spans
        record = json.loads(data[start:start + length])
        assert ev.event_id == event_id("codex", ev.session_native_id, start + length, record)


def test_events_stating_the_same_facts_share_one_extra_tuple() -> None:
    # (one object per run of equal facts: event_writer.extra_json answers it from its memo)
    from looma_git.index.event_writer import extra_json

    events = read(REAL_ROLLOUT).events
    runs = [(a, b) for a, b in itertools.pairwise(events) if a.extra == b.extra]
    assert len(runs) >= len(events) // 2
    assert all(a.extra is b.extra for a, b in runs)
    for ev in events:
        assert extra_json(ev.extra) == json.dumps(dict(ev.extra), sort_keys=True,
                                                  ensure_ascii=False)
