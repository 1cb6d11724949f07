"""Golden tests over files the agents' own CLIs wrote (fixtures/real-cli/<agent>-<version>/).

`fixtures/real-cli/generate.sh` ran each CLI against a scripted model on 127.0.0.1 in a
repository at /tmp/looma-realcli/repo. Here every file is copied into the scrubbed HOME with that
path rewritten to a fresh test repository, `looma ingest` runs (in process), and the store is
read back: sessions, roles, tool calls, files and commands are pinned exactly in
tests/ingest/golden/real-cli/<agent>-<version>.json (rewrite with LOOMA_UPDATE_GOLDEN=1).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.golden import check_json
from tests.helpers import FIXTURES, cli
from tests.ingest.cg_golden import GOLDEN

REAL = FIXTURES / "real-cli"
RECORDED_REPO = "/tmp/looma-realcli/repo"
AGENT_OF = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli",
            "opencode": "opencode"}
CAPTURES = sorted(p.name for p in REAL.iterdir() if p.is_dir() and (p / "home").is_dir())


def _install(capture: str, home: Path, repo: Path) -> None:
    """Copy a capture's HOME into `home`, the recorded repository path rewritten to `repo`."""
    src = REAL / capture / "home"
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        target = home / rel
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name.endswith(".db.sql"):  # OpenCode's database, kept as SQL text
            db = sqlite3.connect(home / rel.with_suffix(""))
            db.executescript(path.read_text(encoding="utf-8").replace(RECORDED_REPO, str(repo)))
            db.commit()
            db.close()
        else:
            target.write_text(path.read_text(encoding="utf-8").replace(RECORDED_REPO, str(repo)),
                              encoding="utf-8")


def _summary(repo: Path) -> dict[str, Any]:
    db = sqlite3.connect(repo / ".git" / "looma" / "store.db")
    try:
        sessions = db.execute("SELECT agent, session_id, parent_session, is_subagent, "
                              "project_root, git_branch FROM sessions ORDER BY is_subagent, "
                              "first_ts, session_id").fetchall()
        out: dict[str, Any] = {"sessions": []}
        for agent, sid, parent, sub, root, branch in sessions:
            events = db.execute("SELECT event_id, role, text FROM events WHERE agent=? AND "
                                "session_id=? ORDER BY seq", (agent, sid)).fetchall()
            rows = []
            for eid, role, text in events:
                calls = db.execute("SELECT name, kind, command, exit_code, is_error, "
                                   "test_outcome FROM tool_calls WHERE event_id=? ORDER BY idx",
                                   (eid,)).fetchall()
                files = db.execute("SELECT relpath, op FROM tool_files WHERE event_id=? "
                                   "ORDER BY idx, rowid", (eid,)).fetchall()
                row: dict[str, Any] = {"role": role}
                if role == "user" or (text and not calls):
                    row["text"] = text[:120]
                if calls:
                    row["calls"] = [list(c) for c in calls]
                if files:
                    row["files"] = [list(f) for f in files]
                rows.append(row)
            out["sessions"].append({
                "is_subagent": bool(sub), "parent_is_listed": parent in {s[1] for s in sessions},
                "project_root": "<REPO>" if root == str(repo) else root, "branch": branch,
                "events": rows})
        return out
    finally:
        db.close()


@pytest.mark.parametrize("capture", CAPTURES)
def test_real_cli_capture_golden(capture: str, repo: Path, scrubbed_env) -> None:
    agent = AGENT_OF[capture.split("-", 1)[0]]
    home = Path(os.environ["HOME"])
    _install(capture, home, repo)
    report = json.loads(cli(repo, "ingest", "--json", "--once", "--agent", agent).stdout)
    # every record of a real file understood: only bookkeeping records are set aside
    assert set(report["skipped"]) <= {"non_message"}, report["skipped"]
    summary = {"agent": agent, "capture": capture, **_summary(repo)}
    check_json(GOLDEN / "real-cli" / f"{capture}.json", summary)
    # The scripted work every CLI did, checked directly (not only against the golden):
    main = [s for s in summary["sessions"] if not s["is_subagent"]]
    assert len(main) == 1 and main[0]["project_root"] == "<REPO>"
    users = [e["text"] for e in main[0]["events"] if e["role"] == "user"]
    assert users[-2:] == ["continue", "continue"]  # the repeated prompt, twice
    replies = [e.get("text") for e in main[0]["events"] if e["role"] == "assistant"]
    assert replies[-1] == "Done." and replies.count("Done.") == 2
    ops = {tuple(f) for e in main[0]["events"] for f in e.get("files", [])}
    assert ("hello.py", "edit") in ops and (("hello.py", "write") in ops)
    shells = [c for e in main[0]["events"] for c in e.get("calls", []) if c[1] == "shell"]
    failed = [c for c in shells if c[2] == "python3 missing.py" and c[3] is not None]
    assert failed and all(c[3] == 2 and c[4] == 1 for c in failed)


JSONL = [(c, p) for c in CAPTURES if not c.startswith("opencode")
         for p in sorted((REAL / c / "home").rglob("*.jsonl"))]


def _final(events: list[Any]) -> list[tuple[Any, ...]]:
    """What a store holds after upserting `events` in order: by id, minus superseded/retracted."""
    stored: dict[str, Any] = {}
    dropped: set[str] = set()
    for e in events:
        stored[e.event_id] = e
        extra = dict(e.extra)
        dropped.update(x for x in extra.get("retracts", "").split(",") if x)
        if extra.get("supersedes"):
            dropped.add(extra["supersedes"])
    return sorted((e.session_native_id, e.seq, e.role, e.text, e.tool_calls)
                  for i, e in stored.items() if i not in dropped)


@pytest.mark.parametrize("capture,path", JSONL,
                         ids=[f"{c}:{p.name}" for c, p in JSONL])
def test_real_cli_file_read_in_pieces_equals_one_read(capture: str, path: Path,
                                                      tmp_path: Path) -> None:
    """The CLI's own file appended in seven pieces (cut mid-line too), read from the cursor each
    time, ends with exactly the events of one read."""
    from looma_git.ingest.base import Cursor, Source
    from looma_git.ingest.registry import get_adapter

    agent = AGENT_OF[capture.split("-", 1)[0]]
    rel = path.relative_to(REAL / capture / "home")
    whole = get_adapter(agent).read(Source(agent, path, "jsonl"), None).events
    target = tmp_path / rel  # layout kept: subagent and project dirs are recognised by path
    target.parent.mkdir(parents=True, exist_ok=True)
    for extra in (".project_root",):  # Gemini resolves the project from its marker file
        marker = REAL / capture / "home" / rel.parts[0] / rel.parts[1] / rel.parts[2] / extra
        if len(rel.parts) > 3 and marker.is_file():
            dest = tmp_path / rel.parts[0] / rel.parts[1] / rel.parts[2] / extra
            dest.write_bytes(marker.read_bytes())
    data = path.read_bytes()
    events: list[Any] = []
    cursor: Cursor | None = None
    target.write_bytes(b"")
    prev = 0
    for cut in sorted({len(data) * k // 7 for k in range(1, 7)} | {len(data)}):
        with target.open("ab") as fh:
            fh.write(data[prev:cut])
        prev = cut
        result = get_adapter(agent).read(Source(agent, target, "jsonl"), cursor)
        cursor = result.cursor
        events.extend(result.events)
    assert _final(events) == _final(whole)
