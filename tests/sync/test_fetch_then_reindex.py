"""A teammate who only runs `git fetch` (with looma's refspecs) then `looma reindex` gets the
same WorkItems and notes as one who runs `looma sync`."""

from __future__ import annotations

import json
from pathlib import Path

from looma_git.api.ledger import append
from looma_git.gitrepo import find_repo
from looma_git.ledger.ops import OpDraft
from tests.helpers import cli as looma
from tests.helpers import commit_file, git, make_repo


def test_plain_fetch_then_reindex(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "a")
    sha = commit_file(a, "auth/oauth.py", "x\n", "Add OAuth")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "--initial-branch=main", str(remote))
    git(a, "remote", "add", "origin", str(remote))
    git(a, "push", "-q", "origin", "main")
    looma(a, "init")
    (op,) = append(find_repo(a), [OpDraft(op="workitem.create",
                                          target={"type": "workitem", "id": None},
                                          payload={"title": "OAuth login",
                                                   "files": ["auth/oauth.py"]})],
                   actor="system")
    wid = op.created_id()
    append(find_repo(a), [OpDraft(op="commit.link", target={"type": "commit", "id": sha},
                                  payload={"workitem": wid, "confidence": 0.9, "by": "backfill",
                                           "files": ["auth/oauth.py"]})], actor="system")
    looma(a, "share", "enable", "origin")
    looma(a, "sync", "origin")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b))
    looma(b, "init")
    looma(b, "share", "enable", "origin")
    git(b, "fetch", "-q", "origin")  # plain git, with the refspecs share enable configured
    out = looma(b, "reindex").stdout
    assert "merged looma refs fetched from: origin" in out
    items = json.loads(looma(b, "work", "--json").stdout)["workitems"]
    assert [(w["id"], w["title"]) for w in items] == [(wid, "OAuth login")]
    assert "OAuth login" in git(b, "notes", "--ref=looma", "show", sha)
    assert "merged" not in looma(b, "reindex").stdout  # nothing new: nothing merged
