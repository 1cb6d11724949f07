"""Each WorkItem's kind against its effort's label, with the evidence votes behind it, read
from a benchmark directory left by `--keep` (teamwork, realproject, hold-outs).

`python -m tests.bench.kinds_report DIR [--votes] [--evidence]`: DIR holds `repo/`, `home/` and
`truth.json` (e.g. `python -m tests.bench.quality_teamwork --keep DIR`). The kinds are the
ledger fold's, derived afresh in this process by this checkout's code, so a change to
`pipeline/kinds.py` shows here without rebuilding the benchmark. On a hold-out, measure only.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def report(base: Path, votes: bool = False, evidence: bool = False
           ) -> tuple[int, int, list[str]]:
    """(kinds right, WorkItems with a labelled effort, printable lines)."""
    sys.path.insert(0, str(ROOT))
    from fixtures.scenario.generate import home_env
    from looma_git.api.ledger import load_state
    from looma_git.gitrepo import find_repo
    from looma_git.pipeline.kinds import kind_scores
    from looma_git.pipeline.text import is_chore, strong_link
    from tests.bench import quality_teamwork as qt

    truth: dict[str, Any] = json.loads((base / "truth.json").read_text(encoding="utf-8"))
    os.environ.update(home_env(base / "home"))
    bench = SimpleNamespace(repo=str(base / "repo"), truth=truth)
    key_of = qt.effort_of_workitems(qt.segment_predictions(bench))
    label = {e["key"]: e["kind"] for e in truth["efforts"]}
    state = load_state(find_repo(base / "repo"))
    right = total = 0
    lines = []
    for wid, wi in sorted(state.workitems.items()):
        if wi.merged_into or wi.split_into or wid not in state.observations:
            continue
        effort = key_of.get(wid)
        want = label.get(effort) if effort else None
        if want:
            total += 1
            right += wi.kind == want
        mark = "   " if want is None else ("ok " if wi.kind == want else "BAD")
        lines.append(f"{mark} {wid} {effort or '-':24} {wi.kind:13} label={want} "
                     f"| {wi.title[:60]}")
        if votes:
            obs = sorted(state.observations[wid].values(),
                         key=lambda o: (o["first"] or "~", o["agent"], o["id"]))
            links = sorted((ln for ln in state.links.values() if ln.workitem == wid),
                           key=lambda ln: (ln.ts or "~", ln.sha))
            real = [ln for ln in links if ln.subject and not is_chore(ln.subject, "", ln.files)]
            real.sort(key=lambda ln: not strong_link(ln.why, ln.user))
            score, tie, order = kind_scores(
                prompts=[o["prompt"] for o in obs if o["prompt"]],
                subjects=[ln.subject for ln in real], branches=[o["branch"] for o in obs],
                files=[*(f for o in obs for f in o["files"]),
                       *(f for ln in real for f in ln.files)])
            lines.append("      votes " + ", ".join(f"{k} {v:g}" for k, v in score.items() if v)
                         + "; later commits " + ", ".join(f"{k} {v}" for k, v in tie.items()
                                                          if v) + f"; ties: {order[0]}")
            if evidence:
                lines.extend(f"      prompt [{o['branch']}] {o['prompt'][:110]!r}"
                             for o in obs if o["prompt"])
                lines.extend(f"      commit {ln.subject[:110]!r}" for ln in real)
    lines.append(f"kinds right: {right}/{total}")
    return right, total, lines


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    _, _, lines = report(Path(args[0]), votes="--votes" in args or "--evidence" in args,
                         evidence="--evidence" in args)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
