"""`correct split --by files` partitions the files and the commits: each part keeps only its
files, each commit is noted to exactly one part, and that survives reprocess."""

from __future__ import annotations

import json
import re

import pytest

from tests.api.scenario_env import add_claude_session, by_files, work
from tests.helpers import cli, git


def _noted(repo, sha: str) -> list[str]:
    out = git(repo, "notes", "--ref=looma", "show", sha, check=False)
    return sorted(set(re.findall(r"wi_[0-9a-f]{10}", out)))


CASES = {
    "ratelimit": ("api/ratelimit.py", ["api/ratelimit.py", "tests/test_ratelimit.py"],
                  ["api/middleware.py", "app.py"]),
    "oauth": ("auth/oauth.py", ["auth/oauth.py", "auth/tokens.py", "tests/test_oauth.py"],
              ["auth/routes.py"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_split_by_files_partitions_files_and_commits(scenario, case: str) -> None:
    repo, env, _ = scenario
    anchor, part1, part2 = CASES[case]
    rl = by_files(work(repo, env), anchor)
    out = cli(repo, "correct", "split", rl["id"], "--into", "Limiter core,Limiter wiring",
              "--by", "files", "--part", "1=" + ",".join(part1), "--part", "2=" + ",".join(part2),
              "--json", env=env).stdout
    assert json.loads(out)["op"] == "workitem.split"
    for step in ("split", "new session", "reprocess"):
        if step == "new session":  # edits files of both parts: must not re-merge them
            add_claude_session(repo, env, f"after-split-{case}", "Tidy this code up",
                               [part1[0], part2[0]])
            cli(repo, "ingest", env=env)
        if step == "reprocess":
            cli(repo, "reprocess", env=env)
        items = {w["title"]: w for w in work(repo, env)}
        core, wiring = items["Limiter core"], items["Limiter wiring"]
        assert sorted(core["files"]) == sorted(part1), core
        assert sorted(wiring["files"]) == sorted(part2), wiring
        assert rl["id"] not in {w["id"] for w in items.values()}
        assert not set(core["commits"]) & set(wiring["commits"])
        assert sorted(core["commits"] + wiring["commits"]) == sorted(rl["commits"])
        for sha in core["commits"]:
            files = set(git(repo, "show", "--name-only", "--format=", sha).split())
            assert files & set(part1), (sha, files)
        for sha in rl["commits"]:  # one part per commit in the notes too
            noted = _noted(repo, sha)
            assert len([w for w in noted if w in (core["id"], wiring["id"])]) == 1, (sha, noted)
