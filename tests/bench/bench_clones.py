"""Two clones of one team history, each with its own agents' sessions, sharing the ledger:
do they converge after syncing, and then write nothing more? (issue 13, "clones fight").

Run: .venv/bin/python -m tests.bench.bench_clones [--rounds 3] [--keep DIR]

The teamwork benchmark (fixtures/teamwork: 58 commits, 55 sessions from five agents) is built
twice, at two paths (its commit shas do not depend on the path; its sessions name the path of
the clone they were made in). Clone A keeps the Claude Code, Codex and Cursor sessions, clone
B the Gemini CLI and OpenCode ones: disjoint, as when teammates use different agents, with
both working on the same efforts. A bare repository is their shared remote (`team`); each
clone runs what a user runs (`looma init`, `looma share enable team`, `looma ingest`,
`looma backfill`), then `--rounds` times, in turn, `looma sync` and `looma reprocess`; then a
last `sync` on both and a `reprocess --json` on both, whose `ops_written` must be 0, the
ledger heads must stay equal, and both clones must show the same shared WorkItems.

Every step is a fresh `python -m looma_git` process; CPU is user + system of the children.
Prints a table and, last, the BENCH-JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.report import emit, metric  # noqa: E402

# Which agents' transcripts each clone keeps (paths under the fake HOME of the other are removed).
AGENT_DIRS = {"claude-code": [".claude"], "codex": [".codex"],
              "cursor": [".cursor", ".config/Cursor"], "gemini-cli": [".gemini"],
              "opencode": [".local/share/opencode"]}
SPLIT = {"a": ("claude-code", "codex", "cursor"), "b": ("gemini-cli", "opencode")}


def _cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-2000:]}")
    return proc.stdout


class Clone:
    """One teammate: a built teamwork copy with only its own agents' sessions."""

    def __init__(self, name: str, base: Path, remote: Path) -> None:
        from fixtures.teamwork.generate import build_teamwork, env_for

        self.name = name
        tw = build_teamwork(base / name)
        self.repo = Path(tw.repo)
        self.home = Path(tw.home)
        for agent, dirs in AGENT_DIRS.items():
            if agent not in SPLIT[name]:
                for d in dirs:
                    shutil.rmtree(self.home / d, ignore_errors=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "LOOMA_"))}
        self.env.update(env_for(tw), LOOMA_NO_PROGRESS="1", GIT_CONFIG_NOSYSTEM="1")
        (self.home / ".gitconfig").write_text(
            f"[user]\n\tname = {name}\n\temail = {name}@example.com\n"
            "[protocol \"file\"]\n\tallow = always\n")
        if not remote.exists():
            _run(["git", "clone", "-q", "--bare", str(self.repo), str(remote)], base, self.env)
        _run(["git", "remote", "add", "team", str(remote)], self.repo, self.env)
        _run(["git", "fetch", "-q", "team"], self.repo, self.env)
        self.cpu: dict[str, float] = {}

    def head(self) -> str:
        return _run(["git", "rev-parse", "HEAD"], self.repo, self.env).strip()

    def ledger(self) -> str:
        return _run(["git", "rev-parse", "-q", "--verify", "refs/looma/ledger"], self.repo,
                    self.env).strip()

    def looma(self, *args: str) -> str:
        c0 = _cpu()
        out = _run([sys.executable, "-m", "looma_git", *args], self.repo, self.env)
        self.cpu[args[0]] = round(self.cpu.get(args[0], 0.0) + _cpu() - c0, 2)
        return out

    def shared(self) -> list[dict[str, Any]]:
        items = json.loads(self.looma("work", "--json"))["workitems"]
        keep = ("id", "title", "kind", "state", "confidence", "commits", "sessions")
        return sorted(({k: w.get(k) for k in keep} for w in items if w.get("promoted", True)),
                      key=lambda w: str(w["id"]))


