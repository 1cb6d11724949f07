"""`looma sync`: union merge, merge commits, notes, CAS races, conflicts, fresh clones."""

from __future__ import annotations

import json
from pathlib import Path

from looma_git.api import ledger, sync
from tests.helpers import cli as looma
from tests.helpers import git
from tests.sync.util import (
    create,
    link,
    make_clone,
    make_remote,
    op_ids,
    ref,
    rename,
    sha,
    tree,
    wt,
)


def test_two_clones_exchange_ops_through_a_merge_commit(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    create(a, "OAuth login")
    first = sync.sync(a)
    assert (first.ops_in, first.ops_out, first.pushed, first.retries) == (0, 1, True, 0)
    create(b, "Fix the database pool")
    create(b, "Upgrade the parser")
    before_b = sha(b, "refs/looma/ledger")
    out = sync.sync(b)
    assert (out.ops_in, out.ops_out, out.pushed) == (1, 2, True)
    head = sha(b, "refs/looma/ledger")
    parents = git(wt(b), "rev-list", "--parents", "-n1", head).split()[1:]
    assert sorted(parents) == sorted([before_b, sha(a, "refs/looma/ledger")])
    assert git(bare, "rev-parse", "refs/looma/ledger") == head
    assert ref(b, "refs/looma/remotes/origin/ledger") == head
    back = sync.sync(a)
    assert (back.ops_in, back.ops_out, back.pushed) == (2, 0, False)
    assert ref(a, "refs/looma/ledger") == head  # fast-forward, no extra commit
    assert op_ids(a) == op_ids(b) and len(op_ids(a)) == 3
    titles = {w.title for w in ledger.load_state(a).workitems.values()}
    assert titles == {"OAuth login", "Fix the database pool", "Upgrade the parser"}
    # projections are regenerated from the fold of the union: the git binary sees them
    listing = git(wt(a), "ls-tree", "--name-only", "refs/looma/ledger", "workitems/")
    assert len(listing.splitlines()) == 3
    assert ledger.verify(a).ok and ledger.verify(b).ok
    again = sync.sync(b)
    assert (again.ops_in, again.ops_out, again.pushed) == (0, 0, False)


def test_notes_are_regenerated_from_the_merged_fold(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    git(wt(b), "remote", "set-url", "origin", bare.as_uri())  # file:// works the same
    shas = git(wt(a), "rev-list", "main").split()
    wa = create(a, "OAuth login")
    link(a, shas[0], wa)
    wb = create(b, "Parser")
    link(b, shas[1], wb)
    sync.sync(a)
    sync.sync(b)
    sync.sync(a)
    for clone in (a, b):
        assert "wi_" in git(wt(clone), "notes", "--ref=looma", "show", shas[0])
        assert f"workitem: {wb}" in git(wt(clone), "notes", "--ref=looma", "show", shas[1])
    assert tree(a, "refs/notes/looma") == tree(b, "refs/notes/looma")
    assert git(bare, "rev-parse", "refs/notes/looma") == ref(a, "refs/notes/looma")
    # the pushed notes commit descends from both clones' notes (fast-forward for everyone)
    log = git(bare, "rev-list", "refs/notes/looma").split()
    assert len(log) >= 3


def test_a_lost_race_fetches_merges_and_pushes_again(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    create(a, "From A")
    create(b, "From B")
    from looma_git.store import sync as store_sync

    raced: list[str] = []

    def b_pushes_first(attempt: int) -> None:
        if attempt == 0:  # another clone wins the race between our fetch and our push
            sync.sync(b)
            raced.append(git(bare, "rev-parse", "refs/looma/ledger"))

    url = str(bare)
    out = store_sync.sync(a, "origin", url, before_push=b_pushes_first)
    assert out.retries == 1 and out.pushed and out.ops_in == 1
    assert git(bare, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")
    raced_head = raced[0]
    sync.sync(b)
    assert op_ids(a) == op_ids(b) and len(op_ids(a)) == 2
    # the remote's ledger only ever moved forward: what B pushed is an ancestor of it now
    # (git() fails the test when `merge-base --is-ancestor` exits non-zero)
    git(bare, "merge-base", "--is-ancestor", sha(b, "refs/looma/remotes/origin/ledger"),
        "refs/looma/ledger")
    git(bare, "merge-base", "--is-ancestor", raced_head, "refs/looma/ledger")


def test_concurrent_renames_are_resolved_and_reported(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    wid = create(a, "Login")
    sync.sync(a)
    sync.sync(b)
    rename(a, wid, "OAuth login")
    rename(b, wid, "SSO login")
    sync.sync(a)
    out = sync.sync(b)
    assert out.new_conflicts == 1 and len(out.conflicts) == 1
    c = out.conflicts[0]
    assert c.kind == "rename" and c.target == wid
    assert {o.payload["title"] for o in c.ops} == {"OAuth login", "SSO login"}
    winner = next(o for o in c.ops if o.id == c.winner)
    assert winner == max(c.ops, key=lambda o: (o.lamport, o.id))
    sync.sync(a)
    for clone in (a, b):
        assert ledger.load_state(clone).workitems[wid].title == winner.payload["title"]
        data = json.loads(looma(wt(clone), "conflicts", "--json").stdout)
        assert data["conflicts"][0]["winner"] == c.winner
        assert data["conflicts"][0]["kind"] == "rename"
    text = looma(wt(a), "conflicts").stdout
    assert wid in text and "* " + c.winner[:10] in text
    # a later rename that has seen both heads resolves it: no new conflict
    rename(a, wid, "Single sign-on")
    assert sync.sync(a).new_conflicts == 0


def test_merge_against_split_is_a_conflict(tmp_path: Path) -> None:
    from looma_git.ledger.ops import OpDraft

    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    b = make_clone(tmp_path, bare, "b")
    w1, w2 = create(a, "Auth", files=["a.py", "b.py"]), create(a, "Login", files=["c.py"])
    sync.sync(a)
    sync.sync(b)
    ledger.append(a, [OpDraft("workitem.merge", {"type": "workitem", "id": w2}, {"from": [w1]})])
    ledger.append(b, [OpDraft("workitem.split", {"type": "workitem", "id": w1},
                              {"by": "files", "parts": [{"title": "A", "files": ["a.py"]},
                                                        {"title": "B", "files": ["b.py"]}]})])
    sync.sync(a)
    out = sync.sync(b)
    assert [c.kind for c in out.conflicts] == ["merge_split"]
    sync.sync(a)
    status = looma(wt(a), "status", "--health", "--json", check=False)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["ledger"]["conflicts"] == 1


def test_fresh_clone_gets_the_same_workitems_and_notes(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    a = make_clone(tmp_path, bare, "a")
    shas = git(wt(a), "rev-list", "main").split()
    wid = create(a, "OAuth login", files=["file0.txt"], confidence=0.9, band="high")
    link(a, shas[0], wid)
    sync.sync(a)
    want = json.loads(looma(wt(a), "work", "--json").stdout)
    note = git(wt(a), "notes", "--ref=looma", "show", shas[0])

    git(tmp_path, "clone", "-q", str(bare), "mate")
    mate = tmp_path / "mate"
    looma(mate, "init")
    looma(mate, "share", "enable")
    out = json.loads(looma(mate, "sync", "--json").stdout)
    assert out["ops_in"] == 2 and out["remote"] == "origin" and out["conflicts"] == []
    assert set(out) >= {"remote", "ops_in", "ops_out", "conflicts", "pushed", "retries"}
    assert json.loads(looma(mate, "work", "--json").stdout) == want
    assert git(mate, "notes", "--ref=looma", "show", shas[0]) == note
    # a fresh clone adopts the remote ledger instead of piling merge commits on its init commit
    assert git(mate, "rev-parse", "refs/looma/ledger") == ref(a, "refs/looma/ledger")

    # the same through plain `git fetch` with the configured refspecs, then a local merge
    git(tmp_path, "clone", "-q", str(bare), "mate2")
    mate2 = tmp_path / "mate2"
    looma(mate2, "init")
    looma(mate2, "share", "enable")
    git(mate2, "fetch", "-q")
    assert git(mate2, "rev-parse", "refs/looma/remotes/origin/ledger") == \
        ref(a, "refs/looma/ledger")
    local = json.loads(looma(mate2, "sync", "--no-fetch", "--no-push", "--json").stdout)
    assert local["fetched"] is False and local["pushed"] is False and local["ops_in"] == 2
    assert json.loads(looma(mate2, "work", "--json").stdout) == want
    assert git(mate2, "notes", "--ref=looma", "show", shas[0]) == note
    text = looma(mate2, "sync").stdout
    assert "0 op(s) in, 0 op(s) out" in text
