"""The ledger ref read back with the git binary; hostile files; concurrency; worktrees."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from looma_git.api import ledger as api
from looma_git.errors import InvalidDataError, LockError, NotFoundError, ReadOnlyError
from looma_git.gitrepo import find_repo
from looma_git.ledger import yamlio
from looma_git.ledger.ops import OpDraft, build_op
from looma_git.store.clone import SYSTEM_ACTOR
from tests.helpers import git, make_repo
from tests.store.ledger_helpers import create, init, inject


def _snapshot(repo: Path) -> tuple[str, str, str, str]:
    return (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"),
            git(repo, "for-each-ref", "refs/heads"), git(repo, "ls-files", "-s"))


def test_ops_readable_with_git_and_worktree_untouched(repo: Path) -> None:
    (repo / "dirty.txt").write_text("dirty\n")
    before = _snapshot(repo)
    paths = init(repo)
    nasty = ["no", "on", "yes", "0123", "1e3", "2026-11-29", "null", "~", "", "a: b\n#c"]
    ops = api.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                                     {"title": "Implement OAuth Login", "aliases": nasty})])
    op = ops[0]
    shown = git(repo, "show", f"refs/looma/ledger:ops/{op.id[:2]}/{op.id}.yaml") + "\n"
    loaded = yamlio.load(shown.encode(), what="t", max_bytes=1 << 20)
    assert loaded["payload"]["aliases"] == nasty and loaded["id"] == op.id
    assert loaded["actor"] == {"kind": "user", "name": "Test User", "email": "test@example.com"}
    assert git(repo, "cat-file", "-t", "refs/looma/ledger") == "commit"
    wid = "wi_" + op.id[:10]
    assert "title: Implement OAuth Login" in git(repo, "show", f"refs/looma/ledger:workitems/{wid}.yaml")
    assert git(repo, "show", "refs/looma/ledger:format.yaml") == "looma_ledger: 1"
    git(repo, "fsck", "--strict")
    assert _snapshot(repo) == before
    assert api.verify(paths).ok


def test_lamport_increases_within_batch_and_prev_filled(repo: Path) -> None:
    paths = init(repo)
    w = create(paths, "x")
    ops = api.append(paths, [OpDraft("workitem.rename", {"type": "workitem", "id": w},
                                     {"title": t}) for t in ("a", "b")])
    assert [o.lamport for o in ops] == [2, 3]
    assert ops[0].payload["prev"] == [] and ops[1].payload["prev"] == [ops[0].id]
    assert api.load_state(paths).workitems[w].title == "b"
    assert [o.id for o in api.log(paths, limit=2)] == [ops[1].id, ops[0].id]
    assert [o.op for o in api.log(paths, user_only=True)] == ["workitem.rename"] * 2
    assert api.resolve_op(paths, ops[0].id[:12]).id == ops[0].id
    with pytest.raises(NotFoundError):
        api.resolve_op(paths, "zz")
    with pytest.raises(NotFoundError):
        api.append(paths, [OpDraft("undo", {"type": "op", "id": "f" * 64}, inverse_of="f" * 64)])


def test_secrets_redacted_before_hashing(repo: Path) -> None:
    paths = init(repo)
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    op = api.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                                    {"title": "t", "summary": f"token {secret}"})])[0]
    blob = git(repo, "show", f"refs/looma/ledger:ops/{op.id[:2]}/{op.id}.yaml")
    assert secret not in blob and secret not in op.payload["summary"]


def test_hostile_files_rejected_kept_and_reported(repo: Path, tmp_path: Path) -> None:
    paths = init(repo)
    w = create(paths, "x")
    good = build_op(OpDraft("workitem.update", {"type": "workitem", "id": w}, {"summary": "s"}),
                    lamport=2, ts="2026-01-01T00:00:00Z", actor=SYSTEM_ACTOR, clone="c_" + "1" * 16)
    tampered = dict(good.fields(), payload={"summary": "evil"})
    jump = build_op(OpDraft("workitem.update", {"type": "workitem", "id": w}, {"summary": "j"}),
                    lamport=5_000_000, ts="t", actor=SYSTEM_ACTOR, clone="c_" + "1" * 16)
    future = dict(good.fields(), v=2, lamport=3, extra={"new": "field"})
    future_bytes = yamlio.dump(future)
    fid = "ab" + "0" * 62

    def p(i: str) -> str:
        return f"ops/{i[:2]}/{i}.yaml"

    files = {
        p(good.id): yamlio.dump(tampered),
        p(jump.id): yamlio.dump(jump.fields()),
        p(fid): future_bytes,
        p("cd" + "1" * 62): b"a: &x [1]\nb: *x\n",
        p("cd" + "2" * 62): b"- just\n- a list\n",
        p("cd" + "3" * 62): b"v: 1\nid: \xff\xfe\n",
        p("cd" + "4" * 62): b"v: 1\nx: " + b"y" * (300 * 1024) + b"\n",
        p("cd" + "5" * 62): b"v: 1\nx: !!python/object:os.system ls\n",
    }
    inject(repo, files, tmp_path)
    report = api.verify(paths)
    reasons = {pr.op_id: pr.message for pr in report.problems if pr.kind == "rejected_op"}
    assert "does not match its content" in reasons[good.id]
    assert "jumps" in reasons[jump.id]
    assert "anchors" in reasons["cd" + "1" * 62]
    assert "not a mapping" in reasons["cd" + "2" * 62]
    assert "UTF-8" in reasons["cd" + "3" * 62]
    assert "exceeds" in reasons["cd" + "4" * 62]
    assert "tags" in reasons["cd" + "5" * 62]
    assert any("unknown op version 2" in wmsg for wmsg in report.warnings)
    st = api.load_state(paths)
    assert st.workitems[w].summary == ""  # neither the tampered nor the jumping op folded
    # further writes keep the unknown-version file byte for byte, and lamport ignores the jump
    op = api.append(paths, [OpDraft("workitem.update", {"type": "workitem", "id": w},
                                    {"summary": "ok"})], actor="system")[0]
    assert op.lamport == 4
    shown = subprocess.run(["git", "show", f"refs/looma/ledger:{p(fid)}"], cwd=repo,
                           capture_output=True, check=True).stdout
    assert shown == future_bytes
    git(repo, "fsck", "--strict")


def test_newer_ledger_format_is_a_clear_error(repo: Path, tmp_path: Path) -> None:
    paths = init(repo)
    inject(repo, {"format.yaml": b"looma_ledger: 2\n"}, tmp_path)
    with pytest.raises(InvalidDataError, match="format 2"):
        api.load_state(paths)


def test_history_rewrite_detected(repo: Path, tmp_path: Path) -> None:
    paths = init(repo)
    w = create(paths, "x")
    op = api.log(paths)[0]
    env = dict(os.environ, GIT_INDEX_FILE=str(tmp_path / "i"))
    git(repo, "read-tree", "refs/looma/ledger", env=env)
    git(repo, "update-index", "--remove", "--force-remove", f"ops/{op.id[:2]}/{op.id}.yaml", env=env)
    tree = git(repo, "write-tree", env=env)
    c = git(repo, "commit-tree", tree, "-p", "refs/looma/ledger", "-m", "drop")
    git(repo, "update-ref", "refs/looma/ledger", c)
    report = api.verify(paths)
    assert any(p.kind == "history" and p.op_id == op.id for p in report.problems)
    assert any(p.kind == "projection_extra" and w in (p.path or "") for p in report.problems)


def test_stale_ref_lock_names_the_file(repo: Path) -> None:
    paths = init(repo)
    lock = paths.common_dir / "refs" / "looma" / "ledger.lock"
    lock.write_text("")
    old = time.time() - 120
    os.utime(lock, (old, old))
    with pytest.raises(LockError, match=r"ledger\.lock") as err:
        create(paths, "x")
    assert err.value.hint and f"rm {lock}" in err.value.hint
    lock.unlink()
    create(paths, "x")


def test_read_only_git_dir_writes_nothing(repo: Path) -> None:
    paths = init(repo)
    create(paths, "x")
    before = git(repo, "rev-parse", "refs/looma/ledger")
    dirs = [d for d, _, _ in os.walk(paths.common_dir)]
    try:
        for d in dirs:
            os.chmod(d, stat.S_IRUSR | stat.S_IXUSR)
        if os.access(paths.common_dir, os.W_OK):
            pytest.skip("running as root: permissions are not enforced")
        with pytest.raises(ReadOnlyError):
            create(paths, "y")
    finally:
        for d in dirs:
            os.chmod(d, stat.S_IRWXU)
    assert git(repo, "rev-parse", "refs/looma/ledger") == before
    git(repo, "fsck", "--strict")


def test_linked_worktree_shares_common_dir(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "side")
    paths = find_repo(wt)
    report = api.init_repo(paths)
    assert Path(report.state_dir) == (repo / ".git" / "looma").resolve()
    create(paths, "from worktree")
    assert git(repo, "config", "--get-all", "notes.rewriteRef") == "refs/notes/looma"
    api.init_repo(find_repo(repo))
    assert git(repo, "config", "--get-all", "notes.rewriteRef") == "refs/notes/looma"
    assert git(repo, "config", "notes.rewriteMode") == "cat_sort_uniq"
    titles = [w.title for w in api.load_state(find_repo(repo)).workitems.values()]
    assert titles == ["from worktree"]
    assert git(wt, "status", "--porcelain") == ""


def test_bare_repo_refused(tmp_path: Path) -> None:
    from looma_git.errors import NotARepositoryError

    git(tmp_path, "init", "-q", "--bare", "b.git")
    with pytest.raises(NotARepositoryError):
        api.init_repo(find_repo(tmp_path / "b.git"))


_WRITER = """
import sys
from looma_git.api import ledger as api
from looma_git.gitrepo import find_repo
from looma_git.ledger.ops import OpDraft
paths = find_repo(sys.argv[1])
for i in range(int(sys.argv[3])):
    api.append(paths, [OpDraft("workitem.create", {"type": "workitem"},
                               {"title": f"w{sys.argv[2]}-{i}"})], actor="system")
