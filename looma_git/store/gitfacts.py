"""Read-only facts from the repository (commits, files, patch-ids) through the git binary."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC
from pathlib import Path

from looma_git.store import git


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
    authored: str = ""  # author date, ISO-8601 UTC: kept by a rebase that moves `ts` on


def list_commits(worktree: Path, *, revs: tuple[str, ...] = ("--all",),
                 since: str | None = None, limit: int | None = None,
                 no_walk: bool = False, after: str | None = None,
                 paths: tuple[str, ...] = ()) -> list[CommitInfo]:
    """Commits reachable from `revs` (default all refs except looma's), oldest first;
    with `no_walk`, exactly the named commits. `after` (a date git understands) keeps
    commits committed since then; `paths` keeps commits touching one of them (each still
    listed with all its files)."""
    args = ["log", "--source", "--name-only", "--no-renames", "-z",
            "--format=%x1e%H%x1f%cI%x1f%an%x1f%P%x1f%S%x1f%s%x1f%aI%x1f%b%x1f"]
    if no_walk:
        args.append("--no-walk=unsorted")
        # One commit this clone lacks (a teammate's unpushed work, a gc'd rebase) would make
        # `git log` fail for the whole list: name only the commits that are here.
        present = existing_objects(worktree, [r for r in revs if _HEX.match(r)])
        revs = tuple(present[r] if _HEX.match(r) else r for r in revs
                     if not _HEX.match(r) or r in present)
        if not revs:
            return []
    if limit:
        args.append(f"-n{limit}")
    if after:
        args.append(f"--since={after}")
    if revs == ("--all",):
        args += ["--exclude=refs/notes/*", "--exclude=refs/looma/*", "--all"]
    else:
        args += list(revs)
    if since:
        args.append(f"^{since}")
    if paths:
        args.insert(1, "--full-diff")
        args += ["--", *paths]
    out = git.out(worktree, *args)
    commits: list[CommitInfo] = []
    for rec in out.split("\x1e"):
        if not rec.strip("\x00\n"):
            continue
        parts = rec.split("\x1f")
        if len(parts) < 9:
            continue
        sha, cdate, author, parents, ref, subject, adate, body, rest = parts[:9]
        files = tuple(sorted({f.strip("\n") for f in rest.split("\x00") if f.strip("\n")}))
        commits.append(CommitInfo(
            sha=sha.strip(), ts=_to_utc(cdate), author=author, subject=subject,
            body=body.strip(), files=files, ref=ref,
            parents=tuple(p for p in parents.split() if p), authored=_to_utc(adate)))
    commits.reverse()
    if no_walk:
        commits = _with_branches(worktree, commits)
    return commits


_HEX = re.compile(r"^[0-9a-f]{7,64}$")
_NAME_REV_TAIL = re.compile(r"[~^][0-9~^]*$")


def _with_branches(worktree: Path, commits: list[CommitInfo]) -> list[CommitInfo]:
    """A commit named by its sha is "reached from" that sha in `git log --source`; give it
    the branch that contains it instead (`git name-rev` over local branches, one call)."""
    by_sha = [c for c in commits if c.ref == c.sha or (c.ref and c.sha.startswith(c.ref))]
    if not by_sha:
        return commits
    out = git.out(worktree, "name-rev", "--name-only", "--refs=refs/heads/*",
               *[c.sha for c in by_sha])
    names = out.splitlines()
    branch: dict[str, str] = {}
    for c, name in zip(by_sha, names, strict=False):
        name = _NAME_REV_TAIL.sub("", name.strip())
        if name and name != "undefined":
            branch[c.sha] = "refs/heads/" + name.removeprefix("heads/")
    named = {c.sha for c in by_sha}
    return [replace(c, ref=branch.get(c.sha, "")) if c.sha in named else c for c in commits]


def _to_utc(iso: str) -> str:
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(iso.strip())
    except ValueError:
        return iso
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rev_commits(worktree: Path, name: str, *, branch_limit: int = 500
                ) -> tuple[frozenset[str], str]:
    """What a name git understands stands for: a rev (`HEAD~2`, a tag, a sha) -> ({its
    commit}, "commit"); a local branch -> (its newest `branch_limit` commits, "branch");
    anything else (or an option-like name) -> (nothing, "commit")."""
    if name.startswith("-"):
        return frozenset(), "commit"
    one = git.run(worktree, "rev-parse", "--verify", "--quiet", "--end-of-options",
                  name + "^{commit}")
    if one.returncode != 0:
        return frozenset(), "commit"
    if git.run(worktree, "show-ref", "--verify", "--quiet", f"refs/heads/{name}").returncode == 0:
        many = git.run(worktree, "rev-list", f"--max-count={branch_limit}", "--end-of-options",
                       name)
        return frozenset(many.stdout.split()), "branch"
    return frozenset({one.stdout.strip()}), "commit"


def known_paths(worktree: Path) -> frozenset[str]:
    """Every path that exists at HEAD or ever existed in history: the file validator."""
    head = git.out(worktree, "ls-tree", "-r", "-z", "--name-only", "HEAD")
    # (`--exclude` applies to the `--all` after it: the ledger's op files are not the repo's)
    hist = git.out(worktree, "log", "--exclude=refs/notes/*", "--exclude=refs/looma/*", "--all",
                "--name-only", "-z", "--format=")
    paths = {p.strip("\n") for p in (head + "\x00" + hist).split("\x00")}
    paths.discard("")
    # Files created in the work tree but not yet committed are real too.
    untracked = git.out(worktree, "ls-files", "-z", "--others", "--exclude-standard", "--cached")
    paths.update(p for p in untracked.split("\x00") if p)
    return frozenset(paths)


def existing_objects(worktree: Path, candidates: list[str]) -> dict[str, str]:
    """Map each candidate (short or full sha) that names a commit here to its full sha."""
    if not candidates:
        return {}
    uniq = sorted(set(candidates))
    out = git.out(worktree, "cat-file", "--batch-check=%(objectname) %(objecttype)",
               input="".join(c + "\n" for c in uniq))
    result: dict[str, str] = {}
    for cand, line in zip(uniq, out.splitlines(), strict=False):
        parts = line.split()
        if len(parts) == 2 and parts[1] == "commit":
            result[cand] = parts[0]
    return result


def _log_patches(worktree: Path, shas: list[str]) -> bytes:
    log = git.run_bytes(worktree, "log", "-p", "--no-walk=unsorted", "--format=commit %H",
                        "--no-color", "--no-ext-diff", "--stdin",
                        input=("\n".join(shas) + "\n").encode())
    return log.stdout if log.returncode == 0 else b""


def _patch_ids_of(worktree: Path, patches: bytes) -> dict[str, str]:
    if not patches:
        return {}
    pid = git.run_bytes(worktree, "patch-id", "--stable", input=patches)
    result: dict[str, str] = {}
    for line in pid.stdout.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2:
            result[parts[1]] = parts[0]
    return result


def patch_ids(worktree: Path, shas: list[str]) -> dict[str, str]:
    """`git patch-id --stable` for each commit (merge commits and empty ones get none)."""
    if not shas:
        return {}
    return _patch_ids_of(worktree, _log_patches(worktree, shas))


@dataclass(frozen=True)
class PatchFacts:
    """What relink compares: the stable patch-id and the distinctive lines a commit adds."""

    patch_id: str | None
    added: frozenset[str]


# An added line counts as evidence only if it says something: braces, `pass`, blank lines
# and the like appear in every patch.
MIN_ADDED_LINE = 6


def patch_facts(worktree: Path, shas: list[str]) -> dict[str, PatchFacts]:
    """Patch-id and significant added lines (stripped) of each commit, from one `git log -p`."""
    if not shas:
        return {}
    patches = _log_patches(worktree, shas)
    pids = _patch_ids_of(worktree, patches)
    added: dict[str, set[str]] = {}
    cur: set[str] | None = None
    for raw in patches.decode("utf-8", "replace").split("\n"):
        if raw.startswith("commit ") and len(raw) in (47, 71):
            cur = added.setdefault(raw[7:], set())
        elif cur is not None and raw.startswith("+") and not raw.startswith("+++ "):
            line = raw[1:].strip()
            if len(line) >= MIN_ADDED_LINE and any(ch.isalnum() for ch in line):
                cur.add(line)
    return {sha: PatchFacts(pids.get(sha), frozenset(added.get(sha, ()))) for sha in shas}


def added_by_file(worktree: Path, shas: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(file, added line) of each commit, from one `git log -p` (merges add nothing; lines are
    raw, without the leading `+`; the caller decides which say enough to count)."""
    if not shas:
        return {}
    out: dict[str, list[tuple[str, str]]] = {sha: [] for sha in shas}
    cur: list[tuple[str, str]] | None = None
    path = ""
    for raw in _log_patches(worktree, shas).decode("utf-8", "replace").split("\n"):
        if raw.startswith("commit ") and len(raw) in (47, 71):
            cur = out.setdefault(raw[7:], [])
            path = ""
        elif raw.startswith("+++ "):
            name = raw[4:]
            path = name[2:] if name.startswith("b/") else ""
        elif cur is not None and path and raw.startswith("+"):
            cur.append((path, raw[1:]))
    return out


def changed_by_file(worktree: Path, shas: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """(file, line, how) of what each commit changes, from one `git log -p`: how is "+" for a
    line added, "-" for a line removed from a file that stays, "gone" (line "") once for a
    file the commit deletes (its lines are not listed). Merges change nothing here; lines are
    raw, without the leading sign."""
    if not shas:
        return {}
    out: dict[str, list[tuple[str, str, str]]] = {sha: [] for sha in shas}
    cur: list[tuple[str, str, str]] | None = None
    path = old = ""
    for raw in _log_patches(worktree, shas).decode("utf-8", "replace").split("\n"):
        if raw.startswith("commit ") and len(raw) in (47, 71):
            cur = out.setdefault(raw[7:], [])
            path = old = ""
        elif raw.startswith("diff --git "):
            path = old = ""
        elif raw.startswith("--- "):
            name = raw[4:]
            old = name[2:] if name.startswith("a/") else ""
        elif raw.startswith("+++ "):
            name = raw[4:]
            path = name[2:] if name.startswith("b/") else ""
            if not path and old and cur is not None:
                cur.append((old, "", "gone"))
        elif cur is not None and path and raw.startswith("+"):
            cur.append((path, raw[1:], "+"))
        elif cur is not None and path and raw.startswith("-"):
            cur.append((path, raw[1:], "-"))
    return out


def history_refs(worktree: Path) -> tuple[str, ...]:
    """What "still in history" means: branches, tags, remote-tracking branches, HEAD."""
    refs: tuple[str, ...] = ("--branches", "--tags", "--remotes")
    if git.out(worktree, "rev-parse", "-q", "--verify", "HEAD^{commit}").strip():
        refs += ("HEAD",)
    return refs


def unreachable(worktree: Path, shas: list[str]) -> set[str]:
    """The commits among `shas` that no branch, tag, remote-tracking ref or HEAD reaches;
    shas git does not have at all are unreachable too."""
    if not shas:
        return set()
    present = set(existing_objects(worktree, shas).values())
    out = set(shas) - present
    if not present:
        return out
    # `--not` before `--stdin` leaves the stdin commits positive: git walks only the part of
    # history no ref reaches, however long the reachable history is.
    listed = git.out(worktree, "rev-list", "--not", *history_refs(worktree), "--stdin",
                  input="".join(s + "\n" for s in sorted(present)))
    orphans = set(listed.split()) & present
    return out | orphans


def head_state(worktree: Path) -> dict[str, object]:
    """Branch, HEAD and dirty files for a resume bundle (two git calls)."""
    status = git.out(worktree, "status", "--porcelain=v2", "--branch", "-z",
                  "--untracked-files=normal")
    branch: str | None = None
    born = False
    dirty: set[str] = set()
    entries = status.split("\x00")
    i = 0
    while i < len(entries):
        e = entries[i]
        i += 1
        if e.startswith("# branch.head "):
            name = e[len("# branch.head "):]
            branch = None if name == "(detached)" else name
        elif e.startswith("# branch.oid "):
            born = e[len("# branch.oid "):] != "(initial)"
        elif e.startswith("1 "):
            dirty.add(e.split(" ", 8)[-1])
        elif e.startswith("2 "):
            dirty.add(e.split(" ", 9)[-1])
            i += 1  # the rename's original path
        elif e.startswith("u "):
            dirty.add(e.split(" ", 10)[-1])
        elif e.startswith("? "):
            dirty.add(e[2:])
    head = git.out(worktree, "rev-parse", "--short", "HEAD").strip() or None if born else None
    return {"branch": branch, "head": head, "dirty": sorted(dirty)}
