"""After a push: wait for the `git push` that ran the pre-push hook, then see what landed."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from looma_git.store import git

ZERO = frozenset({"0" * 40, "0" * 64})


def git_ancestor(pid: int, *, levels: int = 6) -> int:
    """The nearest `git` process at or above `pid` (the shim may run under pre-commit's
    Python or a husky stub); `pid` itself when /proc cannot tell."""
    cur = pid
    for _ in range(levels):
        try:
            stat = Path(f"/proc/{cur}/stat").read_text()
        except OSError:
            return pid
        comm = stat[stat.find("(") + 1:stat.rfind(")")]
        if comm == "git":
            return cur
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) < 2 or not fields[1].isdigit() or int(fields[1]) <= 1:
            return pid
        cur = int(fields[1])
    return pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_exit(pid: int, timeout_s: float) -> bool:
    """Poll until `pid` is gone; False when it outlived `timeout_s`."""
    end = time.monotonic() + timeout_s
    while _alive(pid):
        if time.monotonic() >= end:
            return False
        time.sleep(0.05)
    return True


def refused(cwd: Path, remote: str, pushed: Sequence[tuple[str, str]]) -> list[str]:
    """The remote refs among `pushed` ((local sha, remote ref) pairs) that the remote does not
    hold at the pushed sha after the push: the push was refused or failed. Deletions are not
    checked. One `git ls-remote`; when it fails, every ref counts as refused."""
    want = {ref: sha for sha, ref in pushed if sha not in ZERO}
    if not want:
        return []
    proc = git.run(cwd, "ls-remote", remote, *sorted(want), timeout=120,
                   stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        return sorted(want)
    have = {}
    for line in proc.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 2:
            have[parts[1].strip()] = parts[0].strip()
    return sorted(ref for ref, sha in want.items() if have.get(ref) != sha)
