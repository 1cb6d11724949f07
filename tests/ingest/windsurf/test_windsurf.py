"""Windsurf adapter: detect-only; encrypted Cascade files are reported, never read, never fatal."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from looma_git.ingest.base import DiscoveryEnv, Source
from looma_git.ingest.windsurf import WindsurfAdapter, entropy
from tests.helpers import FIXTURES
from tests.ingest.ide_golden import check_golden, generator, read_all, summarize

gen = generator("windsurf", "make_windsurf_fixtures")


def test_generated_home_golden(tmp_path: Path) -> None:
    home = gen.build(tmp_path / "home")
    a = WindsurfAdapter()
    sources = a.discover(DiscoveryEnv(home=home))
    assert [(s.kind, s.key) for s in sources] == [("dir", "cascade"), ("sqlite", "global")]
    results = read_all(a, sources)
    assert all(r.events == [] for r in results.values())
    cascade = results[sources[0].source_id]
    assert sorted(s.reason for s in cascade.skips) == ["encrypted"] * 3 + ["unknown_format"]
    assert "cannot be read" in cascade.notes[0] and "4 Cascade conversation(s)" in \
        cascade.notes[0]
    assert "UI state only" in results[sources[1].source_id].notes[0]
    check_golden("windsurf", "generated_home", summarize(results, sources, home))
    again = read_all(a, sources, {k: r.cursor for k, r in results.items()})
    assert all(r.skips == [] and r.events == [] for r in again.values())
    # a changed conversation is reported again, the others are not
    pb = home / ".codeium" / "windsurf" / "cascade" / f"{gen.CONVERSATIONS[0]}.pb"
    pb.write_bytes(gen.pseudo_random("changed", 5000))
    third = a.read(sources[0], results[sources[0].source_id].cursor)
    assert [s.location for s in third.skips] == [str(pb)]


def test_real_fixture_dir_golden(tmp_path: Path) -> None:
    real = shutil.copytree(FIXTURES / "windsurf", tmp_path / "windsurf")
    a = WindsurfAdapter()
    sources = a.discover(DiscoveryEnv(home=tmp_path, overrides={"windsurf": (real,)}))
    results = read_all(a, sources)
    check_golden("windsurf", "fixture_dir", {
        "sources": [s.kind for s in sources],
        "summary": summarize(results, sources, real)})


def test_hostile_inputs_never_raise(tmp_path: Path) -> None:
    cascade = tmp_path / "home" / ".codeium" / "windsurf" / "cascade"
    cascade.mkdir(parents=True)
    (cascade / "empty.pb").write_bytes(b"")
    (cascade / "dir.pb").mkdir()
    (cascade / "bad\udcffname.pb".encode("utf-8", "surrogateescape").decode(
        "utf-8", "replace")).write_bytes(os.urandom(10))
    os.symlink(cascade / "missing", cascade / "dangling.pb")
    gdir = tmp_path / "home" / ".config" / "Windsurf" / "User" / "globalStorage"
    gdir.mkdir(parents=True)
    (gdir / "state.vscdb").write_bytes(b"garbage" * 50)
    a = WindsurfAdapter(busy_timeout=0.1)
    sources = a.discover(DiscoveryEnv(home=tmp_path / "home"))
    results = read_all(a, sources)
    assert all(r.events == [] for r in results.values())
    db_result = results[sources[-1].source_id]
    assert [s.reason for s in db_result.skips] == ["corrupt_db"]
    # an old build with chat keys in ItemTable: reported, not read
    conn = sqlite3.connect(tmp_path / "old.vscdb")
    conn.execute("CREATE TABLE ItemTable (key TEXT, value BLOB)")
    conn.execute("INSERT INTO ItemTable VALUES ('cascade.chatdata', ?)",
                 ('{"tabs": [{"id": 1}]}',))
    conn.commit()
    conn.close()
    r = a.read(Source("windsurf", tmp_path / "old.vscdb", "sqlite", "global"), None)
    assert r.events == [] and "cascade.chatdata" in r.notes[0] and "not read" in r.notes[0]


def test_discovery_honours_platform_and_xdg(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codeium" / "windsurf" / "cascade").mkdir(parents=True)
    mac = home / "Library" / "Application Support" / "Windsurf" / "User" / "globalStorage"
    mac.mkdir(parents=True)
    (mac / "state.vscdb").write_bytes(b"")
    a = WindsurfAdapter()
    assert [s.key for s in a.discover(DiscoveryEnv(home=home, platform="darwin"))] == [
        "cascade", "global"]
    assert [s.key for s in a.discover(DiscoveryEnv(home=home))] == ["cascade"]
    xdg = tmp_path / "xdg" / "Windsurf" / "User" / "globalStorage"
    xdg.mkdir(parents=True)
    (xdg / "state.vscdb").write_bytes(b"")
    found = a.discover(DiscoveryEnv(home=home, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}))
    assert [s.path for s in found][-1] == xdg / "state.vscdb"
    assert a.discover(DiscoveryEnv(home=tmp_path / "nobody")) == []


def test_entropy() -> None:
    assert entropy(b"") == 0.0
    assert entropy(b"aaaa") == 0.0
    assert entropy(gen.pseudo_random("x", 4096)) > 7.9
