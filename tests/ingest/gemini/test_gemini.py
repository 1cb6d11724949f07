"""Gemini CLI adapter: fixtures against goldens, discovery, project roots, replay, rewrites."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from looma_git.ingest.base import Cursor, DiscoveryEnv, Source
from looma_git.ingest.gemini import GeminiAdapter, gemini_project_hash, resolve_project_root
from looma_git.ingest.registry import get_adapter
from tests.helpers import FIXTURES
from tests.ingest.cg_golden import check_golden, summarize

GEM = FIXTURES / "gemini-cli"
FILES = sorted(p for p in GEM.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")
               and p.name not in ("projects.json", "trustedFolders.json"))
HOME = GEM / "synthetic" / "home"
MAIN = next(p for p in FILES if p.name == "session-2026-05-01T10-00-11111111.jsonl")
LEGACY = next(p for p in FILES if p.name == "session-2025-09-01T08-00-33333333.json")
SID = "11111111-aaaa-4bbb-8ccc-000000000001"


def read(path: Path, cursor: Cursor | None = None):
    return GeminiAdapter().read(Source("gemini-cli", path, "jsonl"), cursor)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(GEM)))
def test_fixture_matches_golden(path: Path) -> None:
    result = read(path)
    for ev in result.events:
        assert ev.source == "gemini-cli"
        assert ev.ts is None or ev.ts.endswith("Z")
    check_golden("gemini-cli", str(path.relative_to(GEM)), summarize(result))


def test_registry_resolves_adapter() -> None:
    assert isinstance(get_adapter("gemini-cli"), GeminiAdapter)


def test_jsonl_replay_last_write_rewind_and_checkpoint() -> None:
    result = read(MAIN)
    ids = [dict(e.extra)["message_id"] for e in result.events]
    assert ids == ["m2", "m3", "m6", "m7", "c1"]  # m1 injected, m4/m5 rewound
    by_id = {dict(e.extra)["message_id"]: e for e in result.events}
    assert [tc.name for tc in by_id["m3"].tool_calls] == ["read_file"]  # final version only
    assert by_id["m3"].agent_model == "gemini-2.5-pro" and by_id["m3"].role == "assistant"
    calls = {tc.name: tc for tc in by_id["m6"].tool_calls}
    assert calls["replace"].kind == "edit" and calls["write_file"].kind == "write"
    shell = calls["run_shell_command"]
    assert (shell.command, shell.exit_code, shell.test_outcome, shell.is_error) == (
        "pytest -q tests/test_timeout.py", 1, "failed", True)
    assert calls["glob"].is_error and calls["read_many_files"].is_error
    assert calls["read_many_files"].paths == ("README.md", "docs/auth.md")
    assert "- [in_progress] Fix failing timeout test" in by_id["m6"].text
    assert by_id["m7"].role == "system" and by_id["c1"].role == "summary"
    assert result.noise == {"session_context": 1, "rewound": 2, "checkpoint": 1}
    assert sorted(s.reason for s in result.skips) == ["bad_json", "not_object", "unknown_type"]
    ev = by_id["m2"]
    assert ev.session_native_id == SID and ev.project_root == "/home/user/webapp"
    assert dict(ev.extra)["project_hash"] == gemini_project_hash("/home/user/webapp")
    assert ev.ts == "2026-05-01T10:00:02.000Z"
    seqs = [e.seq for e in result.events]
    assert seqs == sorted(seqs)


def test_incremental_jsonl_supersedes_and_retracts(tmp_path: Path) -> None:
    dst = tmp_path / ".gemini" / "tmp" / "webapp" / "chats" / MAIN.name
    dst.parent.mkdir(parents=True)
    lines = MAIN.read_bytes().splitlines(keepends=True)
    dst.write_bytes(b"".join(lines[:6]))  # up to m3's second write (tool call executing)
    first = read(dst)
    m3_v2 = next(e for e in first.events if dict(e.extra)["message_id"] == "m3")
    dst.write_bytes(b"".join(lines[:9]))  # m3 final, m4, m5
    second = read(dst, first.cursor)
    got = {dict(e.extra)["message_id"]: e for e in second.events}
    assert set(got) == {"m3", "m4", "m5"}
    assert dict(got["m3"].extra)["supersedes"] == m3_v2.event_id
    assert got["m3"].seq == m3_v2.seq  # position of first appearance
    dst.write_bytes(b"".join(lines))
    third = read(dst, second.cursor)
    rewind = next(e for e in third.events if e.role == "system" and "retracts" in dict(e.extra))
    assert set(dict(rewind.extra)["retracts"].split(",")) == {got["m4"].event_id,
                                                              got["m5"].event_id}
    assert [dict(e.extra).get("message_id") for e in third.events][1:] == ["m6", "m7", "c1"]
    full = read(MAIN)
    final_ids = {e.event_id for e in full.events}
    assert final_ids <= {e.event_id for e in first.events + second.events + third.events}
    assert read(dst, third.cursor).events == []


def test_partial_and_replaced_jsonl(tmp_path: Path) -> None:
    dst = tmp_path / MAIN.name
    lines = MAIN.read_bytes().splitlines(keepends=True)
    dst.write_bytes(b"".join(lines[:3]) + lines[3][:10])
    first = read(dst)
    assert first.cursor.offset == len(b"".join(lines[:3]))
    dst.write_bytes(lines[0] + b'{"id":"z1","type":"user","content":"other"}\n' * 40)
    again = read(dst, first.cursor)
    assert again.notes  # head changed: rescanned from the start
    assert [dict(e.extra)["message_id"] for e in again.events] == ["z1"]


def _legacy_copy(tmp_path: Path) -> Path:
    dst = tmp_path / LEGACY.name
    shutil.copy(LEGACY, dst)
    return dst


def test_legacy_json_rewrites(tmp_path: Path) -> None:
    dst = _legacy_copy(tmp_path)
    first = read(dst)
    assert [e.role for e in first.events] == ["user", "assistant"]
    shell = first.events[1].tool_calls[0]
    assert (shell.command, shell.exit_code, shell.is_error) == ("make build", 2, True)
    assert read(dst, first.cursor).events == []  # unchanged content hash
    doc = json.loads(dst.read_text())
    doc["messages"].append({"id": "l3", "timestamp": "2025-09-01T08:03:00Z", "type": "user",
                            "content": [{"text": "fix it"}]})
    dst.write_text(json.dumps(doc, indent=2))
    appended = read(dst, first.cursor)
    assert [dict(e.extra)["message_id"] for e in appended.events] == ["l3"]
    assert appended.events[0].seq == 3
    doc["messages"][1]["content"] = "The Makefile references a removed target `dist`."
    del doc["messages"][2]
    dst.write_text(json.dumps(doc))
    changed = read(dst, appended.cursor)
    roles = [(e.role, dict(e.extra).get("message_id")) for e in changed.events]
    assert roles == [("system", None), ("assistant", "l2")]
    assert dict(changed.events[0].extra)["retracts"] == appended.events[0].event_id
    assert dict(changed.events[1].extra)["supersedes"] == first.events[1].event_id


def test_legacy_json_torn_write_keeps_cursor(tmp_path: Path) -> None:
    dst = _legacy_copy(tmp_path)
    first = read(dst)
    dst.write_text(LEGACY.read_text()[:100])
    torn = read(dst, first.cursor)
    assert [s.reason for s in torn.skips] == ["bad_json"] and torn.cursor == first.cursor


def test_wrong_types_never_raise(tmp_path: Path) -> None:
    dst = tmp_path / "session-x.jsonl"
    rows = [
        {"sessionId": 5, "projectHash": None},
        {"id": "a", "type": "user", "content": 42},
        {"id": "b", "type": "gemini", "content": {"text": "part as object"}, "toolCalls": {"x": 1}},
        {"id": "c", "type": "gemini", "content": [None, 3, {"text": "ok"}],
         "toolCalls": [None, {"name": 7}, {"name": "replace", "args": "not-a-dict"},
                       {"name": "run_shell_command", "args": {"command": ["ls"]},
                        "result": "nope", "status": 3}]},
        {"id": "d", "type": "mystery", "content": "?"},
        {"$rewindTo": 12},
        {"$set": "not a dict"},
        {"id": "e", "type": "user", "timestamp": 1714557600000, "content": "epoch ms"},
    ]
    body = b"".join(json.dumps(r).encode() + b"\n" for r in rows) + b'{"id":"f","content":"\xff"}\n'
    dst.write_bytes(body)
    result = read(dst)
    texts = {dict(e.extra)["message_id"]: e.text for e in result.events}
    assert texts["b"] == "part as object" and texts["c"] == "ok" and texts["e"] == "epoch ms"
    assert next(e for e in result.events if dict(e.extra)["message_id"] == "e").ts == \
        "2024-05-01T10:00:00.000Z"
    assert "invalid_utf8" in {s.reason for s in result.skips}
    assert result.noise == {"unknown_type": 2, "empty_message": 1}  # d and f; a is empty
    bad_json = tmp_path / "session-y.json"
    for content in (b"[1,2]", b'"str"', b'{"messages": 5}', b"\xff\xfe{"):
        bad_json.write_bytes(content)
        read(bad_json)  # must not raise


def test_discovery_and_project_roots(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(HOME, home)
    legacy_dir = LEGACY.parent.parent.name
    webapp = home / ".gemini" / "tmp" / "webapp" / "chats"
    (webapp / (MAIN.name[:-1])).write_text("{}")  # a migrated legacy twin: skipped
    sources = GeminiAdapter().discover(DiscoveryEnv(home=home))
    rel = sorted(str(s.path.relative_to(home / ".gemini" / "tmp")) for s in sources)
    assert rel == sorted([
        f"{legacy_dir}/chats/{LEGACY.name}",
        "oldproj/logs.json",
        f"webapp/chats/{SID}/22222222-bbbb-4ccc-8ddd-000000000002.jsonl",
        f"webapp/chats/{MAIN.name}",
    ])
    by_name = {s.path.name: s for s in sources}
    assert by_name[MAIN.name].kind == "jsonl" and by_name["logs.json"].kind == "json"
    roots = {s.path.name: {e.project_root for e in read(s.path).events} for s in sources}
    assert roots[LEGACY.name] == {"/home/user/legacyproj"}  # via trustedFolders.json hash
    assert roots["logs.json"] == {"/home/user/oldproj"}
    sub = read(by_name["22222222-bbbb-4ccc-8ddd-000000000002.jsonl"].path)
    assert {dict(e.extra).get("kind") for e in sub.events} == {"subagent"}
    # Slug resolved through projects.json when the marker is gone; unknown hash stays None.
    (home / ".gemini" / "tmp" / "webapp" / ".project_root").unlink()
    assert resolve_project_root(home / ".gemini" / "tmp" / "webapp") == "/home/user/webapp"
    (home / ".gemini" / "trustedFolders.json").unlink()
    assert resolve_project_root(LEGACY.parent.parent.parent / legacy_dir) == "/home/user/legacyproj"
    moved = home / ".gemini" / "tmp" / legacy_dir
    assert resolve_project_root(moved) is None
    ev = read(moved / "chats" / LEGACY.name).events[0]
    assert ev.project_root is None and dict(ev.extra)["project_dir"] == legacy_dir
    assert GeminiAdapter().discover(DiscoveryEnv(home=tmp_path / "nobody")) == []
    only = GeminiAdapter().discover(DiscoveryEnv(home=home, overrides={"gemini-cli": (LEGACY,)}))
    assert [s.path for s in only] == [LEGACY]


def test_project_hash_matches_sha256() -> None:
    assert gemini_project_hash("/home/user/legacyproj") == hashlib.sha256(
        b"/home/user/legacyproj").hexdigest() == LEGACY.parent.parent.name
