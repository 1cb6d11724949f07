"""Content evidence end to end: real git, real Claude Code transcripts, backfill and the drain's
link step. The session that wrote a commit's lines gets the link; a teammate's commit in a
shared file gets none; a file the session created is linked when it is committed later."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli, git

T = "2026-05-04T09:{:02d}:00.000Z"
T2 = "2026-05-06T14:{:02d}:00.000Z"  # the queue effort, two days later
AUTH = ["def exchange_code(code, verifier):", "    token = oauth.fetch_token(code=code)",
        "    return session_from(token, verifier)"]
SHARED_AUTH = ["def auth_header(token):", "    return {'Authorization': f'Bearer {token}'}"]
QUEUE = ["class RetryQueue(BaseQueue):", "    backoff = ExponentialBackoff(base=2.0)"]
SHARED_QUEUE = ["def queue_name(job):", "    return f'jobs.{job.kind}'"]
TOKENS = ["TOKEN_TTL_SECONDS = 3600", "def token_expired(issued_at, now):",
          "    return now - issued_at > TOKEN_TTL_SECONDS"]
METRICS = ["def request_metrics(request):", "    REQUESTS.labels(route=request.url).inc()"]


def _session(home: Path, repo: Path, sid: str, prompt: str,
             edits: list[tuple[int, str, str, list[str]]], clock: str = T) -> None:
    """A native Claude Code session: one prompt, then (minute, tool, file, written lines)."""
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    d = home / ".claude" / "projects" / slug
    d.mkdir(parents=True, exist_ok=True)
    base = {"sessionId": sid, "cwd": str(repo), "gitBranch": "main", "version": "2.0.76",
            "isSidechain": False, "userType": "external"}
    lines: list[dict[str, Any]] = [dict(base, type="user", uuid=f"{sid}-u", parentUuid=None,
                                        timestamp=clock.format(0),
                                        message={"role": "user", "content": prompt})]
    parent = f"{sid}-u"
    for n, (minute, tool, path, written) in enumerate(edits):
        tu, aid, rid = f"{sid}-tu{n}", f"{sid}-a{n}", f"{sid}-r{n}"
        text = "\n".join(written) + "\n"
        inp = ({"file_path": str(repo / path), "content": text} if tool == "Write" else
               {"command": f"cat >> {path} <<'EOF'\n{text}EOF\n"} if tool == "Bash" else
               {"file_path": str(repo / path), "old_string": "# end", "new_string": text})
        lines.append(dict(base, type="assistant", uuid=aid, parentUuid=parent,
                          timestamp=clock.format(minute),
                          message={"id": f"msg_{sid}_{n}", "type": "message",
                                   "role": "assistant", "model": "claude-test",
                                   "content": [{"type": "tool_use", "id": tu, "name": tool,
                                                "input": inp}]}))
        lines.append(dict(base, type="user", uuid=rid, parentUuid=aid,
                          timestamp=clock.format(minute),
                          message={"role": "user", "content": [
                              {"type": "tool_result", "tool_use_id": tu, "content": "ok"}]}))
        parent = rid
    (d / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def _commit(repo: Path, env: dict[str, str], minute: int, author: str,
            adds: dict[str, list[str]], msg: str, clock: str = T) -> str:
    for path, written in adds.items():
        p = repo / path
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("a") as fh:
            fh.write("\n".join(written) + "\n")
        git(repo, "add", path, env=env)
    date = clock.format(minute).replace(".000Z", "+00:00")
    e = dict(env, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date, GIT_AUTHOR_NAME=author,
             GIT_AUTHOR_EMAIL=f"{author.lower()}@example.com", GIT_COMMITTER_NAME=author,
             GIT_COMMITTER_EMAIL=f"{author.lower()}@example.com")
    git(repo, "commit", "-q", "-m", msg, env=e)
    return git(repo, "rev-parse", "HEAD", env=env)


def _links(repo: Path, env: dict[str, str]) -> dict[str, str]:
    """sha -> the title of the WorkItem it is linked to."""
    work = json.loads(cli(repo, "work", "--json", env=env).stdout)["workitems"]
    return {sha: w["title"] for w in work for sha in w["commits"]}


@pytest.mark.slow
def test_content_decides_links_and_a_teammates_commit_stays_unlinked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.com\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))}
    env.update(HOME=str(home), LOOMA_NO_PROGRESS="1")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", env=env)
    _commit(repo, env, 0, "Ada", {"app/auth.py": ["# end"], "app/queue.py": ["# end"],
                                  "app/shared.py": ["# end"]}, "Initial import")
    _session(home, repo, "s-auth", "add google login with PKCE to the api",
             [(2, "Edit", "app/auth.py", AUTH), (3, "Edit", "app/shared.py", SHARED_AUTH),
              (4, "Write", "app/tokens.py", TOKENS)])
    _session(home, repo, "s-queue", "move the nightly jobs onto a retry queue",
             [(5, "Edit", "app/queue.py", QUEUE), (6, "Bash", "app/shared.py", SHARED_QUEUE)],
             T2)
    # Ada commits the auth work; then the queue session's here-document into shared.py (a
    # file only the auth effort edited with a tool: file overlap says auth, content queue);
    # the queue work; then a teammate with no sessions adds metrics to the shared file.
    auth = _commit(repo, env, 10, "Ada", {"app/auth.py": AUTH, "app/shared.py": SHARED_AUTH},
                   "Exchange the OAuth code for a session")
    shared = _commit(repo, env, 11, "Ada", {"app/shared.py": SHARED_QUEUE},
                     "Name queues after the job kind", T2)
    queue = _commit(repo, env, 12, "Ada", {"app/queue.py": QUEUE},
                    "Retry failed jobs with backoff", T2)
    metrics = _commit(repo, env, 13, "Priya", {"app/shared.py": METRICS},
                      "Add request metrics", T2)
    for args in (("init",), ("ingest",), ("backfill",)):
        cli(repo, *args, env=env)
    links = _links(repo, env)
    assert metrics not in links, links
    assert links[shared] == links[queue] != links[auth], links
    log = git(repo, "log", "--notes=looma", "--format=%H %N", "-n", "4", env=env)
    assert "workitem: wi_" in log

    # The drain's link step for a commit made later, of a file the auth session created (the
    # last pass did not know that path): content finds the WorkItem.
    tokens = _commit(repo, env, 20, "Ada", {"app/tokens.py": TOKENS}, "Token expiry helper",
                     T2)
    from looma_git.api.linking import link_commits
    from looma_git.gitrepo import find_repo

    monkeypatch.setenv("HOME", str(home))  # in process, in the environment the drain gets
    monkeypatch.chdir(repo)
    ops = link_commits(find_repo(repo), [tokens], by="hook").ops
    assert ops.get("commit.link") == 1, ops
    assert _links(repo, env)[tokens] == links[auth]
    ledger = git(repo, "log", "-p", "-n", "1", "refs/looma/ledger", env=env)
    assert "content: 1.0" in ledger and tokens in ledger, ledger[-3000:]
