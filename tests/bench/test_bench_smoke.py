"""Smoke test: every benchmark runs at --quick sizes through run_all and reports BENCH-JSON.

No timed assertions: the numbers are printed, never judged here.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench import run_all
from tests.helpers import REPO_ROOT

PRESENT = [n for n, (script, _, _) in run_all.BENCHES.items()
           if (run_all.BENCH_DIR / script).exists()]

DOC = """# Performance

Intro kept.

## Index

index details kept

## Hooks

hooks details kept
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESENT)
def test_benchmark_runs_quick_and_ends_with_bench_json(name: str) -> None:
    res = run_all.run_one(name, quick=True, verbose=False, timeout=300)
    assert res.error is None, res.output[-3000:] + res.stderr[-3000:]
    last = [ln for ln in res.output.splitlines() if ln.strip()][-1]
    assert last.startswith(run_all.PREFIX)
    record = json.loads(last[len(run_all.PREFIX):])
    assert record["bench"] == name and record["metrics"]
    for m in record["metrics"]:
        assert isinstance(m["value"], float) and math.isfinite(m["value"]) and m["unit"]
        assert m["better"] in ("lower", "higher")
    assert res.rss_mb > 0


@pytest.mark.slow
def test_run_all_cli_prints_the_table_and_writes_the_summary(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(DOC)
    # The cheapest benchmark (ledger, ~1 CPU-s at --quick): what is checked is the table and
    # the summary section; the benchmarks themselves are the smoke test's above.
    proc = subprocess.run([sys.executable, "-m", "tests.bench.run_all", "--quick", "--only",
                           "ledger", "--write-docs", "--docs", str(doc)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    header = next(ln for ln in proc.stdout.splitlines() if ln.startswith("benchmark "))
    assert header.split() == ["benchmark", "measure", "value", "target", "ratio", "result",
                              "peak", "RSS"]
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith("ledger ")]
    # a quick run is never judged: each row with a target says "(quick)", the others "info"
    assert rows and all("ERROR" not in ln and ("(quick)" in ln or " info " in ln) for ln in rows)
    assert any("(quick)" in ln for ln in rows)
    text = doc.read_text()
    assert text.startswith("# Performance\n\nIntro kept.\n\n## Summary\n")
    assert "nproc=" in text and "| ledger |" in text
    assert text.endswith("## Index\n\nindex details kept\n\n## Hooks\n\nhooks details kept\n")


def _result(metrics: list[dict], reduced: bool = False, error: str | None = None
            ) -> run_all.Result:
    return run_all.Result("x", 1.0, 0 if error is None else 1, 50.0, metrics, error,
                          reduced=reduced)


def test_table_judges_ceilings_floors_and_quick_runs() -> None:
    from tests.bench.report import metric

    rows = run_all.rows([
        _result([metric("latency", 300, "ms", 400), metric("latency", 500, "ms", 400),
                 metric("rate", 12000, "events/s", 10000, "higher"),
                 metric("rate", 9000, "events/s", 10000, "higher"), metric("info", 3, "s")]),
        _result([metric("latency", 500, "ms", 400)], reduced=True),
        _result([], error="no BENCH-JSON line")])
    verdicts = [r[5] for r in rows]
    assert verdicts[:5] == ["pass", "MISS", "pass", "MISS", "info"]
    assert [r[4] for r in rows[:4]] == ["0.75", "1.25", "1.20", "0.90"]
    assert verdicts[5] == "(quick)" and verdicts[6].startswith("ERROR")


def test_write_docs_replaces_only_its_own_section(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(DOC)
    run_all.write_docs("## Summary\n\nfirst\n", doc)
    run_all.write_docs("## Summary\n\nsecond\n", doc)
    text = doc.read_text()
    assert text.count("## Summary") == 1 and "second" in text and "first" not in text
    assert text == DOC.replace("Intro kept.\n\n", "Intro kept.\n\n## Summary\n\nsecond\n\n")


def test_scale_history_is_read_as_real_sessions(tmp_path: Path) -> None:
    """The scale benchmark's generator writes what looma's adapters read: every session
    stored with ~100 events (50-160), nothing skipped as malformed, its commits in the repository."""
    from looma_git.gitrepo import find_repo
    from looma_git.ingest.base import DiscoveryEnv
    from looma_git.ingest.engine import run_ingest
    from tests.bench.scale_history import build_history

    h = build_history(tmp_path, 9, workers=1)
    assert (h.claude, h.codex) == (6, 3) and len(h.session_files) == 9
    count = subprocess.run(["git", "rev-list", "--count", "main"], cwd=h.repo, text=True,
                           capture_output=True, check=True).stdout.strip()
    assert int(count) == h.commits
    run = run_ingest(find_repo(h.repo), DiscoveryEnv(home=h.home), workers=1)
    stats = {a: s for a, s in run.agents.items() if s.sources}
    assert {a: s.sessions for a, s in stats.items()} == {"claude-code": 6, "codex": 3}
    for s in stats.values():
        assert 50 * s.sessions <= s.events_added <= 160 * s.sessions
        assert set(s.skipped) <= {"non_message", "encrypted"}, s.skipped
        assert s.noise  # the generated noise is recognised as noise
    assert run.unattributed_events == 0


def test_varied_history_says_each_text_once_and_plain_stays_the_same(tmp_path: Path) -> None:
    """`varied=True` gives every prompt, reply and thought a fragment of its own (the bench's
    --varied: a cost a per-text memo hides shows); the plain history is unchanged by it."""
    import json

    from tests.bench import scale_history
    from tests.bench.scale_history import build_history

    def texts(h: scale_history.History) -> list[str]:
        out = []
        for f in h.session_files:
            for line in f.read_text().splitlines():
                msg = json.loads(line).get("message")
                if isinstance(msg, dict) and isinstance(msg.get("content"), list):
                    out += [b.get("text") or b.get("thinking") for b in msg["content"]
                            if isinstance(b, dict) and (b.get("text") or b.get("thinking"))]
        return out

    plain = build_history(tmp_path / "a", 6, workers=1)
    varied = build_history(tmp_path / "b", 6, workers=1, varied=True)
    again = build_history(tmp_path / "c", 6, workers=1)
    assert not scale_history.VARIED
    long_varied = [t for t in texts(varied) if len(t) >= 16]
    assert len(set(long_varied)) == len(long_varied) > 100
    assert len(set(texts(plain))) < len(texts(plain)) / 2  # the templates repeat
    root = str(tmp_path)
    assert [f.read_text().replace(f"{root}/a", "R") for f in plain.session_files] == \
        [f.read_text().replace(f"{root}/c", "R") for f in again.session_files]
