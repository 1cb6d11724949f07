"""Golden summaries for the Codex and Gemini adapter tests (compact JSON per fixture file)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from looma_git.ingest.base import ReadResult
from tests.golden import check_json

GOLDEN = Path(__file__).resolve().parent / "golden"


def summarize(result: ReadResult) -> dict:
    """What a reader must keep producing for a file: counts, tools, files, commands, ids."""
    events = result.events
    calls: dict[str, tuple] = {}
    kinds: Counter[str] = Counter()
    files: set[str] = set()
    for n, ev in enumerate(events):
        for i, tc in enumerate(ev.tool_calls):
            kinds[tc.kind] += 1
            files.update(tc.paths)
            if tc.command is None:
                continue
            key = tc.call_id or f"{n}.{i}"
            if key not in calls or tc.exit_code is not None:
                calls[key] = (tc.command[:100], tc.exit_code, tc.test_outcome)
    stamps = sorted(e.ts for e in events if e.ts)
    return {
        "sessions": sorted({e.session_native_id for e in events}),
        "events": len(events),
        "roles": dict(sorted(Counter(e.role for e in events).items())),
        "tool_kinds": dict(sorted(kinds.items())),
        "files_touched": sorted(files),
        "commands": [list(v) for v in calls.values()],
        "skips": dict(sorted(Counter(s.reason for s in result.skips).items())),
        "noise": dict(sorted(result.noise.items())),
        "project_roots": sorted({e.project_root or "" for e in events}),
        "branches": sorted({e.git_branch or "" for e in events}),
        "remotes": sorted({e.git_remote or "" for e in events}),
        "models": sorted({e.agent_model or "" for e in events}),
        "ts_range": [stamps[0], stamps[-1]] if stamps else [],
        "event_ids": hashlib.sha256("".join(e.event_id for e in events).encode()).hexdigest()[:16],
    }


def check_golden(agent: str, rel: str, summary: dict) -> None:
    """Compare with the stored golden; rewrite it only when LOOMA_UPDATE_GOLDEN=1."""
    check_json(GOLDEN / agent / (rel.replace("/", "__") + ".json"), summary)