def measure(base: Path, rounds: int) -> dict[str, Any]:
    remote = base / "team.git"
    a = Clone("a", base, remote)
    b = Clone("b", base, remote)
    assert a.head() == b.head(), "the two builds of the teamwork history differ"
    w0 = time.perf_counter()
    for c in (a, b):
        c.looma("init")
        c.looma("share", "enable", "team")
        c.looma("ingest")
        c.looma("backfill")
    per_round: list[dict[str, int]] = []
    for _ in range(rounds):
        row: dict[str, int] = {}
        for c in (a, b):
            c.looma("sync")
            row[c.name] = json.loads(c.looma("reprocess", "--json"))["ops_written"]
        per_round.append(row)
    for c in (a, b):
        c.looma("sync")
    heads = (a.ledger(), b.ledger())
    final = {c.name: json.loads(c.looma("reprocess", "--json"))["ops_written"] for c in (a, b)}
    after = (a.ledger(), b.ledger())
    wa, wb = a.shared(), b.shared()
    truth = json.loads((a.repo.parent / "truth.json").read_text())
    diff = [x["id"] for x in wa if x not in wb] + [x["id"] for x in wb if x not in wa]
    return {"rounds": per_round, "final_ops": final, "heads_equal": heads[0] == heads[1],
            "heads_unchanged": heads == after, "workitems": (len(wa), len(wb)),
            "workitems_differ": sorted(set(map(str, diff))),
            "sessions": {c.name: sorted({s["id"] for w in ws for s in (w["sessions"] or [])})
                         for c, ws in ((a, wa), (b, wb))},
            "commits_linked": len({x["sha"] if isinstance(x, dict) else x
                                   for w in wa for x in (w["commits"] or [])}),
            "efforts": efforts_of(wa, truth),
            "cpu": {"a": a.cpu, "b": b.cpu}, "wall_s": round(time.perf_counter() - w0, 1)}


def efforts_of(items: list[dict[str, Any]], truth: dict[str, Any]) -> dict[str, Any]:
    """Each shared WorkItem's effort (the one most of its one-effort sessions carry), the
    WorkItems each effort is spread over, and the WorkItems whose sessions mix efforts."""
    labels = {s["id"]: s["efforts"] for s in truth["sessions"]}
    spread: dict[str, list[str]] = {e["key"]: [] for e in truth["efforts"]}
    mixed: list[str] = []
    for w in items:
        votes: dict[str, int] = {}
        for s in w["sessions"] or []:
            efforts = labels.get(s["id"], [])
            if len(efforts) == 1:  # a session that switches topic votes for none
                votes[efforts[0]] = votes.get(efforts[0], 0) + 1
        if not votes:
            continue
        top = max(sorted(votes), key=lambda e: votes[e])
        spread.setdefault(top, []).append(str(w["id"]))
        if len(votes) > 1:
            mixed.append(str(w["id"]))
    return {"spread": spread, "mixed": mixed,
            "fragments": sum(max(0, len(v) - 1) for v in spread.values())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="sync + reprocess rounds (default 3)")
    ap.add_argument("--keep", type=Path, default=None, help="build in DIR and keep it")
    args = ap.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="looma-bench-clones-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        m = measure(base.resolve(), args.rounds)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    both = set(m["sessions"]["a"]) & set(m["sessions"]["b"])
    print(f"clone a ({', '.join(SPLIT['a'])}) and clone b ({', '.join(SPLIT['b'])}), "
          f"{args.rounds} rounds of sync + reprocess each, {m['wall_s']} s wall")
    print("| round | ops written by a's reprocess | by b's |")
    print("|---|---|---|")
    for i, r in enumerate(m["rounds"], 1):
        print(f"| {i} | {r['a']} | {r['b']} |")
    print(f"| after the last sync | {m['final_ops']['a']} | {m['final_ops']['b']} |")
    print(f"ledger heads equal after the last sync: {m['heads_equal']}; unchanged by the last "
          f"reprocess: {m['heads_unchanged']}")
    print(f"shared WorkItems: a {m['workitems'][0]}, b {m['workitems'][1]}; differing: "
          f"{m['workitems_differ'] or 'none'}; commits linked {m['commits_linked']}")
    print(f"sessions on the shared WorkItems: a sees {len(m['sessions']['a'])}, b sees "
          f"{len(m['sessions']['b'])}, {len(both)} in both views")
    ef = m["efforts"]
    print(f"efforts spread over more than one shared WorkItem: "
          f"{ {e: len(v) for e, v in ef['spread'].items() if len(v) > 1} or 'none'} "
          f"({ef['fragments']} extra WorkItems); WorkItems mixing efforts: {ef['mixed'] or 'none'}")
    print(f"CPU-s per command: a {m['cpu']['a']}; b {m['cpu']['b']}")
    ops = m["final_ops"]["a"] + m["final_ops"]["b"]
    emit("clones", [metric("ops written after convergence", ops, "ops", 0),
                    metric("shared WorkItems differing", len(m["workitems_differ"]), "items", 0),
                    metric("extra WorkItems of one effort", ef["fragments"], "items", 0),
                    metric("WorkItems mixing efforts", len(ef["mixed"]), "items", 0)])
    return 0 if ops == 0 and not m["workitems_differ"] and m["heads_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
