"""index-meta.json stamps and the fcntl index lock, across real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from looma_git.errors import LockError
from looma_git.index.meta import (
    FORMAT_VERSION,
    META_FILE,
    IndexMeta,
    index_writer_lock,
    read_meta,
    write_meta,
)
from tests.helpers import REPO_ROOT


def test_roundtrip_and_file_is_plain_json(tmp_path: Path) -> None:
    assert read_meta(tmp_path) is None
    meta = IndexMeta(ledger_commit="a" * 40, model_id="m", built_at="2026-01-01T00:00:00+00:00")
    path = write_meta(tmp_path / "state", meta)
    assert path == tmp_path / "state" / META_FILE
    assert json.loads(path.read_text()) == {
        "format_version": FORMAT_VERSION, "ledger_commit": "a" * 40, "model_id": "m",
        "built_at": "2026-01-01T00:00:00+00:00", "vectors": 0, "vectors_pending": 0}
    assert read_meta(tmp_path / "state") == meta
    assert [p.name for p in (tmp_path / "state").iterdir()] == [META_FILE]  # no temp file left


def test_is_stale() -> None:
    meta = IndexMeta(ledger_commit="c1", model_id="m1")
    assert not meta.is_stale("c1")
    assert not meta.is_stale("c1", model_id="m1")
    assert meta.is_stale("c2")
    assert meta.is_stale(None)
    assert meta.is_stale("c1", model_id="m2")
    assert IndexMeta(format_version=FORMAT_VERSION - 1, ledger_commit="c1").is_stale("c1")
    assert not IndexMeta(ledger_commit=None).is_stale(None)


@pytest.mark.parametrize("content", ["{not json", "[]", '{"format_version": "x"}', "x" * 100_000])
def test_unreadable_meta_reads_as_none(tmp_path: Path, content: str) -> None:
    (tmp_path / META_FILE).write_text(content)
    assert read_meta(tmp_path) is None


_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from looma_git.index.meta import index_writer_lock
    with index_writer_lock(Path(sys.argv[1]), timeout=5):
        print("held", flush=True)
        sys.stdin.readline()
""")


def test_lock_excludes_other_processes_until_released(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockError) as info, index_writer_lock(tmp_path, timeout=0.2):
            pass
        assert "index.lock" in info.value.message
        assert (tmp_path / "index.lock").read_text().strip() == str(holder.pid)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=60)
    with index_writer_lock(tmp_path, timeout=5):
        assert (tmp_path / "index.lock").read_text().strip() == str(os.getpid())


def test_lock_released_when_holder_dies(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait(timeout=60)
    with index_writer_lock(tmp_path, timeout=5):
        pass


def test_lock_is_not_reentrant_in_process(tmp_path: Path) -> None:
    with index_writer_lock(tmp_path, timeout=1):
        inner = index_writer_lock(tmp_path, timeout=0.1)
        with pytest.raises(LockError):
            inner.__enter__()
    with index_writer_lock(tmp_path, timeout=0.1):
        pass
