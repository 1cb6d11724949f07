"""looma beside the real hook managers (pre-commit, lefthook, husky), in both install orders:
status names each state and its fix, looma keeps running, uninstall is exact."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from looma_git.hooks import shims
from tests.helpers import FIXTURES, cli, git
from tests.hooks.util import env, install, run_git, state_dir, status_json, twin

BIN = Path(sys.executable).parent
MINIMAL_PATH = "/usr/bin:/bin"  # git and sh, no looma: the shims only queue (no drainer)


def tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        found = shutil.which(name)
        if found is None:
            pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
        return found
    return str(path)


def files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())
            if p.is_file() and not p.name.endswith(".sample")}


def queued(repo: Path) -> list[str]:
    q = state_dir(repo) / "queue"
    return [ln.split()[0] for ln in q.read_text().splitlines()] if q.exists() else []


def commit(repo: Path, msg: str) -> str:
    (repo / "a.txt").write_text(f"{msg}\n")
    rc, _, err = run_git(repo, "commit", "-qam", msg, extra_env={"PATH": MINIMAL_PATH})
    assert rc == 0, err
    return git(repo, "rev-parse", "HEAD")


def problems(repo: Path, hook: str) -> list[str]:
    """status problems about `hook`, less the gone test interpreter (on purpose here)."""
    return [p for p in status_json(repo)["problems"]
            if p.startswith(hook) and "/gone/python" not in p]


def by_name(st: dict) -> dict[str, dict]:
    return {h["name"]: h for h in st["hooks"]}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = twin(tmp_path)
    cli(r, "init")
    return r


def pre_commit(repo: Path, *args: str) -> None:
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    subprocess.run([tool("pre-commit"), *args, "-t", "post-commit", "-t", "pre-push"],
                   cwd=repo, check=True, capture_output=True, env=env())


def test_pre_commit_installed_after_looma(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    install(repo, python="/gone/python")  # no drainer: the queue shows the shim ran
    pre_commit(repo, "install")
    assert shims.is_looma_shim((hooks / "post-commit.legacy").read_bytes())
    st = status_json(repo)
    pc = by_name(st)["post-commit"]
    assert (pc["state"], pc["manager"]) == ("installed", "pre-commit")
    assert pc["shim_path"].endswith("post-commit.legacy")
    assert not problems(repo, "post-commit")
    sha = commit(repo, "under pre-commit")
    assert queued(repo) == [sha]

    cli(repo, "hooks", "uninstall")
    assert not (hooks / "post-commit.legacy").exists()
    commit(repo, "after uninstall")
    assert queued(repo) == [sha]  # looma no longer runs
    subprocess.run([tool("pre-commit"), "uninstall", "-t", "post-commit", "-t", "pre-push"],
                   cwd=repo, check=True, capture_output=True, env=env())
    assert files(hooks) == {}


def test_looma_installed_after_pre_commit_survives_pre_commit_uninstall(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    pre_commit(repo, "install")
    theirs = files(hooks)
    install(repo, python="/gone/python")
    assert files(hooks)["post-commit"] == theirs["post-commit"]  # pre-commit's file untouched
    subprocess.run([tool("pre-commit"), "uninstall", "-t", "post-commit", "-t", "pre-push"],
                   cwd=repo, check=True, capture_output=True, env=env())
    # pre-commit put its .legacy back: looma's shim is the hook now, pre-commit is gone.
    assert shims.is_looma_shim((hooks / "post-commit").read_bytes())
    assert all(h["state"] == "installed" and not h["manager"]
               for h in status_json(repo)["hooks"])
    sha = commit(repo, "pre-commit gone")
    assert queued(repo) == [sha]
    cli(repo, "hooks", "uninstall")
    assert files(hooks) == {}


def test_an_older_looma_chaining_pre_commit_is_reported_and_migrated(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    pre_commit(repo, "install")
    theirs = (hooks / "post-commit").read_bytes()
    # What looma did before: pre-commit's hook moved aside and chained.
    (hooks / "post-commit").rename(hooks / "post-commit.looma-chained")
    (hooks / "post-commit").write_text(shims.render("/gone/python"))
    (hooks / "post-commit").chmod(0o755)
    st = status_json(repo)
    assert any("pre-commit uninstall" in p for p in st["problems"])
    install(repo, python="/gone/python")
    assert (hooks / "post-commit").read_bytes() == theirs
    assert shims.is_looma_shim((hooks / "post-commit.legacy").read_bytes())
    assert not (hooks / "post-commit.looma-chained").exists()


LEFTHOOK_YML = "post-commit:\n  jobs:\n    - run: echo team-job > .git/team-job-ran\n"
LEFTHOOK_LOCAL = ("post-commit:\n  jobs:\n    - run: sh \"$(git rev-parse --git-path hooks)"
                  "/post-commit.looma\" {0}\n      use_stdin: true\n")


def lefthook_install(repo: Path) -> None:
    subprocess.run([tool("lefthook"), "install"], cwd=repo, check=True, capture_output=True,
                   env=env(PATH=MINIMAL_PATH))


@pytest.mark.parametrize("order", ["looma-first", "lefthook-first"])
def test_lefthook_in_both_orders(repo: Path, order: str) -> None:
    hooks = repo / ".git" / "hooks"
    (repo / "lefthook.yml").write_text(LEFTHOOK_YML)
    if order == "looma-first":
        install(repo, python="/gone/python")
        lefthook_install(repo)
        # lefthook moved looma's shim to .old, which it never runs: reported with the fix.
        assert shims.is_looma_shim((hooks / "post-commit.old").read_bytes())
        st = status_json(repo)
        assert any("post-commit.old" in p and "looma hooks install" in p
                   for p in st["problems"])
        commit(repo, "silently unlinked before")
        assert queued(repo) == []
    else:
        lefthook_install(repo)
    lefthook_hook = (hooks / "post-commit").read_bytes()
    install(repo, python="/gone/python")
    assert (hooks / "post-commit").read_bytes() == lefthook_hook  # never fought over
    assert not (hooks / "post-commit.old").exists()
    st = status_json(repo)
    assert by_name(st)["post-commit"]["manager"] == "lefthook"
    assert any("lefthook-local.yml" in p for p in st["problems"])  # the job is still missing
    (repo / "lefthook-local.yml").write_text(LEFTHOOK_LOCAL)
    assert not problems(repo, "post-commit")
    sha = commit(repo, "via lefthook")
    assert (repo / ".git" / "team-job-ran").exists()
    assert queued(repo)[-1] == sha
    lefthook_install(repo)  # a re-sync leaves looma's slot alone
    assert shims.is_looma_shim((hooks / "post-commit.looma").read_bytes())
    cli(repo, "hooks", "uninstall")
    assert (hooks / "post-commit").read_bytes() == lefthook_hook
    assert not any(p.name.endswith((".looma", ".old", ".looma-chained"))
                   for p in hooks.iterdir())


HUSKY = FIXTURES / "husky-9.1.7" / "index.js"


def husky(repo: Path) -> None:
    """What `npx husky` runs on `npm install` (husky's own index.js, unmodified)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    proc = subprocess.run([node, "--input-type=module", "-e",
                           f"import h from {str(HUSKY)!r}; process.stdout.write(h())"],
                          cwd=repo, capture_output=True, text=True, env=env())
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr


