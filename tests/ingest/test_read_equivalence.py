"""The fast read path stores what the plain one does, on every fixture and real transcript.

For each JSONL transcript under fixtures/, tests/ingest/ and the shared real-world captures
(when present), the Claude Code and Codex adapters read it whole and in two runs (cut at a
line in the middle, then resumed from the cursor), once with the msgspec line decoder and once
with json alone; the rows `prepare` makes from both must be equal, and equal again after the
pickle round trip that ships them from a reader process.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
from pathlib import Path

import pytest

from looma_git.gitrepo import find_repo
from looma_git.ingest import jsonl
from looma_git.ingest.attribution import Attributor, load_identity
from looma_git.ingest.base import Cursor, ReadResult, Source
from looma_git.ingest.paths import PathResolver
from looma_git.ingest.prepare import Prepared, prepare
from looma_git.ingest.registry import get_adapter

ROOT = Path(__file__).resolve().parents[2]
REAL = Path(os.environ.get("LOOMA_REAL_FIXTURES", "/work/shared/fixtures-real"))
AGENTS = ("claude-code", "codex")


def _transcripts() -> list[Path]:
    roots = [ROOT / "fixtures", ROOT / "tests" / "ingest"] + ([REAL] if REAL.is_dir() else [])
    return sorted(p for r in roots for p in r.rglob("*.jsonl") if p.is_file())


def _view(p: Prepared) -> tuple[object, ...]:
    return (p.skip_counts, p.skip_samples, p.noise, p.notes, p.filter_noise, p.counts, p.rows,
            p.redactions, p.sessions, p.ours, p.not_ours, p.unattributed, p.cursor, p.error)


def _reads(agent: str, src: Source, work: Path, data: bytes) -> list[tuple[str, ReadResult]]:
    adapter = get_adapter(agent)
    out = [("whole", adapter.read(src, None))]
    cut = data.find(b"\n", len(data) // 2)
    if cut > 0:
        part = work / src.path.name
        part.write_bytes(data[:cut + 1])
        st = src.path.stat()
        os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns))
        half = Source(agent, part, "jsonl")
        first = adapter.read(half, None)
        part.write_bytes(data)
        os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns))
        rest = adapter.read(half, first.cursor if isinstance(first.cursor, Cursor) else None)
        out += [("first half", first), ("resumed", rest)]
    return out


def _prepared(fast: bool, monkeypatch: pytest.MonkeyPatch, tmp: Path,
              attr: Attributor) -> dict[tuple[str, str, str], tuple[object, ...]]:
    resolver = PathResolver(attr)
    got: dict[tuple[str, str, str], tuple[object, ...]] = {}
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(jsonl, "_FAST", None)
        for n, path in enumerate(_transcripts()):
            data = path.read_bytes()
            for agent in AGENTS:
                work = tmp / "work" / agent / str(n)  # the same paths in both passes
                shutil.rmtree(work, ignore_errors=True)
                work.mkdir(parents=True)
                for tag, rr in _reads(agent, Source(agent, path, "jsonl"), work, data):
                    p = prepare(agent, Source(agent, path, "jsonl"), (len(data), 1), rr, attr,
                                resolver, lambda a, s: True)
                    view = _view(p)
                    assert _view(pickle.loads(pickle.dumps(p, pickle.HIGHEST_PROTOCOL))) == view
                    got[(str(path), agent, tag)] = (rr.events, rr.skips, rr.noise, view)
    return got


def test_fast_and_plain_reads_prepare_the_same_rows(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    assert jsonl._FAST is not None
    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)
    attr = Attributor(load_identity(find_repo(tmp_path / "r")))
    fast = _prepared(True, monkeypatch, tmp_path, attr)
    plain = _prepared(False, monkeypatch, tmp_path, attr)
    assert fast.keys() == plain.keys()
    for key, value in plain.items():
        assert fast[key] == value, key
    rows = sum(len(v[3][6]) for v in fast.values())  # type: ignore[arg-type]
    assert len(fast) > 100 and rows > 1000
