"""What a shell command and its output say about git: the branch it left the worktree on, the
commits it made; pure text rules shared by the adapters (with output) and the pipeline (without).

Agents that record no branch (Gemini CLI, OpenCode) still run git through their shell tool, and
git says where it is: `[feat/x 1a2b3c4] subject` after a commit, `On branch feat/x`, `Switched to
a new branch 'feat/x'`, `branch 'feat/x' set up to track 'origin/feat/x'`, `* [new branch] feat/x
-> feat/x`. Only commands that move or report the worktree count: `git log main..feat/x` or
`git diff origin/main` name branches without being on them, `git branch feat/y` creates one
without switching, and a later `git checkout main` moves back (the last fact wins).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

TRUNK_NAMES = frozenset({"main", "master", "trunk", "develop"})

_SEGMENTS = re.compile(r"&&|\|\||;|\||\n")
# `git [-C dir] [-c k=v] [--no-pager] <subcommand> <args>` inside one segment of a command line.
_GIT = re.compile(r"(?:^|[\s(])git((?:\s+(?:-C|-c)\s+\S+|\s+--no-pager|\s+--git-dir=\S+"
                  r"|\s+--work-tree=\S+)*)\s+([a-z][a-z-]*)\b(.*)$", re.S)
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/\-]{0,199}$")
_TAGLIKE = re.compile(r"^v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?$")
_SHA = r"[0-9a-f]{7,40}"

# Output lines, each tied to the subcommand whose output it is (so `cat notes.txt` printing
# "On branch x" says nothing).
_OUT_COMMIT = re.compile(rf"(?m)^\[(detached HEAD|[^\s\]]+)(?: \(root-commit\))? ({_SHA})\] ")
_OUT_STATUS = re.compile(r"(?m)^On branch (\S+)\s*$")
_OUT_SWITCH = re.compile(r"(?m)^(?:Switched to (?:a new |and reset )?branch|Already on) '([^']+)'")
_OUT_TRACK = re.compile(r"(?mi)^branch '([^']+)' set up to track\b")
_OUT_PUSH = re.compile(rf"(?m)^\s*[*+ !=-]?\s*(?:\[new branch\]|{_SHA}\.\.\.?({_SHA}))\s+"
                       r"(\S+)\s+->\s+(\S+)")
_OUT_SHOW = re.compile(r"^\s*([^\s]+)\s*$")


@dataclass(frozen=True)
class GitShell:
    """The git facts of one shell command: the branches it was on, in order (`checkout -b x
    && git commit && git checkout main` was on x, then main), the last of which it left the
    worktree on, and the (possibly abbreviated) shas of commits it made or pushed."""

    path: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()

    @property
    def branch(self) -> str | None:
        """The branch the command left the worktree on (None when it does not tell)."""
        return self.path[-1] if self.path else None


def _name(raw: str | None) -> str | None:
    if not raw:
        return None
    name = raw.strip().strip("'\"")
    if name.startswith("refs/heads/"):
        name = name[len("refs/heads/"):]
    if (not _NAME.match(name) or ".." in name or name.endswith((".lock", "/", "."))
            or name == "HEAD"):
        return None
    return name


def _words(args: str) -> list[str]:
    try:
        return shlex.split(args, comments=False)
    except ValueError:
        return args.split()


def _positional(words: list[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w == "--":
            break
        elif w.startswith("-"):
            skip = w in with_value
        elif w.startswith(("<", "$", ">")) or w in ("2>&1",):
            break  # a redirection or a placeholder ends the argument list
        else:
            out.append(w)
    return out


def _command_branch(sub: str, words: list[str]) -> tuple[str | None, bool]:
    """The branch a git subcommand moves to by its arguments alone, and whether a name it
    gives still needs git's output to confirm it (`git checkout x` may restore a file x)."""
    if sub in ("checkout", "switch"):
        for flag in (("-b", "-B", "--orphan") if sub == "checkout"
                     else ("-c", "-C", "--create", "--force-create", "--orphan")):
            if flag in words:
                i = words.index(flag)
                return (_name(words[i + 1]) if i + 1 < len(words) else None), False
        if "--detach" in words or (sub == "switch" and "-d" in words):
            return None, False
        if "--" in words:
            return None, False  # `git checkout -- file` / `git checkout main -- file`
        pos = _positional(words, frozenset({"-t", "--track", "--conflict"}))
        if len(pos) != 1:
            return None, False
        name = _name(pos[0])
        return name, not (sub == "switch" or name in TRUNK_NAMES)
    if sub == "push":
        if any(w in ("-d", "--delete", "--tags", "--all", "--mirror", "--prune") for w in words):
            return None, False
        pos = _positional(words, frozenset({"-o", "--push-option", "--repo", "--receive-pack",
                                            "--exec"}))
        if len(pos) < 2:
            return None, False
        src, _, dst = pos[1].lstrip("+").partition(":")
        if src in ("", "HEAD") or src.startswith("refs/tags/") or _TAGLIKE.match(src):
            return (_name(dst) if src == "HEAD" and dst else None), False
        return _name(src), False
    return None, False


