"""OpenCode and Gemini CLI content and branch evidence end to end, on what the real CLIs wrote.

`fixtures/real-cli/branch/<agent>-<version>/` are the captures of `generate.sh opencode_branch`
and `gemini_branch`: OpenCode 1.18.33 (scripted model server) and Gemini CLI 0.61.0 (fake
responses) each created `feat/slug` with `git checkout -b`, wrote and edited textutil.py,
committed it, pushed the branch to a local bare remote and checked main out again; a second
session only named branches (`git log main..feat/other`, `git diff origin/main feat/other`,
`git branch feat/later`). Neither agent records a branch. The repository each worked in is kept
as `git fast-export` text, so the commit the session made is rebuilt here with its own sha.
Everything is read back from store.db and git after `looma ingest` and `looma reprocess` (run
in process, once per capture for the module: the tests only read what they wrote).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from looma_git.pipeline.content import line_key
from looma_git.pipeline.signals import WorkSignal
from tests.golden import check_json
from tests.helpers import FIXTURES, cli, git, scrubbed_home
from tests.ingest.ide_golden import GOLDEN
from tests.ingest.test_real_cli import RECORDED_REPO, _summary

BRANCH = FIXTURES / "real-cli" / "branch"
AGENTS = {"opencode-1.18.33": "opencode", "gemini-0.61.0": "gemini-cli"}
FEATURE = "On a new branch feat/slug"
COMPARE = "Without switching branches"


def _rebuild(capture: Path, tmp: Path, home: Path, env: dict[str, str]) -> Path:
    """The repository the capture was made in (same shas), the agent's files in `home` naming
    it instead of the recorded path (OpenCode's database rebuilt from its SQL text)."""
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", env=env)
    with (capture / "repo.fast-export").open("rb") as fh:
        subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, stdin=fh, check=True,
                       env=env)
    git(repo, "checkout", "-q", "-f", "main", env=env)
    src = capture / "home"
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        rel = path.relative_to(src)
        text = path.read_text(encoding="utf-8").replace(RECORDED_REPO, str(repo))
        target = home / (rel.with_suffix("") if path.name.endswith(".db.sql") else rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name.endswith(".db.sql"):
            db = sqlite3.connect(target)
            db.executescript(text)
            db.commit()
            db.close()
        else:
            target.write_text(text, encoding="utf-8")
    return repo


@pytest.fixture(scope="module", params=sorted(AGENTS))
def captured(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp(request.param)
    env = scrubbed_home(tmp / "home")
    repo = _rebuild(BRANCH / request.param, tmp, tmp / "home", env)
    cli(repo, "init", env=env)
    report = json.loads(cli(repo, "ingest", "--json", "--once", "--agent",
                            AGENTS[request.param], env=env).stdout)
    assert set(report["skipped"]) <= {"non_message"}, report["skipped"]
    cli(repo, "reprocess", env=env)
    return repo


def _windows(repo: Path) -> dict[str, list[WorkSignal]]:
    """First prompt -> the windows of the session that opened with it."""
    db = sqlite3.connect(repo / ".git" / "looma" / "store.db")
    try:
        out: dict[str, list[WorkSignal]] = {}
        for (raw,) in db.execute("SELECT json FROM refine_signals ORDER BY key"):
            w = WorkSignal.from_json(json.loads(raw)["signal"])
            # `opencode run` stored the prompt as the shell passed it, quotes included
            out.setdefault(w.first_prompt.strip('"').split(",")[0], []).append(w)
        return out
    finally:
        db.close()


def test_capture_golden(captured: Path, request: pytest.FixtureRequest) -> None:
    capture = request.node.callspec.params["captured"]
    agent = AGENTS[capture]
    check_json(GOLDEN / agent / f"real-cli-branch-{capture}.json",
               {"capture": capture, **_summary(captured)})


def test_opencode_edits_give_content_keys_that_link_the_commit_they_made(captured: Path) -> None:
    sha = git(captured, "rev-parse", "feat/slug")
    assert git(captured, "log", "-1", "--format=%s", sha) == "Add slugify helper"
    db = sqlite3.connect(captured / ".git" / "looma" / "store.db")
    try:
        written = {(h, f) for h, f in db.execute("SELECT h, file FROM written_lines")}
    finally:
        db.close()
    # The lines the write and the two edits put in textutil.py, and none the edits replaced.
    for line in ('def slugify(title: str, max_length: int = 60) -> str:',
                 'return slug[:max_length].rstrip("-")', 'words = re.findall(r"[a-z0-9]+", '
                 'title.lower())'):
        assert (line_key(line), "textutil.py") in written, line
    assert (line_key('return "-".join(words)'), "textutil.py") in written  # the write's line
    shown = git(captured, "show", "--format=", sha)
    added = {line_key(x[1:]) for x in shown.splitlines() if x.startswith("+")} - {None}
    assert len(added & {h for h, _ in written}) >= 5
    [feature] = _windows(captured)[FEATURE]
    assert feature.wrote == frozenset({sha})  # the window wrote the commit it made
    assert feature.landed == "branch"  # feat/slug was never merged into main
    [compare] = _windows(captured)[COMPARE]
    assert compare.wrote == frozenset()


def test_a_session_that_pushed_a_branch_has_branch_evidence_for_it(captured: Path) -> None:
    [feature] = _windows(captured)[FEATURE]
    # Created, committed on and pushed; checking main out at the end does not undo that.
    assert feature.branch == "feat/slug"
    db = sqlite3.connect(captured / ".git" / "looma" / "store.db")
    try:
        seen = [(b, json.loads(x or "{}").get("shell_branches"),
                 json.loads(x or "{}").get("shell_commits")) for b, x in db.execute(
            "SELECT e.branch, e.extra FROM events e JOIN tool_calls t ON t.event_id = e.event_id "
            "WHERE t.kind = 'shell' ORDER BY e.ts")]
    finally:
        db.close()
    sha = git(captured, "rev-parse", "--short=7", "feat/slug")
    # What each shell call's git output said (checkout -b, commit, push, log, checkout main),
    # then the comparing session's three calls, which say nothing; no branch is *recorded*.
    assert seen == [(None, "feat/slug", None), (None, "feat/slug", sha),
                    (None, "feat/slug", None), (None, None, None), (None, "main", None),
                    (None, None, None), (None, None, None), (None, None, None)]
    # The sha `git commit` printed is a commit of the window's.
    assert feature.commits == frozenset({git(captured, "rev-parse", "feat/slug")})


def test_commands_that_only_name_branches_give_no_branch_evidence(captured: Path) -> None:
    [compare] = _windows(captured)[COMPARE]
    assert compare.branch is None  # not feat/other (log, diff), not feat/later (created)
