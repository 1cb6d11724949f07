"""Helpers for the Cursor/OpenCode/Windsurf tests: fixture generators, read-all, golden summaries."""

from __future__ import annotations

import hashlib
import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from looma_git.ingest.base import Cursor, ReadResult, Source
from tests.golden import check_json
from tests.helpers import FIXTURES

GOLDEN = Path(__file__).resolve().parent / "golden"


def generator(agent: str, name: str) -> ModuleType:
    """Import a fixture generator script `fixtures/<agent>/<name>.py`."""
    path = FIXTURES / agent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"fixture_{agent}_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_all(adapter: Any, sources: list[Source],
             cursors: dict[str, Cursor] | None = None) -> dict[str, ReadResult]:
    """Read every source once (from `cursors` when given); source_id -> result."""
    cursors = cursors or {}
    return {s.source_id: adapter.read(s, cursors.get(s.source_id)) for s in sources}


def summarize(results: dict[str, ReadResult], sources: list[Source], root: Path,
              with_ts: bool = True) -> dict[str, Any]:
    """A compact, path-independent summary of everything the sources produced."""
    rel = {s.source_id: str(s.path.relative_to(root)) if s.path.is_relative_to(root)
           else s.path.name for s in sources}
    out: dict[str, Any] = {}
    for s in sources:
        r = results[s.source_id]
        ev = r.events
        sessions: dict[str, Any] = {}
        for e in ev:
            entry = sessions.setdefault(e.session_native_id, {
                "project_root": e.project_root, "roles": Counter(), "models": set(),
                "seqs": []})
            entry["roles"][e.role] += 1
            if e.agent_model:
                entry["models"].add(e.agent_model)
            entry["seqs"].append(e.seq)
        kinds: Counter[str] = Counter()
        files: set[str] = set()
        commands: list[list[Any]] = []
        for e in ev:
            for tc in e.tool_calls:
                kinds[tc.kind] += 1
                files.update(tc.paths)
                if tc.command is not None:
                    commands.append([tc.command, tc.exit_code, tc.is_error])
        root_s = str(root)
        out[f"{rel[s.source_id]}#{s.key}" if s.key else rel[s.source_id]] = {
            "kind": s.kind,
            "sessions": {sid: {"project_root": v["project_root"],
                               "roles": dict(sorted(v["roles"].items())),
                               "models": sorted(v["models"]), "seqs": v["seqs"]}
                         for sid, v in sorted(sessions.items())},
            "tool_kinds": dict(sorted(kinds.items())),
            "files_touched": sorted(files),
            "commands": commands,
            "skips": dict(sorted(Counter(k.reason for k in r.skips).items())),
            "noise": dict(sorted(r.noise.items())),
            "notes": [n.replace(root_s, "<root>") for n in r.notes],
            "ts_range": ([min(e.ts for e in ev if e.ts), max(e.ts for e in ev if e.ts)]
                         if with_ts and any(e.ts for e in ev) else []),
            "event_ids": hashlib.sha256(
                "".join(e.event_id for e in ev).encode()).hexdigest()[:16],
        }
    return out


def check_golden(agent: str, name: str, summary: dict[str, Any]) -> None:
    """Compare with tests/ingest/golden/<agent>/<name>.json; rewrite only with
    LOOMA_UPDATE_GOLDEN=1."""
    check_json(GOLDEN / agent / f"{name}.json", summary)


LOCKER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""
