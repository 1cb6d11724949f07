"""`looma relink` on real clones: a teammate's rebase, a server-side squash, lost commits."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from looma_git.api import ledger
from looma_git.gitrepo import RepoPaths
from looma_git.ledger.ops import OpDraft
from looma_git.store.gitfacts import patch_ids
from tests.helpers import cli as looma
from tests.helpers import commit_file, git
from tests.sync.util import create, make_clone, make_remote, ref


def _link(paths: RepoPaths, sha: str, wid: str, files: list[str],
          patch_id: str | None = None) -> None:
    """A system link as backfill/the hook writes it (with the commit's patch-id)."""
    wt = paths.worktree
    assert wt is not None
    pid = patch_id or patch_ids(wt, [sha]).get(sha)
    ledger.append(paths, [OpDraft("commit.link", {"type": "commit", "id": sha},
                                  {"workitem": wid, "title": "t", "confidence": 0.8,
                                   "by": "backfill", "patch_id": pid, "files": files})],
                  actor="system")


def _relink(wt: Path) -> dict[str, Any]:
    return json.loads(looma(wt, "relink", "--json").stdout)


def _note(wt: Path, sha: str) -> str | None:
    out = git(wt, "notes", "--ref=looma", "show", sha, check=False)
    return out or None


def _dated(when: str) -> dict[str, str]:
    return dict(os.environ, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)


def _setup(tmp: Path) -> tuple[Path, RepoPaths, Path]:
    bare = make_remote(tmp)
    a = make_clone(tmp, bare, "a", share=False)
    git(tmp, "clone", "-q", str(bare), "b")
    return bare, a, tmp / "b"


def test_teammate_rebase_fetched_moves_links_by_patch_id(tmp_path: Path) -> None:
    _, a, b = _setup(tmp_path)
    wa = a.worktree
    assert wa is not None
    git(wa, "checkout", "-q", "-b", "feat/oauth")
    d = "2026-03-30T09:00:00+00:00"
    c1 = commit_file(wa, "auth/oauth.py", "def login():\n    return 'pkce'\n", "Add OAuth client",
                     date=d)
    c2 = commit_file(wa, "auth/routes.py", "ROUTES = ['/login', '/callback']\n", "Add routes",
                     date=d)
    git(wa, "push", "-q", "origin", "feat/oauth")
    wid = create(a, "OAuth login")
    _link(a, c1, wid, ["auth/oauth.py"])
    _link(a, c2, wid, ["auth/routes.py"])
    assert wid in (_note(wa, c1) or "")

    # The teammate lands a commit on main and rebases the branch onto it.
    commit_file(b, "README.md", "readme\n", "Docs", date="2026-04-01T10:00:00+00:00")
    git(b, "push", "-q", "origin", "main")
    git(b, "fetch", "-q", "origin")
    git(b, "checkout", "-q", "-b", "feat/oauth", "origin/feat/oauth")
    git(b, "rebase", "-q", "main", env=_dated("2026-04-01T11:00:00+00:00"))
    git(b, "push", "-q", "-f", "origin", "feat/oauth")

    git(wa, "fetch", "-q", "--prune", "origin")
    git(wa, "reset", "-q", "--hard", "origin/feat/oauth")
    new1 = git(wa, "rev-parse", "HEAD~1")
    new2 = git(wa, "rev-parse", "HEAD")
    assert {new1, new2}.isdisjoint({c1, c2})

    out = _relink(wa)
    assert out["orphaned"] == 2 and out["unmatched"] == []
    assert {(m["old"], m["new"], m["how"]) for m in out["matched"]} == {
        (c1, new1, "patch-id"), (c2, new2, "patch-id")}
    # Notes follow the ledger: read back with plain git.
    assert wid in (_note(wa, new1) or "") and wid in (_note(wa, new2) or "")
    assert _note(wa, c1) is None and _note(wa, c2) is None
    shown = git(wa, "log", "--notes=looma", "-1", new2)
    assert wid in shown
    rewrites = [o for o in ledger.log(a) if o.op == "commit.rewrite"]
    assert {(o.payload["old"], o.payload["new"], o.payload["by"]) for o in rewrites} == {
        (c1, new1, "relink"), (c2, new2, "relink")}
    assert all(o.actor.kind == "system" for o in rewrites)

    # Idempotent: nothing is orphaned any more, nothing is written.
    before = ref(a, "refs/looma/ledger")
    again = _relink(wa)
    assert again["orphaned"] == 0 and again["ops_written"] == 0
    assert ref(a, "refs/looma/ledger") == before


SQUASH_MSG = """OAuth login (#12)

* Add OAuth client with PKCE

* Store OAuth tokens

* wip
"""


def test_server_side_squash_merge_relinks_every_squashed_commit(tmp_path: Path) -> None:
    _, a, b = _setup(tmp_path)
    wa = a.worktree
    assert wa is not None
    git(wa, "checkout", "-q", "-b", "feat/oauth")
    d = "2026-04-02T09:00:00+00:00"
    c1 = commit_file(wa, "auth/oauth.py", "def login():\n    return exchange_code_pkce()\n",
                     "Add OAuth client with PKCE", date=d)
    c2 = commit_file(wa, "auth/tokens.py", "TOKENS = RedisStore('tokens')\n",
                     "Store OAuth tokens", date=d)
    # Its subject is not in the squash message, but its added lines are in the squash.
    c3 = commit_file(wa, "auth/routes.py",
                     "ROUTES = ['/login', '/callback']\nCALLBACK_TIMEOUT_SECONDS = 30\n",
                     "Routes for the login flow", date=d)
    # Rewritten again before the squash: neither subject nor lines survive.
    c4 = commit_file(wa, "auth/tokens.py", "TOKENS = PostgresStore('tokens')\n", "wip", date=d)
    git(wa, "push", "-q", "origin", "feat/oauth")
    wid = create(a, "OAuth login")
    for sha, f in ((c1, "auth/oauth.py"), (c2, "auth/tokens.py"), (c3, "auth/routes.py"),
                   (c4, "auth/tokens.py")):
        _link(a, sha, wid, [f])

    # "GitHub" squash-merges the PR and deletes the branch.
    git(b, "fetch", "-q", "origin")
    git(b, "merge", "-q", "--squash", "origin/feat/oauth")
    git(b, "commit", "-q", "-m", SQUASH_MSG, env=_dated("2026-04-03T09:00:00+00:00"))
    squash = git(b, "rev-parse", "HEAD")
    git(b, "push", "-q", "origin", "main", ":feat/oauth")

    git(wa, "checkout", "-q", "main")
    git(wa, "pull", "-q", "--ff-only", "--prune")
    git(wa, "branch", "-q", "-D", "feat/oauth")
    assert git(wa, "rev-parse", "HEAD") == squash

    out = _relink(wa)
    how = {m["old"]: (m["new"], m["how"]) for m in out["matched"]}
    assert how[c1] == (squash, "squash-subject")
    assert how[c2] == (squash, "squash-subject")
    assert how[c3] == (squash, "squash-lines")
    # "wip" is too short to name anything; its added line is the squash's final content.
    assert how[c4] == (squash, "squash-lines")
    note = _note(wa, squash) or ""
    assert wid in note and len(note.strip().splitlines()) == 2  # format line + one link
    for old in (c1, c2, c3, c4):
        assert _note(wa, old) is None
    state = ledger.load_state(a)
    assert [k for k in state.links] == [(squash, wid)]
    assert _relink(wa)["ops_written"] == 0


def test_lost_commit_that_matches_nothing_is_reported_and_left(tmp_path: Path) -> None:
    _, a, _b = _setup(tmp_path)
    wa = a.worktree
    assert wa is not None
    git(wa, "checkout", "-q", "-b", "spike")
    lost = commit_file(wa, "spike/idea.py", "EXPERIMENT = 'abandoned approach'\n",
                       "Try an abandoned approach")
    git(wa, "checkout", "-q", "main")
    kept = commit_file(wa, "app/main.py", "print('main')\n", "Main entry point")
    git(wa, "branch", "-q", "-D", "spike")
    wid = create(a, "Spike")
    _link(a, lost, wid, ["spike/idea.py"])
    _link(a, kept, wid, ["app/main.py"])
    # A teammate's link to a commit this clone never had: same patch-id as `kept`.
    ghost = "f" * 40
    _link(a, ghost, wid, ["app/main.py"], patch_id=patch_ids(wa, [kept])[kept])
    # ...and one with nothing to go on.
    nothing = "e" * 40
    _link(a, nothing, wid, [], patch_id="0" * 40)

    out = _relink(wa)
    assert out["linked_commits"] == 4 and out["orphaned"] == 3
    assert [(m["old"], m["new"], m["how"]) for m in out["matched"]] == [
        (ghost, kept, "patch-id")]
    miss = {u["sha"]: u for u in out["unmatched"]}
    assert set(miss) == {lost, nothing}
    assert miss[lost]["workitems"] == [wid] and "patch-id" in miss[lost]["reason"]
    assert "missing" in miss[nothing]["reason"]
    # Left as is: the lost commit keeps its link and its note.
    assert (lost, wid) in ledger.load_state(a).links
    assert wid in (_note(wa, lost) or "")

    before = ref(a, "refs/looma/ledger")
    again = _relink(wa)
    assert again["ops_written"] == 0 and again["matched"] == []
    assert {u["sha"] for u in again["unmatched"]} == {lost, nothing}
    assert ref(a, "refs/looma/ledger") == before
    human = looma(wa, "relink").stdout
    assert "2 left as is" in human and lost[:10] in human


def test_nothing_lost_writes_nothing(tmp_path: Path) -> None:
    _, a, _b = _setup(tmp_path)
    wa = a.worktree
    assert wa is not None
    sha = commit_file(wa, "x.py", "X = 1\n", "Add x")
    wid = create(a, "X")
    _link(a, sha, wid, ["x.py"])
    before = ref(a, "refs/looma/ledger")
    assert "nothing to do" in looma(wa, "relink").stdout
    assert ref(a, "refs/looma/ledger") == before
