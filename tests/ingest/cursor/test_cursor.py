"""Cursor adapter: IDE SQLite stores, agent transcripts, CLI chats, bad input, discovery."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from looma_git.ingest.base import Cursor, DiscoveryEnv, Source
from looma_git.ingest.cursor import CursorAdapter
from tests.helpers import FIXTURES
from tests.ingest.ide_golden import LOCKER, check_golden, generator, read_all, summarize

gen = generator("cursor", "make_cursor_fixtures")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return gen.build(tmp_path / "home")


def _adapter() -> CursorAdapter:
    return CursorAdapter(busy_timeout=0.2)


def _global(home: Path) -> Path:
    return home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"


def _by_session(events: list) -> dict[str, list]:
    out: dict[str, list] = {}
    for e in events:
        out.setdefault(e.session_native_id, []).append(e)
    return out


def test_generated_home_golden(home: Path) -> None:
    a = _adapter()
    sources = a.discover(DiscoveryEnv(home=home))
    assert sorted({(s.kind, s.key) for s in sources}) == [
        ("jsonl", ""), ("sqlite", "chat"), ("sqlite", "global"), ("sqlite", "workspace"),
        ("text", "")]
    results = read_all(a, sources)
    events = [e for r in results.values() for e in r.events]
    sessions = _by_session(events)
    # composer -> workspace folder via composer.composerData; another via messageRequestContext
    assert {e.project_root for e in sessions[gen.C_SHOP]} == {gen.SHOP}
    assert {e.project_root for e in sessions[gen.C_INFRA]} == {gen.INFRA}
    assert {e.project_root for e in sessions[gen.C_LEGACY]} == {None}  # unknown: never guessed
    # transcript slug dir matched against a known workspace folder (with a space in it)
    assert {e.project_root for e in sessions["5d6e7f80-1111-4b2c-9d3e-ff44ee55dd66"]} == {
        gen.TOOLS}
    assert {e.project_root for e in sessions["9e8d7c6b-2222-4c3d-8e4f-0a1b2c3d4e5f"]} == {None}
    assert {e.project_root for e in sessions[gen.CHAT]} == {gen.SHOP}
    shop = sessions[gen.C_SHOP]
    assert [e.seq for e in shop] == [0, 2, 3, 4, 5, 6, 7, 8, 9]  # b-002 is thinking only
    cmds = [(tc.command, tc.exit_code, tc.is_error) for e in shop for tc in e.tool_calls
            if tc.kind == "shell"]
    assert cmds == [("npm test -- cart", 1, True), ("npm test -- cart", 0, False)]
    assert all(e.ts is None or (e.ts.endswith("Z") and "T" in e.ts) for e in events)
    assert all(e.source == "cursor" for e in events)
    sub = sessions["a1b2c3d4-explore"]
    assert ("parent_session", "7f3c2a10-5b6e-4c1d-9a8b-2e4f6a7b8c90") in sub[0].extra
    # transcripts have no timestamps (ts = file mtime), so the golden leaves ts out
    check_golden("cursor", "generated_home", summarize(results, sources, home, with_ts=False))
    again = read_all(a, sources, {k: r.cursor for k, r in results.items()})
    assert all(r.events == [] for r in again.values())


def test_real_talkreplay_workspace_golden(tmp_path: Path) -> None:
    user = shutil.copytree(FIXTURES / "cursor" / "talkreplay" / "User", tmp_path / "User")
    a = _adapter()
    sources = a.discover(DiscoveryEnv(home=tmp_path / "nohome", overrides={"cursor": (user,)}))
    assert sources == []  # a workspace.json without state.vscdb holds no chat
    # ... but its folder mapping is known, so a matching transcript gets its project root
    assert a._roots is not None and a._roots.get("Users-example-dev-project") == \
        "/Users/example/dev/project"
    proj = tmp_path / ".cursor" / "projects" / "Users-example-dev-project" / "agent-transcripts"
    proj.mkdir(parents=True)
    (proj / "abc.jsonl").write_text('{"role":"user","message":{"content":"hi"}}\n')
    src = Source("cursor", proj / "abc.jsonl", "jsonl")
    r = a.read(src, None)
    assert [e.project_root for e in r.events] == ["/Users/example/dev/project"]
    check_golden("cursor", "talkreplay_workspace", {
        "sources": [], "roots": sorted(set(a._roots.values())),
        "transcript": summarize({src.source_id: r}, [src], tmp_path, with_ts=False)})


def _append_bubble(db: Path, cid: str, bid: str, text: str, *, status: str = "completed",
                   conn: sqlite3.Connection | None = None) -> None:
    own = conn is None
    conn = conn or sqlite3.connect(db)
    key = f"composerData:{cid}"
    data = json.loads(conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?",
                                   (key,)).fetchone()[0])
    data["fullConversationHeadersOnly"].append({"bubbleId": bid, "type": 2})
    data["lastUpdatedAt"] += 1000
    data["status"] = status
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, json.dumps(data)))
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)",
                 (f"bubbleId:{cid}:{bid}", json.dumps(gen._bubble(bid, 2, text))))
    if own:
        conn.commit()
        conn.close()


def test_global_db_incremental_and_generating_hold_back(home: Path) -> None:
    a = _adapter()
    src = Source("cursor", _global(home), "sqlite", "global")
    first = a.read(src, None)
    assert a.read(src, first.cursor).events == []
    _append_bubble(_global(home), gen.C_SHOP, "b-011", "Half an ans", status="generating")
    held = a.read(src, first.cursor)
    assert held.events == []  # the last bubble is still being generated
    conn = sqlite3.connect(_global(home))
    conn.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?",
                 (json.dumps(gen._bubble("b-011", 2, "Half an answer, now complete.")),
                  f"bubbleId:{gen.C_SHOP}:b-011"))
    row = conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?",
                       (f"composerData:{gen.C_SHOP}",)).fetchone()[0]
    data = json.loads(row)
    data["status"] = "completed"
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)",
                 (f"composerData:{gen.C_SHOP}", json.dumps(data)))
    conn.commit()
    conn.close()
    done = a.read(src, held.cursor)
    assert [(e.seq, e.text) for e in done.events] == [(10, "Half an answer, now complete.")]
    assert a.read(src, done.cursor).events == []
    full = a.read(src, None)  # same records -> same ids, whichever run reads them
    assert {e.event_id for e in first.events + done.events} == {e.event_id for e in full.events}


def test_reads_while_cursor_writes_in_wal(home: Path) -> None:
    db = _global(home)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    a = _adapter()
    src = Source("cursor", db, "sqlite", "global")
    first = a.read(src, None)
    writer.execute("BEGIN IMMEDIATE")
    _append_bubble(db, gen.C_INFRA, "i-004", "uncommitted answer", conn=writer)
    during = a.read(src, first.cursor)
    assert during.skips == [] and during.events == []
    writer.execute("COMMIT")
    after = a.read(src, during.cursor)
    assert [e.text for e in after.events] == ["uncommitted answer"]
    writer.close()


def test_locked_global_db_is_a_skip(home: Path) -> None:
    db = _global(home)
    proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(db)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        old = Cursor(content_hash="x", state='{"c": {}}')
        r = _adapter().read(Source("cursor", db, "sqlite", "global"), old)
        assert [s.reason for s in r.skips] == ["locked"] and r.events == []
        assert r.cursor == old
    finally:
        proc.communicate("", timeout=30)


def test_bad_values_never_raise(home: Path) -> None:
    db = _global(home)
    conn = sqlite3.connect(db)
    put = "INSERT INTO cursorDiskKV VALUES (?, ?)"
    conn.execute(put, ("composerData:bad-json", '{"_v": 3, "fullConv'))
    conn.execute(put, ("composerData:a-list", "[1, 2]"))
    conn.execute(put, ("composerData:null", None))
    conn.execute(put, ("composerData:bin", b"\x89PNG\r\n\x1a\n\x00\x00"))
    conn.execute(put, ("composerData:odd", json.dumps({
        "fullConversationHeadersOnly": [{"bubbleId": "x1"}, "junk", {"bubbleId": 7},
                                        {"bubbleId": "x2"}, {"bubbleId": "x3"}]})))
    conn.execute(put, ("bubbleId:odd:x1", b'{"type": 1, "text": "caf\xe9 \xff"}'))
    conn.execute(put, ("bubbleId:odd:x2", "not json"))
    conn.execute(put, ("bubbleId:odd:x3", json.dumps({"type": 2, "toolFormerData": {
        "name": "run_terminal_cmd", "rawArgs": "{broken", "params": 5, "result": "[]"}})))
    conn.commit()
    conn.close()
    r = _adapter().read(Source("cursor", db, "sqlite", "global"), None)
    odd = [e for e in r.events if e.session_native_id == "odd"]
    assert odd[0].text.startswith("caf\ufffd")
    assert odd[1].tool_calls[0].kind == "shell" and odd[1].tool_calls[0].command is None
    reasons = sorted(s.reason for s in r.skips)
    assert reasons == ["bad_json", "bad_json", "bad_json", "not_object"]


def test_corrupt_and_foreign_dbs(tmp_path: Path) -> None:
    a = _adapter()
    junk = tmp_path / "state.vscdb"
    junk.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    assert [s.reason for s in a.read(Source("cursor", junk, "sqlite", "global"), None).skips] \
        == ["corrupt_db"]
    plain = tmp_path / "plain.vscdb"
    sqlite3.connect(plain).execute("CREATE TABLE ItemTable (key, value)").connection.commit()
    r = a.read(Source("cursor", plain, "sqlite", "global"), None)
    assert [s.reason for s in r.skips] == ["unknown_schema"]
    assert a.read(Source("cursor", plain, "sqlite", "workspace"), None).skips == []
    chat = tmp_path / "store.db"
    chat.write_bytes(b"\x00" * 100)
    assert a.read(Source("cursor", chat, "sqlite", "chat"), None).events == []


def test_transcripts_append_truncate_and_txt_growth(home: Path) -> None:
    a = _adapter()
    a.discover(DiscoveryEnv(home=home))
    tdir = home / ".cursor" / "projects" / "home-user-src-scratch" / "agent-transcripts"
    path = tdir / "9e8d7c6b-2222-4c3d-8e4f-0a1b2c3d4e5f.jsonl"
    src = Source("cursor", path, "jsonl")
    first = a.read(src, None)
    assert [s.reason for s in first.skips] == ["bad_json"] and len(first.events) == 2
    assert a.read(src, first.cursor).events == []
    with path.open("a") as fh:  # the partial last line is completed
        fh.write("\n")
    more = a.read(src, first.cursor)
    assert [(e.seq, e.text) for e in more.events] == [(2, "partial tail")]
    path.write_text('{"role":"user","message":{"content":"rewritten"}}\n')
    redo = a.read(src, more.cursor)
    assert [(e.seq, e.text) for e in redo.events] == [(0, "rewritten")]
    txt = tdir / "t.txt"
    txt.write_text("user:\n<user_query>\nfirst\n</user_query>\n\nassistant:\nok\n")
    tsrc = Source("cursor", txt, "text")
    t1 = a.read(tsrc, None)
    assert [e.text for e in t1.events] == ["first", "ok"]
    assert a.read(tsrc, t1.cursor).events == []
    with txt.open("a") as fh:
        fh.write("\nuser:\nsecond\n")
    t2 = a.read(tsrc, t1.cursor)
    assert [(e.seq, e.text) for e in t2.events] == [(2, "second")]
    txt.write_bytes(b"user:\n\xff\xfe broken \x00\n")
    t3 = a.read(tsrc, t2.cursor)
    assert [s.reason for s in t3.skips] == ["invalid_utf8"] and len(t3.events) == 1


def test_chat_store_incremental(home: Path) -> None:
    a = _adapter()
    sources = [s for s in a.discover(DiscoveryEnv(home=home)) if s.key == "chat"]
    first = a.read(sources[0], None)
    assert len(first.events) == 3
    conn = sqlite3.connect(sources[0].path)
    msg = {"role": "user", "content": [{"type": "text", "text": "and a JSON export?"}]}
    conn.execute("INSERT INTO blobs VALUES ('zz', ?)", (json.dumps(msg).encode(),))
    conn.commit()
    conn.close()
    more = a.read(sources[0], first.cursor)
    assert [(e.seq, e.text) for e in more.events] == [(3, "and a JSON export?")]


@pytest.mark.parametrize("platform,environ,rel", [
    ("linux", {}, ".config/Cursor/User"),
    ("linux", {"XDG_CONFIG_HOME": "{tmp}/xdg"}, "../xdg/Cursor/User"),
    ("darwin", {}, "Library/Application Support/Cursor/User"),
    ("win32", {"APPDATA": "{tmp}/roaming"}, "../roaming/Cursor/User"),
])
def test_discovery_per_platform(tmp_path: Path, platform: str, environ: dict[str, str],
                                rel: str) -> None:
    home = tmp_path / "home"
    built = gen.build(tmp_path / "built")
    user = (home / rel).resolve()
    shutil.copytree(built / ".config" / "Cursor" / "User", user)
    shutil.copytree(built / ".cursor", home / ".cursor")
    env = DiscoveryEnv(home=home, platform=platform,
                       environ={k: v.format(tmp=tmp_path) for k, v in environ.items()})
    sources = _adapter().discover(env)
    assert Source("cursor", user / "globalStorage" / "state.vscdb", "sqlite", "global") in sources
    assert sum(s.kind in ("jsonl", "text") for s in sources) == 5
    assert _adapter().discover(DiscoveryEnv(home=tmp_path / "nobody", platform=platform)) == []
