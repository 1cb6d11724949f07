"""Every test runs with a scrubbed git environment: its own HOME, no GIT_* from the caller."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from tests import helpers
from tests.helpers import GITCONFIG, KEEP_ENV, clean_env, make_repo

# pytest caches each test module's assertion-rewritten code in __pycache__ (keyed by the
# source's mtime and size) unless bytecode writing is off; with PYTHONDONTWRITEBYTECODE=1 in the
# caller's environment (this machine's agents have it) every pytest process, each xdist worker
# included, rewrote all ~200 test modules again: about half of collection, ~3 CPU-s a process.
# The cache is gitignored and invalidated by any edit, so writing it changes no result.
sys.dont_write_bytecode = False

# Hypothesis judges wall time twice (a 200 ms deadline per example, a "too slow" input
# generation check); on a shared 2-core machine both fail at random under load (seen on
# tests/index/test_raw_ref.py at load ~18) without a property being false. Examples, shrinking
# and the properties stay as each test sets them; only the two wall-clock checks are off.
hypothesis_settings.register_profile(
    "looma", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("looma")


# Under `-n 2`, tests that share a costly module-scoped fixture (a built benchmark, a wheel, a
# crowded ledger, a tiny model) run on one worker, so the fixture is built once instead of
# once per worker; every other test is dispatched on its own, as with `--dist load`. A wrong
# entry here only costs time, never a result.
_SHARED_FIXTURE_MODULES = ("tests/cli/test_wheel.py", "tests/mcp/test_bounds.py",
                           "tests/index/test_embedder.py", "tests/fixtures/test_scenario.py",
                           "tests/api/test_retrieval_cli.py",
                           "tests/ingest/test_opencode_and_gemini_branch.py",
                           "tests/test_layers.py")


def _shared_scope(nodeid: str) -> str | None:
    path, _, name = nodeid.partition("::")
    if path == "tests/test_quality.py":  # one module, a benchmark per family: one scope each
        for family in ("teamwork", "2025q1", "realproject"):  # realproject_2025q1 is 2025q1
            if family in name:
                return f"{path}:{family}"
        holdout = re.search(r"holdout\d*", name)  # holdout, holdout2, holdout3, ... apart
        if holdout:
            return f"{path}:{holdout.group(0)}"
        if name.startswith(("test_quality_target", "test_no_distractor")):
            return f"{path}:measured"
        return None
    return path if path in _SHARED_FIXTURE_MODULES else None


# Units that take far longer than their test count says: CPU seconds (children included) of
# one `-n 2` run on 2 cores, measured 2026-12-03 with a per-test getrusage plugin on a machine
# shared with other jobs (load ~12: every number is about twice a quiet run's; wall times say
# more about the neighbours than about the test); costliest first. Only the order depends on
# them: a stale number costs wall time, never a result. A family of tests/test_quality.py not
# listed (a new hold-out) counts as the dearest listed one.
_SMOKE = "tests/bench/test_bench_smoke.py::test_benchmark_runs_quick_and_ends_with_bench_json"
_KNOWN_COST = {
    "tests/test_quality.py:holdout4": 31,
    "tests/cli/test_wheel.py": 27,  # the demo (test_demo_end_to_end) runs from the wheel
    "tests/test_quality.py:holdout3": 22,
    "tests/test_quality.py:teamwork": 21,
    "tests/ledger/test_emit_reference.py::test_dump_matches_reference": 15,
    f"{_SMOKE}[retrieval]": 13,
    f"{_SMOKE}[scale]": 13,
    "tests/test_quality.py:holdout2": 13,
    "tests/test_quality.py:holdout": 12,
    "tests/test_quality.py:realproject": 12,
    "tests/sync/test_convergence.py::test_three_clones_converge": 12,
    "tests/ingest/test_crash.py::test_sigkill_at_any_point_then_rerun_equals_one_clean_run": 10,
    "tests/ingest/test_fast_json.py::test_generated_lines_read_alike": 10,
    f"{_SMOKE}[sync]": 5,
    "tests/test_quality.py:2025q1": 9,
    "tests/store/test_ledger_store.py::test_concurrent_writer_processes_lose_nothing": 8,
    "tests/pipeline/test_incremental_ledger.py::"
    "test_incremental_passes_with_the_ledger_equal_the_full_rebuild": 7,
    "tests/mcp/test_bounds.py": 7,
    f"{_SMOKE}[index]": 4,
    "tests/hooks/test_link_stability.py::"
    "test_an_ordinary_commit_rewrites_no_unrelated_workitem": 5,
    f"{_SMOKE}[redact]": 5,
    "tests/cli/test_interrupt_tty.py": 5,
    "tests/api/test_secrets_never_reach_git.py::"
    "test_every_corpus_secret_in_all_five_agents_never_reaches_git": 4,
    "tests/test_quality.py:measured": 4,
}


def _unit_cost(scope: str, nodeids: dict[str, bool]) -> tuple[float, int]:
    """Sort key of a scheduling unit: known cost first, then xdist's rule (most tests first);
    the benchmark smoke runs (3-7 s each, one test per unit) count as heavy too."""
    cost: float = _KNOWN_COST.get(scope, 0)
    if not cost:
        cost = _KNOWN_COST.get(next(iter(nodeids)).partition("::")[0], 0) if nodeids else 0
    if not cost and scope.startswith("tests/test_quality.py:"):
        cost = max(v for k, v in _KNOWN_COST.items() if k.startswith("tests/test_quality.py:"))
    if not cost and scope.startswith("tests/bench/test_bench_smoke.py::"):
        cost = 4
    return (-cost, -len(nodeids))


# The end-to-end tier: tests that start looma (or git with looma's hooks) as real processes.
# A module that imports the subprocess runner `helpers.looma` under its own name, the hooks
# tests, and the benchmarks' quality bars (which run the commands a user runs) are in it;
# everything else runs in process. `pytest -m "not e2e"` is the fast tier.
_E2E_DIRS = ("tests/hooks/",)
_E2E_MODULES = ("tests/test_quality.py", "tests/cli/test_wheel.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.partition("::")[0]
        module = getattr(item, "module", None)
        if (path.startswith(_E2E_DIRS) or path in _E2E_MODULES
                or getattr(module, "looma", None) is helpers.looma):
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getvalue("dist") != "load":
        return None  # an explicit --dist keeps its own scheduler
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        """`load`, except the shared-fixture groups above; the costliest units go first."""

        def _split_scope(self, nodeid: str) -> str:
            return _shared_scope(nodeid) or nodeid

        def schedule(self) -> None:
            if (self.collection is not None  # type: ignore[has-type]
                    or not self._check_nodes_have_same_collection()):
                super().schedule()
                return
            # xdist orders units by test count, which puts a 1-test, 40-second unit at the
            # very end; order by known cost instead, so the long units overlap.
            collection = list(next(iter(self.registered_collections.values())))
            units: dict[str, dict[str, bool]] = {}
            for nodeid in collection:
                units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            for scope, nodeids in sorted(units.items(), key=lambda u: _unit_cost(*u)):
                self.workqueue[scope] = nodeids
            self.collection = collection
            if not collection:
                return
            for _ in range(len(self.nodes) - len(self.workqueue)):  # more workers than units
                unused, _assigned = self.assigned_work.popitem()
                unused.shutdown()
            for node in self.nodes:
                self._assign_work_unit(node)
            for node in self.nodes:
                self._reschedule(node)
            if not self.workqueue:
                for node in self.nodes:
                    node.shutdown()

    return SharedFixtureScheduling(config, log)


@pytest.fixture(autouse=True)
def scrubbed_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """A fresh HOME with a minimal gitconfig; GIT_*, XDG_* and agent variables removed."""
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key not in KEEP_ENV:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("LOOMA_NO_PROGRESS", "1")
    # A drainer lingers LOOMA_DRAIN_SETTLE_S (0.5 s) after its queues empty, for the next
    # commit of a burst: in tests that is half a second of waiting per drain. The burst test
    # (tests/hooks/test_git_events.py) sets the linger it checks.
    monkeypatch.setenv("LOOMA_DRAIN_SETTLE_S", "0")
    drain = sys.modules.get("looma_git.hooks.drain")  # read at import: in-process drains
    if drain is not None:
        monkeypatch.setattr(drain, "SETTLE_S", 0.0)
    (home / ".gitconfig").write_text(GITCONFIG)
    return home


@pytest.fixture(scope="session")
def scenario_template(tmp_path_factory: pytest.TempPathFactory):
    """The scenario built once per session (init + ingest + backfill)."""
    from tests.api.scenario_env import ScenarioTemplate

    base = tmp_path_factory.mktemp("scenario")
    return ScenarioTemplate(base / "s", clean_env(base))


@pytest.fixture
def scenario(scenario_template):
    """A private copy of the built scenario: (repo, env, truth)."""
    return scenario_template.fresh()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository with one commit."""
    return make_repo(tmp_path / "repo")
