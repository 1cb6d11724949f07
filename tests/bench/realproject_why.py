"""Diagnostic (not a test): why windows of the real-project benchmark resolve where they do.

`python -m tests.bench.realproject_why DIR` on a benchmark kept with
`python -m tests.bench.quality_realproject --keep DIR`: for every window the refinery stored
(`refine_signals`), in resolution order, its edited/read file counts, branch and top terms, then
its resolution score (`pipeline.resolve.score`, with its parts) against an *oracle* cluster per
effort built from that effort's earlier windows, best first. A window whose best oracle score is
another effort's, above `resolve.ASSIGN_AT`, is merged by the score itself; one whose own effort
scores below `ASSIGN_AT` is fragmented by it. Reads looma internals, so it may need updating when
they change; the benchmark's numbers never depend on it."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any


def _rarity(R: Any, clusters: dict[str, Any], windows: list[Any]) -> Any:
    """resolve.Rarity over the oracle clusters (for the resolve.score versions that take one)."""
    if not hasattr(R, "Rarity"):
        return None
    file_df: dict[str, set[str]] = {}
    read_df: dict[str, set[str]] = {}
    for cid, c in clusters.items():
        for f in c.files:
            file_df.setdefault(f, set()).add(cid)
        for f in c.read:
            read_df.setdefault(f, set()).add(cid)
    term_df: Counter[str] = Counter(t for w in windows for t, _ in w.terms)
    try:
        return R.Rarity(len(clusters), file_df, len(windows), term_df, read_df)
    except TypeError:
        return R.Rarity(len(clusters), file_df, {t: set() for t in term_df})


def main(argv: list[str] | None = None) -> int:
    from looma_git.pipeline import resolve as R
    from looma_git.pipeline.signals import WorkSignal

    args = argv if argv is not None else sys.argv[1:]
    base = Path(args[0])
    truth = json.loads((base / "truth.json").read_text(encoding="utf-8"))
    effort_of = {s["id"]: s["key"] for s in truth["sessions"]}
    segs: dict[str, list[tuple[str, str]]] = {}  # session id -> [(start, effort)]
    for g in truth["segments"]:
        segs.setdefault(g["id"], []).append((g["start"], g["effort"]))

    def effort(sid: str, start: str) -> str:
        """The effort of the truth segment the window starts in (sessions of several efforts:
        the hold-out's topic switch), else the session's key."""
        here = [e for t, e in sorted(segs.get(sid, [])) if t[:19] <= start[:19]]
        return here[-1] if here else effort_of.get(sid, "?")

    conn = sqlite3.connect(f"file:{base / 'repo' / '.git' / 'looma' / 'store.db'}?mode=ro",
                           uri=True)
    wins = []
    for _key, cluster, raw in conn.execute("SELECT key, cluster, json FROM refine_signals"):
        w = WorkSignal.from_json(json.loads(raw)["signal"])
        sid = w.session_id.split("/")[0]
        wins.append((w, effort(sid, w.start_ts), cluster))
    wins.sort(key=lambda x: R.window_order(x[0]))
    print(f"ASSIGN_AT {R.ASSIGN_AT}  LOW {R.LOW}")
    for n, (w, effort, cluster) in enumerate(wins):
        print(f"\n{w.key}  effort {effort}  -> {cluster}  branch {w.branch}  edited "
              f"{sorted(w.edited)}  read {len(w.read)}  terms {[t for t, _ in w.terms[:8]]}")
        rows = []
        oracle: dict[str, Any] = {}
        for other in sorted({e for _, e, _ in wins if e}):
            c = R.Cluster(id=other)
            for x, e, _ in wins[:n]:
                if e == other:
                    c.add(x)
            if c.windows:
                oracle[other] = c
        idf = _rarity(R, oracle, [x for x, _, _ in wins[:n]])
        for other, c in oracle.items():
            try:
                total, parts = R.score(w, c)
            except TypeError:  # a resolve.score that takes the rarity of files and terms
                total, parts = R.score(w, c, idf)
            rows.append((total, other, parts))
        for total, other, parts in sorted(rows, key=lambda r: -r[0])[:3]:
            mark = "*" if other == effort else " "
            print(f"  {mark} {total:.2f} {other:24} " + " ".join(
                f"{k} {v:.2f}" for k, v in parts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
