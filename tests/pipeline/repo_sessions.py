"""A real repository with real Claude Code transcripts beside it, for the linking and clustering
rules' tests: sessions of several turns (edits with the text they replaced, writes, shell
commands, a branch each), commits with the author and time asked for, then init/ingest/backfill
and the WorkItems as `looma work --json` shows them."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.helpers import cli, git

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def at(hours: float) -> datetime:
    """A time `hours` after T0."""
    return T0 + timedelta(hours=hours)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass
class Turn:
    """One user prompt and the tool calls that answer it: ("Edit", path, old, new) replaces the
    text `old` by `new`, ("Write", path, text) writes a file, ("Bash", command) runs one."""

    prompt: str
    tools: list[tuple[str, ...]] = field(default_factory=list)


class Project:
    """A temp repository, its developer's HOME and the sessions written so far."""

    def __init__(self, tmp: Path, me: str = "Ada") -> None:
        self.home = tmp / "home"
        self.home.mkdir()
        (self.home / ".gitconfig").write_text(
            f"[user]\n\tname = {me}\n\temail = {me.lower()}@example.com\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))}
        env.update(HOME=str(self.home), LOOMA_NO_PROGRESS="1")
        self.env = env
        self.repo = tmp / "repo"
        self.repo.mkdir()
        self.me = me
        git(self.repo, "init", "-q", "-b", "main", env=env)

    def write(self, path: str, text: str | None) -> None:
        p = self.repo / path
        if text is None:
            git(self.repo, "rm", "-q", path, env=self.env)
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        git(self.repo, "add", path, env=self.env)

    def commit(self, when: datetime, msg: str, files: dict[str, str | None],
               author: str | None = None) -> str:
        """Set each file's whole text (None: remove it) and commit; returns the sha."""
        for path, text in files.items():
            self.write(path, text)
        who = author or self.me
        date = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        e = dict(self.env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date,
                 GIT_AUTHOR_NAME=who, GIT_AUTHOR_EMAIL=f"{who.lower()}@example.com",
                 GIT_COMMITTER_NAME=who, GIT_COMMITTER_EMAIL=f"{who.lower()}@example.com")
        git(self.repo, "commit", "-q", "-m", msg, env=e)
        return git(self.repo, "rev-parse", "HEAD", env=self.env)

    def branch(self, name: str, start: str = "main") -> None:
        git(self.repo, "checkout", "-q", "-B", name, start, env=self.env)

    def checkout(self, name: str) -> None:
        git(self.repo, "checkout", "-q", name, env=self.env)

    def merge(self, when: datetime, name: str, msg: str) -> str:
        date = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        e = dict(self.env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        git(self.repo, "merge", "-q", "--no-ff", "-m", msg, name, env=e)
        return git(self.repo, "rev-parse", "HEAD", env=self.env)

    def session(self, sid: str, start: datetime, turns: list[Turn], branch: str = "main",
                step_min: float = 2.0) -> None:
        """A native Claude Code transcript: each turn's prompt, then its tool calls, one every
        `step_min` minutes (the next turn follows its last call)."""
        slug = re.sub(r"[^A-Za-z0-9]", "-", str(self.repo))
        d = self.home / ".claude" / "projects" / slug
        d.mkdir(parents=True, exist_ok=True)
        base = {"sessionId": sid, "cwd": str(self.repo), "gitBranch": branch,
                "version": "2.0.76", "isSidechain": False, "userType": "external"}
        out: list[dict[str, Any]] = []
        parent: str | None = None
        t = start
        n = 0
        for turn in turns:
            uid = f"{sid}-u{n}"
            out.append(dict(base, type="user", uuid=uid, parentUuid=parent, timestamp=_iso(t),
                            message={"role": "user", "content": turn.prompt}))
            parent = uid
            for tool in turn.tools:
                n += 1
                t += timedelta(minutes=step_min)
                tu, aid, rid = f"{sid}-tu{n}", f"{sid}-a{n}", f"{sid}-r{n}"
                name = tool[0]
                if name == "Edit":
                    inp: dict[str, Any] = {"file_path": str(self.repo / tool[1]),
                                           "old_string": tool[2], "new_string": tool[3]}
                elif name == "Write":
                    inp = {"file_path": str(self.repo / tool[1]), "content": tool[2]}
                else:
                    inp = {"command": tool[1]}
                out.append(dict(base, type="assistant", uuid=aid, parentUuid=parent,
                                timestamp=_iso(t),
                                message={"id": f"msg_{sid}_{n}", "type": "message",
                                         "role": "assistant", "model": "claude-test",
                                         "content": [{"type": "tool_use", "id": tu,
                                                      "name": name, "input": inp}]}))
                out.append(dict(base, type="user", uuid=rid, parentUuid=aid, timestamp=_iso(t),
                                message={"role": "user", "content": [
                                    {"type": "tool_result", "tool_use_id": tu,
                                     "content": "ok"}]}))
                parent = rid
            n += 1
            t += timedelta(minutes=step_min)
        (d / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in out))

    def run(self) -> list[dict[str, Any]]:
        """init, ingest, backfill; the WorkItems `looma work --json` lists."""
        for args in (("init",), ("ingest",), ("backfill",)):
            cli(self.repo, *args, env=self.env)
        out = cli(self.repo, "work", "--json", env=self.env).stdout
        return list(json.loads(out)["workitems"])


def links(work: list[dict[str, Any]]) -> dict[str, str]:
    """sha -> the id of the WorkItem it is linked to."""
    return {sha: w["id"] for w in work for sha in w["commits"]}


def of_session(work: list[dict[str, Any]], sid: str) -> str:
    """The id of the WorkItem holding session `sid`."""
    return next(w["id"] for w in work for s in w["sessions"] if s["id"] == sid)
