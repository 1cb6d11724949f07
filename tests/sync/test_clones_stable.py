"""Clones with different local sessions converge after syncing and then write nothing more:
shared fields are derived in the fold from every clone's observations (DESIGN §4.1)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli as looma
from tests.helpers import git


def _claude(home: Path, repo: Path, sid: str, turns: list[tuple[str, str, list[str]]]) -> None:
    """A Claude Code session (native JSONL) in `home`: (time, prompt, edited files) turns."""
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    d = home / ".claude" / "projects" / slug
    d.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": sid, "cwd": str(repo), "gitBranch": "main", "version": "2.0.76",
            "isSidechain": False, "userType": "external"}
    lines: list[dict[str, Any]] = []
    parent = None
    for n, (ts, prompt, edits) in enumerate(turns):
        uid = f"{sid}-u{n}"
        lines.append(dict(base, type="user", uuid=uid, parentUuid=parent, timestamp=ts,
                          message={"role": "user", "content": prompt}))
        parent = uid
        for i, path in enumerate(edits):
            tu, aid, rid = f"{sid}-tu{n}-{i}", f"{sid}-a{n}-{i}", f"{sid}-r{n}-{i}"
            lines.append(dict(base, type="assistant", uuid=aid, parentUuid=parent, timestamp=ts,
                              message={"id": f"msg_{sid}_{n}_{i}", "type": "message",
                                       "role": "assistant", "model": "claude-test",
                                       "content": [{"type": "tool_use", "id": tu, "name": "Edit",
                                                    "input": {"file_path": str(repo / path),
                                                              "old_string": "a",
                                                              "new_string": "b"}}]}))
            lines.append(dict(base, type="user", uuid=rid, parentUuid=aid, timestamp=ts,
                              message={"role": "user", "content": [{
                                  "type": "tool_result", "tool_use_id": tu, "content": "ok"}]}))
            parent = rid
    (d / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


FILES = {"billing/csv.py": "rows = []\n", "billing/invoice.py": "total = 0\n",
         "api/retry.py": "ATTEMPTS = 3\n", "api/webhooks.py": "def deliver():\n    pass\n",
         "auth/oauth.py": "CLIENT = None\n"}


def _commit(repo: Path, path: str, line: str, msg: str, date: str) -> None:
    with (repo / path).open("a") as fh:
        fh.write(line)
    env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(repo, "add", path, env=env)
    git(repo, "commit", "-q", "-m", msg, env=env)


def _clone(tmp: Path, bare: Path, name: str) -> tuple[Path, dict[str, str]]:
    git(tmp, "clone", "-q", str(bare), name)
    home = tmp / f"home-{name}"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[user]\n\tname = {name}\n\temail = {name}@example.com\n"
                                     "[protocol \"file\"]\n\tallow = always\n")
    env = dict(os.environ, HOME=str(home))
    repo = tmp / name
    looma(repo, "init", env=env)
    looma(repo, "share", "enable", "origin", env=env)
    return repo, env


def _shared(repo: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    items = json.loads(looma(repo, "work", "--json", env=env).stdout)["workitems"]
    return sorted((w for w in items if w.get("promoted", True)), key=lambda w: w["id"])


@pytest.mark.slow
def test_two_clones_with_disjoint_sessions_converge_and_then_write_nothing(tmp_path: Path
                                                                           ) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    for path, text in FILES.items():
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_text(text)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "Initial layout")
    _commit(seed, "billing/csv.py", "def stream():\n    yield from rows\n",
            "Stream the invoice CSV export", "2026-04-01T11:00:00Z")
    _commit(seed, "api/retry.py", "BACKOFF = 2\n", "Reset the webhook retry backoff",
            "2026-04-02T11:00:00Z")
    _commit(seed, "billing/invoice.py", "header = True\n", "Write the CSV header first",
            "2026-04-03T11:00:00Z")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    a, env_a = _clone(tmp_path, bare, "a")
    b, env_b = _clone(tmp_path, bare, "b")
    # Disjoint sessions: A saw the start of the CSV work and the retry fix, B the follow-ups.
    _claude(Path(env_a["HOME"]), a, "s-a1", [
        ("2026-04-01T09:00:00.000Z", "Stream the invoice CSV export", ["billing/csv.py"]),
        ("2026-04-01T09:30:00.000Z", "and the invoice totals", ["billing/invoice.py",
                                                                 "billing/csv.py"])])
    _claude(Path(env_a["HOME"]), a, "s-a2", [
        ("2026-04-02T09:00:00.000Z", "The webhook retries are broken: backoff never resets",
         ["api/retry.py"])])
    _claude(Path(env_b["HOME"]), b, "s-b1", [
        ("2026-04-03T09:00:00.000Z", "continue the streaming CSV export: header row",
         ["billing/csv.py", "billing/invoice.py"])])
    _claude(Path(env_b["HOME"]), b, "s-b2", [
        ("2026-04-02T15:00:00.000Z", "cap webhook retry attempts", ["api/retry.py",
                                                                    "api/webhooks.py"])])
    looma(a, "ingest", env=env_a)
    looma(b, "ingest", env=env_b)
    for _round in range(3):
        for repo, env in ((a, env_a), (b, env_b)):
            looma(repo, "sync", env=env)
            looma(repo, "reprocess", env=env)
    for repo, env in ((a, env_a), (b, env_b)):
        looma(repo, "sync", env=env)
    heads = {str(r): git(r, "rev-parse", "refs/looma/ledger") for r in (a, b)}
    for repo, env in ((a, env_a), (b, env_b)):
        out = json.loads(looma(repo, "reprocess", "--json", env=env).stdout)
        assert out["ops_written"] == 0, (repo.name, out)
    assert {str(r): git(r, "rev-parse", "refs/looma/ledger") for r in (a, b)} == heads
    wa, wb = _shared(a, env_a), _shared(b, env_b)
    assert wa and wa == wb
    # Both clones' sessions count on every shared WorkItem they worked on.
    sessions = {s["id"] for w in wa for s in w["sessions"]}
    assert {"s-a1", "s-a2", "s-b1", "s-b2"} <= sessions
