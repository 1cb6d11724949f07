"""Two teammates' clones for sync tests at the CLI: a seeded history on a bare remote, each
clone with its own HOME and its own Claude Code sessions, and the WorkItems both share."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.helpers import cli as looma
from tests.helpers import git


def claude(home: Path, repo: Path, sid: str, turns: list[tuple[str, str, list[str]]]) -> None:
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


def commit(repo: Path, path: str, line: str, msg: str, date: str) -> None:
    with (repo / path).open("a") as fh:
        fh.write(line)
    env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(repo, "add", path, env=env)
    git(repo, "commit", "-q", "-m", msg, env=env)


def clone(tmp: Path, bare: Path, name: str) -> tuple[Path, dict[str, str]]:
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


def shared(repo: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    items = json.loads(looma(repo, "work", "--json", env=env).stdout)["workitems"]
    return sorted((w for w in items if w.get("promoted", True)), key=lambda w: w["id"])


def remote(tmp: Path, files: dict[str, str], commits: list[tuple[str, str, str, str]]) -> Path:
    """A bare remote of a history: `files` as the initial layout, then each (path, line
    appended, subject, ISO date) as a commit."""
    seed = tmp / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    for path, text in files.items():
        (seed / path).parent.mkdir(parents=True, exist_ok=True)
        (seed / path).write_text(text)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "Initial layout")
    for path, line, msg, date in commits:
        commit(seed, path, line, msg, date)
    bare = tmp / "remote.git"
    git(tmp, "clone", "-q", "--bare", str(seed), str(bare))
    return bare
