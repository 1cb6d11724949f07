"""The pre-push shim: with sharing enabled a push also carries looma's refs, best-effort."""

from __future__ import annotations

from pathlib import Path

from looma_git.api import ledger
from looma_git.gitrepo import find_repo
from looma_git.ledger.ops import OpDraft
from tests.helpers import cli, git
from tests.hooks.util import run_git, wait_drains, wait_for

LEDGER = "refs/looma/ledger"


def _clone_pair(tmp: Path) -> tuple[Path, Path, Path]:
    """A bare remote and two identical clones of it: `plain` (no looma) and `hooked`."""
    seed = tmp / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "a.txt").write_text("a\n")
    git(seed, "add", "a.txt")
    git(seed, "commit", "-q", "-m", "first")
    out = []
    for name in ("plain", "hooked"):
        bare = tmp / f"{name}.git"
        git(tmp, "clone", "-q", "--bare", str(seed), str(bare))
        git(tmp, "clone", "-q", str(bare), name)
        out.append(tmp / name)
    return tmp / "hooked.git", out[0], out[1]


def _same_commit(repos: list[Path], name: str) -> None:
    for r in repos:
        (r / name).write_text(name + "\n")
        run_git(r, "add", name)
        rc, _, err = run_git(r, "commit", "-q", "-m", name)  # fixed dates: same sha in both
        assert rc == 0, err


def _remote_ref(bare: Path, ref: str) -> str | None:
    return git(bare, "rev-parse", "-q", "--verify", ref, check=False) or None


def _setup_hooked(repo: Path, share: bool) -> None:
    cli(repo, "init")
    if share:
        cli(repo, "share", "enable", "origin")
    ledger.append(find_repo(repo), [OpDraft("workitem.create", {"type": "workitem"},
                                            {"title": "OAuth login"})], actor="user")
    cli(repo, "hooks", "install")


def _log_with(repo: Path, text: str) -> str | None:
    log = (repo / ".git" / "looma" / "hooks.log").read_text()
    return log if text in log else None


def _norm(result: tuple[int, str, str], repo: Path) -> tuple[int, str, str]:
    rc, out, err = result
    return rc, out.replace(repo.name, "<r>"), err.replace(repo.name, "<r>")


def test_push_with_sharing_also_pushes_the_ledger_and_changes_nothing_else(
        tmp_path: Path) -> None:
    bare, plain, hooked = _clone_pair(tmp_path)
    _setup_hooked(hooked, share=True)
    _same_commit([plain, hooked], "b.txt")

    results = [_norm(run_git(r, "push", "origin", "main"), r) for r in (plain, hooked)]
    assert results[0] == results[1] and results[0][0] == 0, results
    head = git(hooked, "rev-parse", "HEAD")
    assert _remote_ref(bare, "refs/heads/main") == head == git(plain, "rev-parse", "HEAD")

    # The sync runs detached after the push; the deadline only turns a hang into a failure.
    local = git(hooked, "rev-parse", LEDGER)
    wait_for(lambda: _remote_ref(bare, LEDGER) == local, "refs/looma/ledger on the remote",
             deadline_s=120)
    ops = git(bare, "ls-tree", "-r", "--name-only", LEDGER, "ops/").splitlines()
    assert any("workitem.create" in git(bare, "show", f"{LEDGER}:{p}") for p in ops)
    log = wait_for(lambda: _log_with(hooked, "pre-push origin: pushed"), "the pre-push log line")
    assert "pre-push: synced origin" in log
    # The user's branch and working tree are untouched; only looma's refs were added remotely.
    assert git(bare, "for-each-ref", "--format=%(refname)", "refs/heads") == "refs/heads/main"
    assert git(hooked, "status", "--porcelain") == ""


def test_push_without_sharing_pushes_no_looma_ref(tmp_path: Path) -> None:
    bare, plain, hooked = _clone_pair(tmp_path)
    _setup_hooked(hooked, share=False)
    _same_commit([plain, hooked], "b.txt")
    results = [_norm(run_git(r, "push", "origin", "main"), r) for r in (plain, hooked)]
    assert results[0] == results[1] and results[0][0] == 0
    # A (wrongly) started pre-push child would wait for the drainer, then log and sync.
    wait_drains(hooked, 1)
    wait_for(lambda: _log_with(hooked, "link: ok"), "the drain to log")
    assert "pre-push origin" not in (hooked / ".git" / "looma" / "hooks.log").read_text()
    assert git(bare, "for-each-ref", "refs/looma") == ""


def test_a_rejecting_foreign_pre_push_still_decides_and_nothing_is_synced(
        tmp_path: Path) -> None:
    bare, plain, hooked = _clone_pair(tmp_path)
    reject = "#!/bin/sh\necho 'policy: no pushes today' >&2\nexit 1\n"
    for r in (plain, hooked):
        (r / ".git" / "hooks" / "pre-push").write_text(reject)
        (r / ".git" / "hooks" / "pre-push").chmod(0o755)
    _setup_hooked(hooked, share=True)
    assert (hooked / ".git" / "hooks" / "pre-push.looma-chained").exists()
    _same_commit([plain, hooked], "b.txt")
    results = [_norm(run_git(r, "push", "origin", "main"), r) for r in (plain, hooked)]
    assert results[0] == results[1] and results[0][0] != 0
    assert "policy: no pushes today" in results[1][2]
    assert _remote_ref(bare, "refs/heads/main") != git(hooked, "rev-parse", "HEAD")
    wait_drains(hooked, 1)
    wait_for(lambda: _log_with(hooked, "link: ok"), "the drain to log")
    assert "pre-push origin" not in (hooked / ".git" / "looma" / "hooks.log").read_text()
    assert _remote_ref(bare, LEDGER) is None


def test_a_branch_push_the_remote_refuses_pushes_no_looma_ref(tmp_path: Path) -> None:
    bare, _plain, hooked = _clone_pair(tmp_path)
    # The server refuses branch updates (a protected branch) but would take looma's refs.
    receive = bare / "hooks" / "pre-receive"
    receive.write_text("#!/bin/sh\nwhile read o n ref; do case $ref in refs/heads/*)"
                       " echo 'protected branch' >&2; exit 1;; esac; done\nexit 0\n")
    receive.chmod(0o755)
    _setup_hooked(hooked, share=True)
    _same_commit([hooked], "b.txt")
    rc, _, err = run_git(hooked, "push", "origin", "main")
    assert rc != 0 and "protected branch" in err
    log = wait_for(lambda: _log_with(hooked, "pre-push origin: skipped"), "the pre-push child")
    assert "refs/heads/main did not land" in log
    assert _remote_ref(bare, LEDGER) is None
    assert "pre-push: synced" not in log
