"""The drain's quick look at transcripts (hooks/scan.py): it skips the scan only when no source
can hold new lines, and a grown, new or cursor-less session still gets ingested."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from looma_git.api import hooks as api
from looma_git.gitrepo import find_repo
from looma_git.hooks import scan
from looma_git.ingest.base import DiscoveryEnv
from tests.helpers import cli, commit_file


def _line(sid: str, n: int, repo: Path, text: str) -> str:
    return json.dumps({"sessionId": sid, "cwd": str(repo), "gitBranch": "main",
                       "version": "2.0.76", "isSidechain": False, "userType": "external",
                       "type": "user", "uuid": f"{sid}-u{n}",
                       "parentUuid": f"{sid}-u{n - 1}" if n else None,
                       "timestamp": f"2026-11-20T10:{n:02d}:00Z",
                       "message": {"role": "user", "content": text}}) + "\n"


def _session(home: Path, repo: Path, sid: str, lines: int = 2) -> Path:
    d = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    d.mkdir(parents=True, exist_ok=True)
    f = d / f"{sid}.jsonl"
    f.write_text("".join(_line(sid, n, repo, f"work on the parser, step {n}")
                         for n in range(lines)))
    return f


def _drain(repo: Path, home: Path, sha: str) -> dict[str, str]:
    paths = find_repo(repo)
    with (paths.state_dir / "queue").open("a") as fh:
        fh.write(f"{sha} 1700000000\n")
    rep = api.drain_report(paths, DiscoveryEnv(home=home, environ={}, platform=sys.platform))
    return {s.name: s.detail for s in rep.steps}


def test_the_scan_is_skipped_only_while_no_source_changed(repo: Path, scrubbed_env: Path,
                                                          monkeypatch) -> None:
    monkeypatch.setenv("LOOMA_DRAIN_SETTLE_S", "0")
    cli(repo, "init")
    home = scrubbed_env
    files = [_session(home, repo, f"s{i}") for i in range(3)]
    cli(repo, "ingest")
    paths = find_repo(repo)
    assert scan.unchanged(paths) is not None
    sha = commit_file(repo, "a.txt", "1", "one")
    assert _drain(repo, home, sha)["ingest"].startswith("no new transcript lines")

    # the running session grows: it is among the newest sources, so the drain ingests it
    with files[-1].open("a") as fh:
        fh.write(_line("s2", 2, repo, "and the tokenizer"))
    assert scan.unchanged(paths) is None
    got = _drain(repo, home, commit_file(repo, "a.txt", "2", "two"))["ingest"]
    assert "events_added=1" in got, got
    assert scan.unchanged(paths) is not None

    # a new session (a new file in the project directory) is seen too
    _session(home, repo, "s3")
    assert scan.unchanged(paths) is None
    got = _drain(repo, home, commit_file(repo, "a.txt", "3", "three"))["ingest"]
    assert "events_added=2" in got, got

    # a transcript-like file without a cursor means a scan, even in a directory that looks
    # older than its newest source (the name list is checked, not only the mtime)
    assert scan.unchanged(paths) is not None
    stray = files[0].with_name("s9.jsonl")
    stray.write_text("")
    st = os.stat(files[0])
    os.utime(stray.parent, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert scan.unchanged(paths) is None


def test_an_old_session_appended_to_is_ingested_by_the_next_drain(
        repo: Path, scrubbed_env: Path, monkeypatch) -> None:
    """A session resumed days later (an old file appended to, no new file, its mtime still
    older than the newest source's) is no reason to wait: the next drain ingests it."""
    monkeypatch.setenv("LOOMA_DRAIN_SETTLE_S", "0")
    cli(repo, "init")
    home = scrubbed_env
    old = _session(home, repo, "old")
    os.utime(old, (1_700_000_000, 1_700_000_000))
    _session(home, repo, "new")
    cli(repo, "ingest")
    paths = find_repo(repo)
    assert scan.unchanged(paths) is not None
    with old.open("a") as fh:
        fh.write(_line("old", 2, repo, "one more thing"))
    os.utime(old, (1_700_000_100, 1_700_000_100))  # still older than the newest source
    assert scan.unchanged(paths) is None
    got = _drain(repo, home, commit_file(repo, "a.txt", "1", "c1"))["ingest"]
    assert "events_added=1" in got, got


def test_database_backed_agents_always_scan(repo: Path, scrubbed_env: Path) -> None:
    cli(repo, "init")
    _session(scrubbed_env, repo, "s0")
    cli(repo, "ingest")
    paths = find_repo(repo)
    import sqlite3

    conn = sqlite3.connect(paths.store_db)
    with conn:
        conn.execute("UPDATE cursors SET agent='cursor'")
    conn.close()
    assert scan.unchanged(paths) is None



def _one_session_ingested(repo: Path, home: Path) -> tuple[Path, Any]:
    """An initialised repo with one ingested session: the check passes."""
    cli(repo, "init")
    f = _session(home, repo, "s0")
    cli(repo, "ingest")
    paths = find_repo(repo)
    assert scan.unchanged(paths) is not None
    return f, paths

def test_files_no_discovery_lists_do_not_mean_a_scan(repo: Path, scrubbed_env: Path) -> None:
    """A subagent's `.meta.json`, Claude Code's `history.jsonl` or an index file beside the
    transcripts are never sources: the check passes with them (and a new transcript still
    fails it), and a full discovery agrees that they add no source."""
    from looma_git.ingest.claude.discovery import discover

    home = scrubbed_env
    f, paths = _one_session_ingested(repo, home)
    st = os.stat(f)
    for name in ("agent-a1.meta.json", "sessions-index.json", "history.jsonl", "notes.txt"):
        (f.parent / name).write_text("{}\n")
    os.utime(f.parent, ns=(st.st_atime_ns, st.st_mtime_ns))  # the names are what is checked
    env = DiscoveryEnv(home=home, environ={}, platform=sys.platform)
    assert [s.path for s in discover(env, [])] == [f]
    assert scan.unchanged(paths) is not None
    (f.parent / "s1.jsonl").write_text(_line("s1", 0, repo, "more"))
    os.utime(f.parent, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert scan.unchanged(paths) is None


def test_the_cursor_view_file_follows_every_cursor_write(repo: Path, scrubbed_env: Path,
                                                          monkeypatch) -> None:
    """The check reads its view of the cursors from `scan-cursors` while store.db's key holds;
    an ingest that stores a cursor moves the key, so a grown session is judged against its
    new cursor, not the cached one."""
    monkeypatch.setenv("LOOMA_DRAIN_SETTLE_S", "0")
    home = scrubbed_env
    f, paths = _one_session_ingested(repo, home)
    cache = paths.state_dir / scan.CACHE
    assert cache.is_file()
    before = cache.read_bytes()
    assert scan.unchanged(paths) is not None and cache.read_bytes() == before
    with f.open("a") as fh:
        fh.write(_line("s0", 2, repo, "and the tokenizer"))
    assert scan.unchanged(paths) is None
    got = _drain(repo, home, commit_file(repo, "a.txt", "1", "one"))["ingest"]
    assert "events_added=1" in got, got
    assert scan.unchanged(paths) is not None  # against the new cursor
    assert cache.read_bytes() != before
    cache.write_bytes(b"not marshal")  # a damaged file is read around
    assert scan.unchanged(paths) is not None


def test_after_an_ingest_the_view_folds_in_only_the_cursors_it_wrote(
        repo: Path, scrubbed_env: Path, monkeypatch) -> None:
    """The first drain after an ingest reads only the cursor rows written since the view was
    kept, and ends with the view a full read builds; a removed cursor means a full read."""
    import sqlite3

    cli(repo, "init")
    home = scrubbed_env
    for i in range(4):
        _session(home, repo, f"s{i}")
    cli(repo, "ingest")
    paths = find_repo(repo)
    assert scan.unchanged(paths) is not None
    merged: list[int] = []
    real = scan._merge
    monkeypatch.setattr(scan, "_merge", lambda base, rows, **kw: (
        merged.append(len(rows)), real(base, rows, **kw))[1])
    _session(home, repo, "s4")
    with (home / ".claude" / "projects").iterdir().__next__().joinpath("s0.jsonl").open("a") as fh:
        fh.write(_line("s0", 2, repo, "one more"))
    cli(repo, "ingest")
    assert scan.unchanged(paths) is not None
    assert merged and max(merged) < 5  # the new and the grown session's rows, not all five
    got = scan._load(paths)
    (paths.state_dir / scan.CACHE).unlink()
    assert scan._load(paths) == got and merged[-1] == 5  # what a full read builds
    conn = sqlite3.connect(paths.store_db)
    with conn:
        conn.execute("DELETE FROM cursors WHERE path LIKE '%s1.jsonl'")
    conn.close()
    merged.clear()
    assert scan.unchanged(paths) is None  # s1 has no cursor now: a scan reads it again
    assert merged[-1] == 4  # (the rows since, then the count disagrees: all of them)
