"""Benchmark: `looma mcp` start-up as a client meets it: spawn -> initialize answered, -> the
tools listed, -> a first tool call answered; prints only.

Run: .venv/bin/python tests/bench/bench_mcp.py [--runs 7]

Spawns the real command (`python -m looma_git -C REPO mcp`) over pipes in a temp repository
with a small ledger, speaks JSON-RPC lines to it like a client, and times each answer from
the spawn. Also times `python -c pass` and `python -c "import mcp.server"` (the SDK import the
server no longer needs) in the same run, so the ratios hold on a loaded machine too. The last
line is `BENCH-JSON {...}` for run_all.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.report import emit, metric  # noqa: E402


def _repo(root: Path) -> Path:
    from looma_git.api import ledger
    from looma_git.gitrepo import find_repo
    from looma_git.ledger.ops import OpDraft

    repo = root / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "a.py"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
    paths = find_repo(repo)
    ledger.init_repo(paths)
    ledger.append(paths, [OpDraft("workitem.create", {"type": "workitem"}, {
        "title": f"Effort {i}", "kind": "feature", "status": "active", "confidence": 0.6,
        "band": "medium", "files": ["a.py"], "summary": "work"}) for i in range(20)],
        actor="system")
    return repo


def _send(proc: subprocess.Popen[str], msg: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()


def _recv(proc: subprocess.Popen[str], mid: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server closed stdout")
        msg = json.loads(line)
        if msg.get("id") == mid:
            return msg


def one_start(repo: Path) -> tuple[float, float, float]:
    """Seconds from spawn to: initialize answered, tools listed, first list_work answered."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "looma_git", "-C", str(repo), "mcp"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        _recv(proc, 1)
        t_init = time.perf_counter() - t0
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        _recv(proc, 2)
        t_list = time.perf_counter() - t0
        _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "list_work", "arguments": {}}})
        r = _recv(proc, 3)
        assert not r["result"].get("isError"), r
        t_call = time.perf_counter() - t0
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    return t_init, t_list, t_call


def _time(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = _repo(Path(tmp))
        runs = [one_start(repo) for _ in range(args.runs)]
        bare = statistics.median(_time([sys.executable, "-c", "pass"]) for _ in range(args.runs))
        sdk = statistics.median(_time([sys.executable, "-c", "import mcp.server"])
                                for _ in range(max(1, args.runs // 2)))
    init, listed, called = (statistics.median(r[i] for r in runs) for i in range(3))
    print(f"mcp start-up, median of {args.runs} cold processes:")
    print(f"  initialize answered   {init * 1000:7.0f} ms  ({init / bare:.1f}x python -c pass)")
    print(f"  tools/list answered   {listed * 1000:7.0f} ms")
    print(f"  first tool call       {called * 1000:7.0f} ms")
    print(f"  python -c pass        {bare * 1000:7.0f} ms")
    print(f"  import mcp.server     {sdk * 1000:7.0f} ms  (the SDK import the server avoids)")
    emit("mcp", [
        metric("mcp initialize (cold)", init, "s", target=1.0),
        metric("mcp tools/list (cold)", listed, "s"),
        metric("mcp first tool call (cold)", called, "s"),
        metric("python -c pass", bare, "s"),
        metric("SDK import (avoided)", sdk, "s"),
    ])


if __name__ == "__main__":
    main()
