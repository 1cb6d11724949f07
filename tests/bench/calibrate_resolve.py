"""Calibrate resolution (pipeline/resolve.py weights and thresholds) on the labelled benchmarks;
prints only.

Run: .venv/bin/python -m tests.bench.calibrate_resolve [--keep DIR] [--grid NAME=v1,v2 ...]

Builds the teamwork benchmark with two seeds (13, the one the suite measures, and 7: the same
efforts with other noise, ids and times) and the real-project benchmark, runs `looma init` and
`looma ingest` on each (reusing DIR/<name> when --keep names a directory already built), then,
in-process, segments every stored session and resolves the windows for each setting of the grid,
scoring segment clustering F1 exactly as the quality benchmark does (tests/bench/
quality_teamwork.py). Prints every setting's F1 per benchmark and their minimum, best first:
choose values from the middle of the plateau that reaches the best minimum, not from one point.
The default grid varies each weight and threshold alone around the current values.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from looma_git.pipeline import evidence as E  # noqa: E402
from looma_git.pipeline import resolve as R  # noqa: E402
from looma_git.pipeline import signals as S  # noqa: E402

AROUND = {  # each varied alone, the others at their current value
    "W_FILES": (0.3, 0.45, 0.6), "W_TEXT": (1.25, 1.5, 1.75), "W_LINK": (0.15, 0.3, 0.5),
    "W_SESSION": (0.15, 0.3, 0.5), "W_RO_FILES": (0.0, 0.15, 0.3),
    "W_OTHER_BRANCH": (0.6, 1.0, 1.5), "W_NEW_BRANCH": (0.15, 0.25, 0.4),
    "W_TRUNK": (0.1, 0.25, 0.5),
    "W_READS": (0.0, 0.1, 0.2), "SIBLING": (0.0, 0.5, 1.0), "ASSIGN_AT": (0.35, 0.4, 0.45),
    "READONLY_ASSIGN_AT": (0.2, 0.25, 0.3), "MARGIN": (0.0, 0.05, 0.1),
    "IDF_PRIOR": (3, 10, 30), "SHARED_FILE": (0.05, 0.15, 0.5),
    "S_USER_WEIGHT": (1, 2, 4), "S_PATH_WEIGHT": (1, 3, 5),
}


class Bench:
    """One built benchmark: its truth and what `looma ingest` stored, loaded once."""

    def __init__(self, name: str, base: Path) -> None:
        from looma_git.pipeline.inputs import load_sessions
        from looma_git.pipeline.signals import sha_candidates
        from looma_git.store import gitfacts

        self.name = name
        self.truth = json.loads((base / "truth.json").read_text())
        self.repo = str(base / "repo")
        from looma_git.index import written
        from looma_git.pipeline.signals import parse_ts

        self.commits = gitfacts.list_commits(Path(self.repo))
        conn = sqlite3.connect(base / "repo" / ".git" / "looma" / "store.db")
        try:
            self.sessions = load_sessions(conn)
            # What the windows wrote and where it landed is resolution evidence too.
            written.update_written(conn)
            self.content = written.content_for(conn, Path(self.repo), [
                (c.sha, parse_ts(c.ts)) for c in self.commits if len(c.parents) <= 1])
            conn.commit()
        finally:
            conn.close()
        self.known = frozenset(gitfacts.known_paths(Path(self.repo)))
        self.sha = gitfacts.existing_objects(Path(self.repo), sha_candidates(self.sessions))


def build(kind: str, base: Path, seed: int = 13) -> Path:
    """Generate one benchmark under `base` and run init + ingest (the first refinery pass)."""
    from tests.bench import quality_teamwork as qt

    if (base / "truth.json").exists() and (base / "repo" / ".git" / "looma").exists():
        return base
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    bench: Any
    if kind == "teamwork":
        from fixtures.teamwork.generate import build_teamwork
        from fixtures.teamwork.generate import env_for as env_tw
        bench = build_teamwork(base, seed=seed)
        env.update(env_tw(bench))
    else:
        from fixtures.realproject.generate import build_realproject
        from fixtures.realproject.generate import env_for as env_rp
        bench = build_realproject(base)
        env.update(env_rp(bench))
    env["LOOMA_NO_PROGRESS"] = "1"
    for args in (("init",), ("ingest",)):
        qt._looma(Path(bench.repo), env, *args)
    return base


@contextlib.contextmanager
def setting(values: dict[str, Any]) -> Iterator[None]:
    """Set module constants (`S_` names: pipeline/signals.py) for the duration."""
    old = {}
    for k, v in values.items():
        # Weights live with the score (pipeline/evidence.py), thresholds with the resolver.
        mod, name = (S, k[2:]) if k.startswith("S_") else (E if hasattr(E, k) else R, k)
        old[k] = (mod, name, getattr(mod, name))
        setattr(mod, name, v)
    try:
        yield
    finally:
        for mod, name, v in old.values():
            setattr(mod, name, v)


def f1(bench: Bench) -> dict[str, Any]:
    """Segment clustering of one full first pass (no ledger seeds), scored as the benchmark
    scores what `looma ingest` recorded."""
    from looma_git.pipeline.authorship import with_authorship
    from tests.bench import quality_teamwork as qt

    windows = with_authorship(
        [w for s in bench.sessions for w in S.windows_of(s, bench.known, bench.sha)],
        bench.commits, bench.content)
    resolver = R.Resolver([])
    placed = {w.key: resolver.add(w)[0] for w in sorted(windows, key=R.window_order)}
    owner: dict[str, str | None] = {e: placed[w.key] for w in windows for e in w.event_ids}
    where = {e: w.key for w in windows for e in w.event_ids}
    real = qt.window_owners
    qt.window_owners = lambda repo: (owner, where)
    try:
        segs = qt.segment_predictions(bench)
    finally:
        qt.window_owners = real
    return qt.clustering(segs)


def grid_of(args: list[str]) -> list[dict[str, Any]]:
    if not args:
        return [{}] + [{k: v} for k, vs in AROUND.items() for v in vs]
    axes = {}
    for a in args:
        k, _, vs = a.partition("=")
        axes[k] = [json.loads(x) for x in vs.split(",")]
    return [dict(zip(axes, combo, strict=True))
            for combo in itertools.product(*axes.values())]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    keep = Path(args[args.index("--keep") + 1]) if "--keep" in args else None
    if keep:
        i = args.index("--keep")
        del args[i:i + 2]
    grids = [a.removeprefix("--grid=") for a in args if a != "--grid"]
    with tempfile.TemporaryDirectory(prefix="looma-calibrate-") as tmp:
        root = keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        benches = [Bench("teamwork", build("teamwork", root / "teamwork")),
                   Bench("teamwork-seed7", build("teamwork", root / "teamwork7", seed=7)),
                   Bench("realproject", build("realproject", root / "realproject"))]
        rows = []
        for values in grid_of(grids):
            with setting(values):
                ms = [f1(b) for b in benches]
            rows.append((min(m["clustering_f1"] for m in ms), values, ms))
        print("min F1 | " + " | ".join(b.name for b in benches) + " | setting (others current)")
        for low, values, ms in sorted(rows, key=lambda r: -r[0]):
            cells = " | ".join(f"{m['clustering_f1']:.4f} ({m['predicted_workitems']})"
                               for m in ms)
            print(f"{low:.4f} | {cells} | {values or 'current'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