"""


def test_concurrent_writer_processes_lose_nothing(repo: Path) -> None:
    paths = init(repo)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(repo), str(n), "50"],
                              env=env, stderr=subprocess.PIPE) for n in range(8)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()
    ops = api.log(paths)
    assert len(ops) == 400 and len({o.lamport for o in ops}) == 400
    titles = {w.title for w in api.load_state(paths).workitems.values()}
    assert titles == {f"w{n}-{i}" for n in range(8) for i in range(50)}
    assert api.verify(paths).ok
    git(repo, "fsck", "--strict")


def test_two_clones_same_ops_identical_projection_trees(tmp_path: Path) -> None:
    from looma_git.ledger.projections import projection_files

    a_repo = make_repo(tmp_path / "a")
    a = init(a_repo)
    w = create(a, "x", files=["f.py"])
    api.append(a, [OpDraft("workitem.rename", {"type": "workitem", "id": w}, {"title": "y"})])
    api.append(a, [OpDraft("workitem.update", {"type": "workitem", "id": w}, {"summary": "s"}),
                   OpDraft("memory.promote", {"type": "memory"}, {"kind": "todo", "text": "t"})],
               actor="system")
    ops = api.log(a)
    b_repo = make_repo(tmp_path / "b")
    b = init(b_repo)
    for op in ops:  # b receives the op files one by one, newest first
        inject(b_repo, {f"ops/{op.id[:2]}/{op.id}.yaml": yamlio.dump(op.fields())}, tmp_path)
    files_b = projection_files(api.load_state(b))
    assert files_b == projection_files(api.load_state(a))
    for sub in ("workitems", "memories"):
        entries = []
        for path, data in sorted(files_b.items()):
            if path.startswith(sub + "/"):
                blob = git(b_repo, "hash-object", "-w", "--stdin", input=data.decode())
                entries.append(f"100644 blob {blob}\t{path.split('/', 1)[1]}")
        tree_b = git(b_repo, "mktree", input="\n".join(entries) + "\n")
        assert tree_b == git(a_repo, "rev-parse", f"refs/looma/ledger:{sub}")
    assert git(a_repo, "rev-parse", "refs/looma/ledger:ops") == \
        git(b_repo, "rev-parse", "refs/looma/ledger:ops")
