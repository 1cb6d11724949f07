"""Read-only facts from the repository (commits, files, patch-ids) through the git binary."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path


@dataclass(frozen=True)
class CommitInfo:
    """A commit as the refinery and the linker see it."""

    sha: str
    ts: str  # committer date, ISO-8601 UTC
    author: str
    subject: str
    body: str
    files: tuple[str, ...]
    ref: str  # the ref it was reached from (`git log --source`)
    parents: tuple[str, ...]


def _git(cwd: Path, *args: str, input: str | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          input=input, check=False, errors="replace")
    if proc.returncode != 0:
        return ""
    return proc.stdout


def list_commits(worktree: Path, *, revs: tuple[str, ...] = ("--all",),
                 since: str | None = None, limit: int | None = None,
                 no_walk: bool = False) -> list[CommitInfo]:
    """Commits reachable from `revs` (default all refs except looma's), oldest first;
    with `no_walk`, exactly the named commits."""
    args = ["log", "--source", "--name-only", "--no-renames", "-z",
            "--format=%x1e%H%x1f%cI%x1f%an%x1f%P%x1f%S%x1f%s%x1f%b%x1f"]
    if no_walk:
        args.append("--no-walk=unsorted")
    if limit:
        args.append(f"-n{limit}")
    if revs == ("--all",):
        args += ["--exclude=refs/notes/*", "--exclude=refs/looma/*", "--all"]
    else:
        args += list(revs)
    if since:
        args.append(f"^{since}")
    out = _git(worktree, *args)
    commits: list[CommitInfo] = []
    for rec in out.split("\x1e"):
        if not rec.strip("\x00\n"):
            continue
        parts = rec.split("\x1f")
        if len(parts) < 8:
            continue
        sha, cdate, author, parents, ref, subject, body, rest = parts[:8]
        files = tuple(sorted({f.strip("\n") for f in rest.split("\x00") if f.strip("\n")}))
        commits.append(CommitInfo(
            sha=sha.strip(), ts=_to_utc(cdate), author=author, subject=subject,
            body=body.strip(), files=files, ref=ref,
            parents=tuple(p for p in parents.split() if p)))
    commits.reverse()
    return commits


def _to_utc(iso: str) -> str:
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(iso.strip())
    except ValueError:
        return iso
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def known_paths(worktree: Path) -> frozenset[str]:
    """Every path that exists at HEAD or ever existed in history: the file validator."""
    head = _git(worktree, "ls-tree", "-r", "-z", "--name-only", "HEAD")
    hist = _git(worktree, "log", "--all", "--exclude=refs/notes/*", "--exclude=refs/looma/*",
                "--name-only", "-z", "--format=")
    paths = {p.strip("\n") for p in (head + "\x00" + hist).split("\x00")}
    paths.discard("")
    # Files created in the work tree but not yet committed are real too.
    untracked = _git(worktree, "ls-files", "-z", "--others", "--exclude-standard", "--cached")
    paths.update(p for p in untracked.split("\x00") if p)
    return frozenset(paths)


def existing_objects(worktree: Path, candidates: list[str]) -> dict[str, str]:
    """Map each candidate (short or full sha) that names a commit here to its full sha."""
    if not candidates:
        return {}
    uniq = sorted(set(candidates))
    out = _git(worktree, "cat-file", "--batch-check=%(objectname) %(objecttype)",
               input="".join(c + "\n" for c in uniq))
    result: dict[str, str] = {}
    for cand, line in zip(uniq, out.splitlines(), strict=False):
        parts = line.split()
        if len(parts) == 2 and parts[1] == "commit":
            result[cand] = parts[0]
    return result


def patch_ids(worktree: Path, shas: list[str]) -> dict[str, str]:
    """`git patch-id --stable` for each commit (merge commits and empty ones get none)."""
    if not shas:
        return {}
    log = subprocess.run(["git", "log", "-p", "--no-walk=unsorted", "--format=commit %H",
                          "--no-color", "--stdin"], cwd=worktree, capture_output=True,
                         input=("\n".join(shas) + "\n").encode(), text=False, check=False)
    if log.returncode != 0:
        return {}
    pid = subprocess.run(["git", "patch-id", "--stable"], cwd=worktree, capture_output=True,
                         input=log.stdout, check=False)
    result: dict[str, str] = {}
    for line in pid.stdout.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2:
            result[parts[1]] = parts[0]
    return result


def head_state(worktree: Path) -> dict[str, object]:
    """Branch, HEAD and dirty files for a resume bundle."""
    branch = _git(worktree, "symbolic-ref", "--short", "-q", "HEAD").strip() or None
    head = _git(worktree, "rev-parse", "--short", "HEAD").strip() or None
    status = _git(worktree, "status", "--porcelain", "-z", "--untracked-files=normal")
    dirty = sorted({entry[3:] for entry in status.split("\x00") if len(entry) > 3})
    return {"branch": branch, "head": head, "dirty": dirty}