def test_husky_install_reinstall_and_exact_uninstall(repo: Path) -> None:
    husky(repo)
    assert git(repo, "config", "core.hooksPath") == ".husky/_"
    (repo / ".husky" / "post-commit").write_text("echo husky-user-hook > .git/husky-ran\n")
    git(repo, "add", ".husky/post-commit")
    git(repo, "commit", "-qm", "team hook", env=env())
    underscore = repo / ".husky" / "_"
    theirs = files(underscore)
    install(repo, python="/gone/python")  # .husky/_ is ignored (husky's own .gitignore)
    assert git(repo, "status", "--porcelain") == ""
    sha = commit(repo, "husky and looma")
    assert (repo / ".git" / "husky-ran").read_text() == "husky-user-hook\n"
    assert queued(repo) == [sha]

    husky(repo)  # `npm install` runs husky again: its stubs overwrite looma's shims
    st = status_json(repo)
    assert by_name(st)["post-commit"]["manager"] == "husky"
    assert any("husky rewrote post-commit" in p and "looma hooks install" in p
               for p in st["problems"])
    install(repo, python="/gone/python")
    assert not problems(repo, "post-commit")
    sha2 = commit(repo, "again")
    assert queued(repo)[-1] == sha2
    cli(repo, "hooks", "uninstall")
    assert files(underscore) == theirs
    assert git(repo, "status", "--porcelain") == ""
