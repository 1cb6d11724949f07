"""A fresh scenario repository with looma run on it, for api-level tests."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.helpers import GITCONFIG, REPO_ROOT, cli


def build(root: Path, base_env: dict[str, str] | None = None) -> tuple[Path, dict[str, str], Any]:
    """Scenario + init + ingest + backfill; returns (repo, env, truth). The scenario HOME gets
    the test identity in ~/.gitconfig (corrections need one)."""
    import sys

    sys.path.insert(0, str(REPO_ROOT))
    from fixtures.scenario.generate import build_scenario, env_for

    scenario = build_scenario(root)
    env = dict(os.environ if base_env is None else base_env)
    env.update(env_for(scenario))
    gitconfig = Path(scenario.home) / ".gitconfig"
    if not gitconfig.exists():
        gitconfig.write_text(GITCONFIG)
    repo = Path(scenario.repo)
    for args in (("init",), ("ingest",), ("backfill",)):
        cli(repo, *args, env=env)
    return repo, env, scenario.truth


class ScenarioTemplate:
    """One built scenario per test session, copied to the same absolute path for each test
    (session files and store.db hold absolute paths), so no test sees another's changes."""

    def __init__(self, live: Path, base_env: dict[str, str]) -> None:
        import shutil

        self.live = live
        self.template = live.parent / (live.name + "-template")
        self.repo, self.env, self.truth = build(live, base_env)
        shutil.copytree(live, self.template, symlinks=True)

    def fresh(self) -> tuple[Path, dict[str, str], Any]:
        import shutil

        shutil.rmtree(self.live, ignore_errors=True)
        shutil.copytree(self.template, self.live, symlinks=True)
        return self.repo, dict(self.env), self.truth


def work(repo: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    return json.loads(cli(repo, "work", "--json", env=env).stdout)["workitems"]


def by_files(items: list[dict[str, Any]], path: str) -> dict[str, Any]:
    hits = [w for w in items if path in w["files"]]
    assert len(hits) == 1, (path, [w["title"] for w in hits])
    return hits[0]


def add_claude_session(repo: Path, env: dict[str, str], sid: str, prompt: str,
                       edits: list[str], ts: str = "2026-03-20T10:00:00.000Z") -> None:
    """A new Claude Code session (native format) in the scenario HOME editing `edits`."""
    import re

    slug = re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    d = Path(env["HOME"]) / ".claude" / "projects" / slug
    d.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": sid, "cwd": str(repo), "gitBranch": "main", "version": "2.0.76",
            "isSidechain": False, "userType": "external"}
    lines = [dict(base, type="user", uuid=f"{sid}-u0", parentUuid=None, timestamp=ts,
                  message={"role": "user", "content": prompt})]
    parent = f"{sid}-u0"
    for i, path in enumerate(edits):
        tu = f"{sid}-tu{i}"
        lines.append(dict(base, type="assistant", uuid=f"{sid}-a{i}", parentUuid=parent,
                          timestamp=ts, message={
                              "id": f"msg_{sid}_{i}", "type": "message", "role": "assistant",
                              "model": "claude-test", "content": [{
                                  "type": "tool_use", "id": tu, "name": "Edit",
                                  "input": {"file_path": str(repo / path), "old_string": "a",
                                            "new_string": "b"}}]}))
        lines.append(dict(base, type="user", uuid=f"{sid}-r{i}", parentUuid=f"{sid}-a{i}",
                          timestamp=ts, message={"role": "user", "content": [{
                              "type": "tool_result", "tool_use_id": tu, "content": "ok"}]}))
        parent = f"{sid}-r{i}"
    (d / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
