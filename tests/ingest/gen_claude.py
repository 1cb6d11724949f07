"""Generates realistic Claude Code transcripts (streaming-split replies, tool results)."""

from __future__ import annotations

import json
import uuid as uuidlib
from pathlib import Path
from typing import Any


def slug(cwd: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in cwd)


class SessionWriter:
    """Builds records of one session; `lines()` returns them as JSONL strings."""

    def __init__(self, cwd: str, sid: str | None = None, branch: str = "main",
                 seed: int = 0) -> None:
        self.cwd = cwd
        self.sid = sid or str(uuidlib.UUID(int=seed + 1))
        self.branch = branch
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.n = 0
        self.seed = seed

    def _uuid(self) -> str:
        self.n += 1
        return str(uuidlib.UUID(int=(self.seed << 32) + self.n + 10_000))

    def _ts(self) -> str:
        s = self.n
        return f"2026-01-0{1 + (self.seed % 9)}T{(s // 3600) % 24:02d}:{(s // 60) % 60:02d}:" \
               f"{s % 60:02d}.000Z"

    def _base(self, kind: str) -> dict[str, Any]:
        u = self._uuid()
        rec = {"parentUuid": self.parent, "isSidechain": False, "userType": "external",
               "cwd": self.cwd, "sessionId": self.sid, "version": "2.1.4",
               "gitBranch": self.branch, "type": kind, "uuid": u, "timestamp": self._ts()}
        self.parent = u
        return rec

    def user(self, text: str) -> None:
        rec = self._base("user")
        rec["message"] = {"role": "user", "content": text}
        self.records.append(rec)

    def assistant(self, text: str | None, tools: list[tuple[str, dict[str, Any]]] = (),
                  results: list[tuple[str, bool, Any]] | None = None,
                  msg_id: str | None = None) -> str:
        """One API message split over lines (text, then one line per tool_use), then one
        user line per tool result. Returns the message id."""
        mid = msg_id or f"msg_{self.seed}_{self.n}"
        blocks: list[dict[str, Any]] = []
        if text:
            blocks.append({"type": "text", "text": text})
        ids = []
        for i, (name, inp) in enumerate(tools):
            tid = f"toolu_{self.seed}_{self.n}_{i}"
            ids.append(tid)
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        for b in blocks:
            rec = self._base("assistant")
            rec["message"] = {"model": "claude-sonnet-4-5", "id": mid, "type": "message",
                              "role": "assistant", "content": [b], "stop_reason": None,
                              "usage": {"input_tokens": 3, "output_tokens": 4}}
            self.records.append(rec)
        for tid, (content, is_error, tur) in zip(ids, results or [], strict=False):
            rec = self._base("user")
            block: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result",
                                     "content": content}
            if is_error:
                block["is_error"] = True
            rec["message"] = {"role": "user", "content": [block]}
            if tur is not None:
                rec["toolUseResult"] = tur
            self.records.append(rec)
        return mid

    def noise(self) -> None:
        self.records.append({"type": "file-history-snapshot", "messageId": "x",
                             "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False})
        rec = self._base("user")
        rec["message"] = {"role": "user", "content": "<system-reminder>be nice</system-reminder>"}
        self.records.append(rec)

    def lines(self) -> list[str]:
        return [json.dumps(r) for r in self.records]

    def write(self, projects: Path, name: str | None = None) -> Path:
        d = projects / slug(self.cwd)
        d.mkdir(parents=True, exist_ok=True)
        p = d / f"{name or self.sid}.jsonl"
        p.write_text("\n".join(self.lines()) + "\n")
        return p


def typical_session(cwd: str, seed: int, turns: int = 10) -> SessionWriter:
    """~10 events per turn: prompt, reply with Read/Edit/Bash(pytest), results, summary text."""
    w = SessionWriter(cwd, seed=seed)
    for t in range(turns):
        w.user(f"turn {t}: please fix the parser bug number {seed}-{t} in src/mod{t % 7}.py")
        w.assistant(f"Looking at src/mod{t % 7}.py first.",
                    [("Read", {"file_path": f"{cwd}/src/mod{t % 7}.py"})],
                    [("1\timport os\n2\t...", False, None)])
        w.assistant("I'll edit the function.",
                    [("Edit", {"file_path": f"{cwd}/src/mod{t % 7}.py", "old_string": "a",
                               "new_string": "b"})],
                    [("The file has been updated.", False, None)])
        failed = (seed + t) % 4 == 0
        w.assistant(None, [("Bash", {"command": "python -m pytest -q tests/"})],
                    [("Exit code 1\n1 failed, 3 passed" if failed else "4 passed in 0.1s",
                      failed, None if failed else {"stdout": "4 passed in 0.1s", "stderr": "",
                                                  "interrupted": False})])
        w.assistant(f"Done with step {t}: the parser now handles case {seed}-{t}.")
        if t % 3 == 0:
            w.noise()
    return w
