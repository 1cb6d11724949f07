"""Every real Claude Code fixture parses without fatal errors into its golden summary."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from looma_git.ingest.base import Cursor, DiscoveryEnv, Source
from looma_git.ingest.claude import ClaudeAdapter
from looma_git.model import NormalizedEvent
from tests.golden import check_json
from tests.helpers import FIXTURES

FIX = FIXTURES / "claude-code"
GOLDEN = Path(__file__).parent.parent / "golden" / "claude-code"
FILES = sorted(p for p in FIX.rglob("*.jsonl"))
# Read at import: the autouse fixture scrubs the environment before each test runs.


def _summary(path: Path) -> dict:
    r = ClaudeAdapter().read(Source("claude-code", path, "jsonl"), None)
    ev = r.events
    return {
        "sessions": sorted({e.session_native_id for e in ev}),
        "events_by_role": dict(sorted(Counter(e.role for e in ev).items())),
        "tool_kinds": dict(sorted(Counter(c.kind for e in ev for c in e.tool_calls).items())),
        "tool_names": dict(sorted(Counter(c.name for e in ev for c in e.tool_calls).items())),
        "files_touched": sorted({f"{c.kind}:{p}" for e in ev for c in e.tool_calls
                                 for p in c.paths if c.kind in ("edit", "write", "read")}),
        "shell": [[c.command[:60] if c.command else None, c.exit_code, c.is_error,
                   c.test_outcome] for e in ev for c in e.tool_calls if c.kind == "shell"][:12],
        "skips": dict(sorted(Counter(s.reason for s in r.skips).items())),
        "noise": dict(sorted(r.noise.items())),
        "project_roots": sorted({e.project_root or "" for e in ev}),
        "branches": sorted({e.git_branch or "" for e in ev}),
        "subagent": sorted({dict(e.extra).get("parent_session", "") for e in ev}),
        "first_user_text": next((e.text[:80] for e in ev if e.role == "user"), None),
        "seqs_increasing": [e.seq for e in ev] == sorted(e.seq for e in ev),
        "ids_unique": len({e.event_id for e in ev}) == len(ev),
    }


def test_discovery_finds_every_fixture_transcript():
    adapter = ClaudeAdapter()
    sources = adapter.discover(DiscoveryEnv(home=Path("/nonexistent"),
                                            overrides={"claude-code": (FIX,)}))
    assert sorted(s.path for s in sources) == FILES
    assert not adapter.discovery_skips


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIX)))
def test_golden(path: Path):
    summary = _summary(path)
    check_json(GOLDEN / (str(path.relative_to(FIX)).replace("/", "__") + ".json"), summary)


def _key(e: NormalizedEvent) -> tuple:
    return (e.session_native_id, e.seq, e.role, e.text, e.tool_calls, e.ts)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIX)))
def test_incremental_reads_equal_one_read(path: Path, tmp_path: Path):
    """Appending the file in pieces (cut mid-line too) and reading from the cursor each time
    ends with exactly the events of a single read: merged replies upsert by id."""
    data = path.read_bytes()
    whole = ClaudeAdapter().read(Source("claude-code", path, "jsonl"), None).events
    target = tmp_path / path.name
    if path.stem.startswith("agent-"):  # keep the subagent layout recognisable
        target = tmp_path.joinpath(*path.parts[-3:])
        target.parent.mkdir(parents=True)
    stored: dict[str, NormalizedEvent] = {}
    cursor: Cursor | None = None
    cuts = sorted({len(data) * k // 7 for k in range(1, 7)} | {len(data)})
    target.write_bytes(b"")
    prev = 0
    for cut in cuts:
        with target.open("ab") as fh:
            fh.write(data[prev:cut])
        prev = cut
        r = ClaudeAdapter().read(Source("claude-code", target, "jsonl"), cursor)
        cursor = r.cursor
        for e in r.events:
            stored[e.event_id] = e
    assert sorted(map(_key, stored.values())) == sorted(map(_key, whole))
