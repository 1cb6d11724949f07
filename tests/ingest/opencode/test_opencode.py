"""OpenCode adapter: opencode.db (live, WAL, locked, corrupt), legacy JSON tree, discovery."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from looma_git.ingest.base import DiscoveryEnv, Source
from looma_git.ingest.opencode import OpenCodeAdapter
from tests.helpers import FIXTURES
from tests.ingest.ide_golden import LOCKER, check_golden, generator, read_all, summarize

gen = generator("opencode", "make_opencode_db")
MAIN = "ses_01JHmainsession000000000001"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return gen.build(tmp_path / "data")


def _adapter() -> OpenCodeAdapter:
    return OpenCodeAdapter(busy_timeout=0.2)


def test_generated_db_golden(db: Path) -> None:
    a = _adapter()
    sources = a.discover(DiscoveryEnv(home=Path("/nonexistent"),
                                      environ={"OPENCODE_DATA_DIR": str(db.parent)}))
    assert [s.path for s in sources] == [db]
    results = read_all(a, sources)
    r = results[sources[0].source_id]
    assert not r.skips
    main = [e for e in r.events if e.session_native_id == MAIN]
    assert [e.seq for e in main] == list(range(7))
    assert all(e.ts and e.ts.endswith("Z") and e.source == "opencode" for e in r.events)
    assert {e.project_root for e in main} == {gen.WORKTREE}
    bash = [tc for e in main for tc in e.tool_calls if tc.kind == "shell"]
    assert [(tc.command, tc.exit_code, tc.is_error) for tc in bash] == [
        ("pytest -q tests/test_coupons.py", 1, True), ("pytest -q", 0, False),
        ("git push", None, True)]
    assert "reasoning" not in " ".join(e.text for e in r.events)  # reasoning parts skipped
    assert any(e.role == "summary" for e in main)  # compaction summary is not an assistant turn
    child = [e for e in r.events if e.session_native_id.startswith("ses_01JHchild")]
    assert ("parent_session", MAIN) in child[0].extra
    check_golden("opencode", "generated_db", summarize(results, sources, db.parent))


def test_real_legacy_tree_golden(tmp_path: Path) -> None:
    tree = shutil.copytree(FIXTURES / "opencode" / "codemie-code", tmp_path / "oc")
    a = _adapter()
    sources = a.discover(DiscoveryEnv(home=tmp_path, environ={"OPENCODE_DATA_DIR": str(tree)}))
    assert [s.kind for s in sources] == ["dir"]
    results = read_all(a, sources)
    r = results[sources[0].source_id]
    assert not r.skips and len(r.events) == 2
    # every message and part file of the real sample was consumed
    assert {x for e in r.events for k, x in e.extra if k == "message_id"} == {
        p.stem for p in (tree / "storage" / "message").rglob("*.json")}
    check_golden("opencode", "codemie-code_storage", summarize(results, sources, tree))
    again = a.read(sources[0], r.cursor)
    assert again.events == []


def test_second_read_emits_nothing_and_appends_are_incremental(db: Path) -> None:
    a = _adapter()
    src = Source("opencode", db, "sqlite")
    first = a.read(src, None)
    assert a.read(src, first.cursor).events == []
    conn = sqlite3.connect(db)
    b = gen.Builder(conn)
    b.t, b.n = gen.T0 + 100_000, 900
    b.message(MAIN, *gen.user("One more thing: bump the version."))
    conn.commit()
    conn.close()
    second = a.read(src, first.cursor)
    assert [(e.role, e.seq, e.text) for e in second.events] == [
        ("user", 7, "One more thing: bump the version.")]
    # ids are content hashes: a fresh full read yields the same ids for the same records
    full = a.read(src, None)
    assert {e.event_id for e in first.events + second.events} == {e.event_id for e in full.events}


def test_unfinished_assistant_message_is_held_back(db: Path) -> None:
    a = _adapter()
    src = Source("opencode", db, "sqlite")
    first = a.read(src, None)
    conn = sqlite3.connect(db)
    b = gen.Builder(conn)
    b.t, b.n = gen.T0 + 200_000, 950
    running = {"role": "assistant", "modelID": "m", "time": {"created": b.t + 1000}}
    mid = b.message(MAIN, running, [gen.tool("bash", "running", {"command": "make"})])
    conn.commit()
    held = a.read(src, first.cursor)
    assert held.events == []
    data = dict(running, time={"created": b.t, "completed": b.t + 5}, finish="stop")
    conn.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(data), mid))
    conn.execute("UPDATE part SET data = ? WHERE message_id = ?",
                 (json.dumps(gen.tool("bash", "completed", {"command": "make"}, "ok",
                                      {"exit": 0})), mid))
    conn.commit()
    conn.close()
    done = a.read(src, held.cursor)
    assert [(e.tool_calls[0].command, e.tool_calls[0].exit_code) for e in done.events] == [
        ("make", 0)]


def test_reads_while_a_writer_holds_the_db_open_in_wal(db: Path) -> None:
    a = _adapter()
    src = Source("opencode", db, "sqlite")
    first = a.read(src, None)
    writer = sqlite3.connect(db, isolation_level=None)
    assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    writer.execute("BEGIN IMMEDIATE")  # an ongoing, uncommitted write
    b = gen.Builder(writer)
    b.t, b.n = gen.T0 + 300_000, 970
    b.message(MAIN, *gen.user("uncommitted"))
    during = a.read(src, first.cursor)
    assert during.skips == [] and during.events == []
    writer.execute("COMMIT")
    b.message(MAIN, *gen.user("committed later"))  # autocommit, connection still open
    after = a.read(src, during.cursor)
    assert [e.text for e in after.events] == ["uncommitted", "committed later"]
    writer.close()
    assert not Path(str(db) + "-journal").exists()


def test_locked_database_is_a_skip_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    conn = sqlite3.connect(path)
    conn.executescript(gen.SCHEMA)
    conn.close()
    proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        r = _adapter().read(Source("opencode", path, "sqlite"), None)
        assert [s.reason for s in r.skips] == ["locked"] and r.events == []
        assert r.cursor.state == ""  # nothing consumed: the next run retries
    finally:
        proc.communicate("", timeout=30)


def test_corrupt_and_foreign_databases(tmp_path: Path) -> None:
    a = _adapter()
    garbage = tmp_path / "opencode.db"
    garbage.write_bytes(b"this is not sqlite at all" * 100)
    assert [s.reason for s in a.read(Source("opencode", garbage, "sqlite"), None).skips] == [
        "corrupt_db"]
    foreign = tmp_path / "opencode-dev.db"
    sqlite3.connect(foreign).execute("CREATE TABLE unrelated (x)").connection.commit()
    assert [s.reason for s in a.read(Source("opencode", foreign, "sqlite"), None).skips] == [
        "unknown_schema"]
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert a.read(Source("opencode", empty, "sqlite"), None).events == []


def test_malformed_rows_become_skips(db: Path) -> None:
    conn = sqlite3.connect(db)
    rows = [("msg_zz1", b'{"role": "user", "time": '), ("msg_zz2", b"[1, 2, 3]"),
            ("msg_zz3", b'{"role":"user","text":"\xff\xfe bad utf8"}'),
            ("msg_zz4", b'{"no_role": true}')]
    for i, (mid, data) in enumerate(rows):
        conn.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                     (mid, MAIN, gen.T0 + 500_000 + i, 0, data))
    conn.execute("INSERT INTO part VALUES ('prt_zz', 'msg_zz3', ?, 0, 0, ?)",
                 (MAIN, b"\x00\x01 not json"))
    conn.execute("INSERT INTO part VALUES ('prt_zy', 'msg_zz3', ?, 0, 0, ?)",
                 (MAIN, json.dumps({"type": "text", "text": "still readable"})))
    conn.commit()
    conn.close()
    r = _adapter().read(Source("opencode", db, "sqlite"), None)
    reasons = sorted(s.reason for s in r.skips)
    assert reasons == ["bad_json", "bad_json", "not_object"]
    assert any(e.text == "still readable" for e in r.events)
    assert r.noise.get("unknown_role") == 1


def test_legacy_json_defers_to_db_and_survives_garbage(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(FIXTURES / "opencode" / "codemie-code" / "storage", data / "storage")
    bad = data / "storage" / "message" / "test-session-1" / "msg-bad.json"
    bad.write_bytes(b"\xff{not json")
    (data / "storage" / "part" / "msg-user-1" / "part-list.json").write_text("[]")
    a = _adapter()
    src = Source("opencode", data / "storage", "dir")
    r = a.read(src, None)
    assert len(r.events) == 2
    assert sorted(s.reason for s in r.skips) == ["bad_json", "invalid_utf8", "not_object"]
    # once the session exists in opencode.db the JSON copy is not read again
    conn = sqlite3.connect(data / "opencode.db")
    conn.executescript(gen.SCHEMA)
    conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                 "time_created, time_updated) VALUES ('test-session-1','p','s','/d','t','1',0,0)")
    conn.commit()
    conn.close()
    r2 = a.read(src, None)
    assert r2.events == [] and r2.noise == {"in_db": 1}


def test_discovery_honours_env(tmp_path: Path) -> None:
    a = _adapter()
    home = tmp_path / "home"
    default = gen.build(home / ".local" / "share" / "opencode")
    assert [s.path for s in a.discover(DiscoveryEnv(home=home))] == [default]
    xdg = gen.build(tmp_path / "xdg" / "opencode", name="opencode-beta.db")
    found = a.discover(DiscoveryEnv(home=home, environ={"XDG_DATA_HOME": str(tmp_path / "xdg")}))
    assert [s.path for s in found] == [xdg]
    one, two = gen.build(tmp_path / "d1"), gen.build(tmp_path / "d2")
    found = a.discover(DiscoveryEnv(home=home, environ={
        "OPENCODE_DATA_DIR": f"{one.parent}, {two.parent}", "XDG_DATA_HOME": "/nowhere"}))
    assert [s.path for s in found] == [one, two]
    custom = gen.build(tmp_path / "d3", name="custom.db")
    found = a.discover(DiscoveryEnv(home=home, environ={"OPENCODE_DB": str(custom)}))
    assert [s.path for s in found] == [default, custom]
    found = a.discover(DiscoveryEnv(home=home, overrides={"opencode": (one,)}))
    assert [s.path for s in found] == [one]
    assert a.discover(DiscoveryEnv(home=tmp_path / "empty")) == []