def _output_facts(sub: str, output: str) -> tuple[list[str | None], list[str]]:
    """Branches (in order) and shas one subcommand's output reports."""
    branches: list[str | None] = []
    shas: list[str] = []
    if sub == "commit":
        for m in _OUT_COMMIT.finditer(output):
            branches.append(None if m.group(1) == "detached HEAD" else _name(m.group(1)))
            shas.append(m.group(2))
    elif sub == "status":
        branches.extend(_name(m.group(1)) for m in _OUT_STATUS.finditer(output))
    elif sub in ("checkout", "switch"):
        branches.extend(_name(m.group(1)) for m in _OUT_SWITCH.finditer(output))
    elif sub == "push":
        for m in _OUT_PUSH.finditer(output):
            src, dst = m.group(2), m.group(3)
            branches.append(_name(dst) if src == "HEAD" else _name(src))
            if m.group(1):
                shas.append(m.group(1))
        branches.extend(_name(m.group(1)) for m in _OUT_TRACK.finditer(output))
    return branches, shas


def _bounded(output: str) -> str:
    # Commit summaries come first, push reports last; the middle of a long output is neither.
    return output if len(output) <= 40_000 else output[:20_000] + "\n" + output[-20_000:]


def shell_git(command: str | None, output: str | None = None) -> GitShell:
    """The git facts of one shell call from its command line and, when the agent recorded it,
    its output. Without output only what the arguments say counts (`checkout -b x`,
    `switch x`, `push origin x`, `checkout main`)."""
    if not command or "git" not in command:
        return GitShell()
    out = _bounded(output) if output else ""
    path: list[str] = []
    commits: list[str] = []
    used: dict[str, int] = {}
    for segment in _SEGMENTS.split(command):
        m = _GIT.search(segment)
        if not m:
            continue
        sub, words = m.group(2), _words(m.group(3))
        named, needs_output = _command_branch(sub, words)
        reported: list[str | None] = []
        if out and sub in ("commit", "status", "checkout", "switch", "push"):
            reported, shas = _output_facts(sub, out)
            n = used.get(sub, 0)
            commits.extend(s for s in shas[n:n + 1] if s not in commits)
            reported = reported[n:n + 1] if sub != "push" else reported
            used[sub] = n + 1
        if sub in ("branch", "rev-parse") and out and (
                "--show-current" in words or ("--abbrev-ref" in words and "HEAD" in words)):
            line = _OUT_SHOW.match(out.strip().split("\n", 1)[0] if out.strip() else "")
            reported = [_name(line.group(1))] if line else []
        if named and needs_output:
            named = named if named in reported else None
        now = named or (reported[-1] if reported else None)
        if now and (not path or path[-1] != now):
            path.append(now)
    return GitShell(path=tuple(path), commits=tuple(commits))


# The `NormalizedEvent.extra` keys an adapter stores a message's git facts under (space-joined:
# neither a branch name nor a sha holds a space); pipeline/inputs.py reads them back.
SHELL_BRANCHES = "shell_branches"
SHELL_COMMITS = "shell_commits"


def joined(facts: list[GitShell]) -> GitShell:
    """The facts of several shell calls, in the order they ran."""
    path: list[str] = []
    commits: list[str] = []
    for f in facts:
        for b in f.path:
            if not path or path[-1] != b:
                path.append(b)
        commits.extend(s for s in f.commits if s not in commits)
    return GitShell(path=tuple(path), commits=tuple(commits))


def extra_of(facts: GitShell) -> tuple[tuple[str, str], ...]:
    """`extra` entries for a message's git facts (none when its shell said nothing)."""
    out: list[tuple[str, str]] = []
    if facts.path:
        out.append((SHELL_BRANCHES, " ".join(facts.path)))
    if facts.commits:
        out.append((SHELL_COMMITS, " ".join(facts.commits)))
    return tuple(out)
