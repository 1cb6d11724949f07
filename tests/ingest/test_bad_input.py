"""Malformed transcripts: every defect is skipped and counted with a reason, never fatal."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from looma_git.api.ingest import ingest
from looma_git.gitrepo import find_repo
from looma_git.index import storedb
from looma_git.ingest.base import DiscoveryEnv
from tests.ingest.gen_claude import SessionWriter


def _setup(repo: Path, home: Path) -> tuple[Path, list[str]]:
    w = SessionWriter(str(repo), seed=1)
    w.user("good prompt one")
    w.user("good prompt two")
    w.user("good prompt three")
    d = home / ".claude" / "projects" / "p"
    d.mkdir(parents=True)
    return d / f"{w.sid}.jsonl", w.lines()


def _run(repo: Path, home: Path):
    return ingest(find_repo(repo), DiscoveryEnv(home=home), agents=["claude-code"])


def _count(repo: Path) -> int:
    conn = storedb.connect(find_repo(repo), readonly=True)
    return conn.execute("SELECT count(*) FROM events").fetchone()[0]


def test_corrupt_middle_and_non_object_lines(repo, scrubbed_env):
    path, (a, b, c) = _setup(repo, scrubbed_env)
    path.write_bytes("\n".join([a, '{"type": "user", "mess', b, '"a string"', "42", "[1, 2]",
                                "null", c]).encode() + b"\n")
    r = _run(repo, scrubbed_env)
    assert r.events_added == 3
    assert r.skipped == {"bad_json": 1, "not_object": 4}
    assert r.skip_samples["bad_json"][0].endswith(":2")


def test_invalid_utf8_and_lone_surrogates_are_repaired_and_counted(repo, scrubbed_env):
    path, (a, b, c) = _setup(repo, scrubbed_env)
    bad = b.replace("good prompt two", "caf\\u00e9 \\ud800 lone").encode()
    path.write_bytes(a.encode()[:-3] + b"\xff\xfe" + a.encode()[-3:] + b"\n" + bad + b"\n"
                     + c.encode() + b"\n")
    r = _run(repo, scrubbed_env)
    assert r.skipped.get("lone_surrogate") == 1
    # The first line's bytes were broken inside JSON syntax or a string: either repaired
    # (invalid_utf8) or skipped (bad_json), never fatal.
    assert r.skipped.get("invalid_utf8", 0) + r.skipped.get("bad_json", 0) >= 1
    conn = storedb.connect(find_repo(repo), readonly=True)
    texts = [t for (t,) in conn.execute("SELECT text FROM events ORDER BY seq")]
    assert any("lone" in t for t in texts)
    assert "good prompt three" in texts


def test_fifty_megabyte_line_is_skipped_with_bounded_memory(repo, scrubbed_env):
    path, (a, _b, c) = _setup(repo, scrubbed_env)
    with path.open("wb") as fh:
        fh.write(a.encode() + b"\n")
        fh.write(b'{"type": "user", "message": {"role": "user", "content": "')
        chunk = b"x" * (1 << 20)
        for _ in range(50):
            fh.write(chunk)
        fh.write(b'"}}\n')
        fh.write(c.encode() + b"\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = _run(repo, scrubbed_env)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert r.skipped == {"too_large": 1}
    assert r.events_added == 2
    assert grown_mb < 120  # one bounded read buffer (16 MB cap), never the 50 MB line twice


def test_hundred_thousand_deep_nesting(repo, scrubbed_env):
    path, (a, _b, c) = _setup(repo, scrubbed_env)
    deep = '{"type": "user", "message": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text("\n".join([a, deep, c]) + "\n")
    r = _run(repo, scrubbed_env)
    assert r.skipped == {"too_deep": 1}
    assert r.events_added == 2


def test_unreadable_directory_and_paths(repo, scrubbed_env):
    path, (a, b, _c) = _setup(repo, scrubbed_env)
    path.write_text(a + "\n")
    projects = path.parent.parent
    locked = projects / "locked"
    locked.mkdir()
    (locked / "s.jsonl").write_text(b + "\n")
    os.chmod(locked, 0)
    loop = projects / "p" / "loop.jsonl"
    loop.symlink_to(loop)  # ELOOP: unreadable whoever we are (tests may run as root)
    fifo = projects / "p" / "fifo.jsonl"
    os.mkfifo(fifo)  # would block a naive open() forever
    try:
        r = _run(repo, scrubbed_env)
    finally:
        os.chmod(locked, 0o755)
    assert r.events_added >= 1
    assert r.skipped.get("unreadable", 0) >= 1
    assert r.skipped.get("not_a_file") == 1
    if os.geteuid() != 0:
        assert any("locked" in loc for loc in r.skip_samples["unreadable"])


def test_deleted_between_discovery_and_read_is_not_fatal(repo, scrubbed_env, monkeypatch):
    from looma_git.ingest.claude import discovery as claude_discovery

    path, (a, _b, _c) = _setup(repo, scrubbed_env)
    path.write_text(a + "\n")
    real = claude_discovery.discover

    def discover_then_delete(env, skips):
        out = real(env, skips)
        path.unlink()
        return out

    monkeypatch.setattr(claude_discovery, "discover", discover_then_delete)
    r = _run(repo, scrubbed_env)
    assert r.skipped == {"unreadable": 1}


def test_garbage_file_never_crashes(repo, scrubbed_env):
    path, _ = _setup(repo, scrubbed_env)
    path.write_bytes(os.urandom(200_000).replace(b"\n", b"\n\x00") + b"\n")
    r = _run(repo, scrubbed_env)
    assert r.events_added == 0
    assert sum(r.skipped.values()) >= 1
    assert _count(repo) == 0
