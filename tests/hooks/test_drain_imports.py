"""The background drain stays light: no wire models, no pydantic unless it writes JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from looma_git.api import ingest as api_ingest
from looma_git.gitrepo import find_repo
from looma_git.ingest.base import DiscoveryEnv
from looma_git.ingest.engine import run_ingest
from looma_git.wire.cli import AgentSummary, IngestReport
from tests.helpers import commit_file, git, looma

HEAVY = ("pydantic", "looma_git.wire")
# The refinery: a link step that finds no session changed runs no pass, and needs none of it.
REFINERY = ("looma_git.api.refine", "looma_git.pipeline.refine", "looma_git.pipeline.promote")


def _fresh_drain(repo: Path, *args: str) -> tuple[str, set[str]]:
    """`looma hook drain ARGS` in a fresh process; (its stdout, the heavy modules it loaded)."""
    code = ("import sys, io, contextlib, json\n"
            "from looma_git.cli.main import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            "    try:\n"
            f"        main(['hook', 'drain', *{list(args)!r}])\n"
            "    except SystemExit:\n"
            "        pass\n"
            f"heavy = sorted(m for m in {HEAVY + REFINERY!r} if m in sys.modules)\n"
            "print(json.dumps({'out': buf.getvalue(), 'heavy': heavy}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True, check=True)
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc["out"], set(doc["heavy"])


def _steps(repo: Path) -> dict[str, str]:
    st = json.loads((repo / ".git" / "looma" / "hooks-state.json").read_text())
    return {s["name"]: s["status"] for s in st["last_drain"]["steps"]}


def test_hook_drain_loads_no_pydantic_nor_wire(repo: Path, scrubbed_env: Path) -> None:
    looma(repo, "init")
    sha = commit_file(repo, "x.txt", "1", "one")  # before the hooks: no drainer spawned
    looma(repo, "hooks", "install")
    # Nothing queued: ingest only (the drain after a commit whose link is already done).
    out, heavy = _fresh_drain(repo)
    assert out == "" and heavy == set(), heavy
    assert _steps(repo) == {"ingest": "ok", "rewrites": "ok", "link": "ok"}
    # A queued commit: the link step runs too; still no wire model. (Reading the ledger
    # parses op envelopes, which are pydantic models in looma_git.ledger.ops.)
    (repo / ".git" / "looma" / "queue").write_text(f"{sha} 1700000000\n")
    out, heavy = _fresh_drain(repo)
    assert out == "" and "looma_git.wire" not in heavy and not heavy & set(REFINERY), heavy
    assert _steps(repo)["link"] == "ok"
    # -v prints the wire form: only then are the models loaded.
    out, heavy = _fresh_drain(repo, "-v")
    assert json.loads(out)["ran"] is True and json.loads(out)["commits"] == 0
    assert heavy & set(HEAVY) == set(HEAVY)


def test_ingest_summary_is_the_reports_repr(repo: Path, scrubbed_env: Path) -> None:
    looma(repo, "init")
    git(repo, "status")
    paths = find_repo(repo)
    env = DiscoveryEnv(home=scrubbed_env, environ={}, platform=sys.platform)
    top, per_agent = api_ingest._fields(run_ingest(paths, env))
    shown = {**top, "agents": {n: api_ingest._Shown("AgentSummary", f)
                               for n, f in per_agent.items()}}
    wire = {**top, "agents": {n: AgentSummary(**f) for n, f in per_agent.items()}}
    assert per_agent  # every agent reports, with or without sources
    assert repr(api_ingest._Shown("IngestReport", shown)) == repr(IngestReport(**wire))


def test_the_link_steps_planner_loads_no_refinery() -> None:
    """A drained commit that links writes its ops through pipeline/link_ops.py, which (with the
    linker it plans for) must not pull in the pass's views, extractor or heuristics: importing
    them was a fifth of a linking drain's CPU."""
    code = ("import sys\n"
            "import looma_git.index.link_step, looma_git.pipeline.link_ops, "
            "looma_git.pipeline.linking\n"
            "mods = ('looma_git.pipeline.promote', 'looma_git.pipeline.views', "
            "'looma_git.pipeline.heuristics', 'looma_git.pipeline.extractor')\n"
            "print(sorted(m for m in mods if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == "[]", proc.stdout
