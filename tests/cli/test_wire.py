"""Every `--json` output has one declared shape in looma_git.wire.cli.WIRE, and the real output
of each command validates against it (no undeclared fields, none missing)."""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel

from looma_git.cli import clidoc
from looma_git.wire.cli import WIRE, ErrorOut, wire_model
from tests.api.scenario_env import by_files, work
from tests.helpers import cli, git


def _json_commands() -> list[str]:
    out = []
    for path, cmd, _ctx in clidoc.walk():
        if any("--json" in getattr(p, "opts", ()) for p in cmd.params):
            out.append(" ".join(path[1:]))
    return out


def test_every_json_command_declares_its_shape() -> None:
    missing = [c for c in _json_commands() if c not in WIRE]
    assert not missing, f"add these to looma_git.wire.cli.WIRE: {missing}"
    for command in WIRE:
        assert issubclass(wire_model(command), BaseModel)


def _models(ann: Any) -> list[type[BaseModel]]:
    """The models an annotation can hold directly (`M`, `M | None`, `M | N`)."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(ann) for m in _models(a)]
    return []


def _inner(ann: Any) -> tuple[str, list[type[BaseModel]]]:
    """("list", models) for list[M | ...], ("dict", models) for dict[str, M], else none."""
    for a in [ann, *(typing.get_args(ann) if typing.get_origin(ann) in (
            typing.Union, types.UnionType) else ())]:
        origin, args = typing.get_origin(a), typing.get_args(a)
        if origin is list and args and _models(args[0]):
            return "list", _models(args[0])
        if origin is dict and len(args) == 2 and _models(args[1]):
            return "dict", _models(args[1])
    return "", []


def _strict(model: type[BaseModel], doc: Any, where: str) -> None:
    """Validate, and refuse keys the model does not declare (pydantic ignores them), at every
    depth: nested models, optional and union ones, lists and dicts of them."""
    model.model_validate(doc)
    assert isinstance(doc, dict), where
    extra = set(doc) - set(model.model_fields)
    assert not extra, f"{where}: undeclared fields {sorted(extra)}"
    for name, field in model.model_fields.items():
        value = doc.get(name)
        direct = _models(field.annotation)
        if direct and isinstance(value, dict):
            _one_of(direct, value, f"{where}.{name}")
            continue
        kind, inner = _inner(field.annotation)
        if kind == "list" and isinstance(value, list):
            for i, v in enumerate(value[:5]):
                _one_of(inner, v, f"{where}.{name}[{i}]")
        elif kind == "dict" and isinstance(value, dict):
            for k, v in list(value.items())[:5]:
                _one_of(inner, v, f"{where}.{name}[{k!r}]")


def _one_of(models: list[type[BaseModel]], doc: Any, where: str) -> None:
    """`doc` is strictly one of `models` (the first whose fields it has)."""
    errors = []
    for m in models:
        try:
            _strict(m, doc, where)
            return
        except (AssertionError, ValueError) as exc:
            errors.append(f"{m.__name__}: {exc}")
    raise AssertionError(f"{where}: matches none of {[m.__name__ for m in models]}: {errors}")


def test_strict_walks_unions_and_containers() -> None:
    """The checker itself: an undeclared key deep inside a union or a dict is caught."""
    from looma_git.wire.status import StatusOut

    doc = {"state": {"state": "up to date", "next": None}, "repository": "r",
           "ledger": {"workitems": 0, "memories": 0, "links": 0, "lamport": 0,
                      "conflicts": 0, "warnings": []},
           "ingestion": {"error": "damaged"},
           "index": {"state": "missing", "ledger_commit": None, "fresh": False},
           "embedder": {"available": False},
           "hooks": {"error": "x"}}
    _strict(StatusOut, doc, "status")
    for part, bad in (("ingestion", {"error": "damaged", "oops": 1}),
                      ("hooks", {"error": "x", "extra": True}),
                      ("embedder", {"available": False, "nope": 1})):
        with pytest.raises(AssertionError):
            _strict(StatusOut, {**doc, part: bad}, "status")
    with pytest.raises(AssertionError):
        _strict(wire_model("ingest"), {**_INGEST, "agents": {"codex": {**_AGENT, "x": 1}}},
                "ingest")


_AGENT = {"sources": 0, "unchanged": 0, "sessions": 0, "events_added": 0, "events_updated": 0,
          "skipped": {}, "noise": {}}
_INGEST = {"agents": {"codex": _AGENT}, "sources_scanned": 0, "sources_unchanged": 0,
           "events_added": 0, "events_updated": 0, "unattributed_events": 0, "sessions": {},
           "skipped": {}, "skip_samples": {}, "noise": {}, "redactions": {}, "notes": [],
           "duration_s": 0.0, "elapsed_s": 0.0, "refine": None}


def test_real_outputs_validate(scenario) -> None:
    repo, env, _ = scenario
    items = work(repo, env)
    wid = by_files(items, "auth/session.py")["id"]
    git(repo, "remote", "add", "team", str(repo))
    runs: list[tuple[str, tuple[str, ...]]] = [
        ("work", ("work",)), ("resume", ("resume", "oauth login")),
        ("resume", ("resume", "search")), ("resume", ("resume", "kubernetes helm chart")),
        ("ask", ("ask", "why postgres")), ("timeline", ("timeline", wid)),
        ("recall", ("recall", "auth/session.py")), ("status", ("status",)),
        ("status", ("status", "--health")), ("log", ("log", "-n", "5")),
        ("blame", ("blame", wid)), ("verify", ("verify",)), ("ingest", ("ingest",)),
        ("reprocess", ("reprocess",)), ("backfill", ("backfill",)), ("reindex", ("reindex",)),
        ("init", ("init",)), ("hooks install", ("hooks", "install")),
        ("hooks status", ("hooks", "status")), ("share enable", ("share", "enable", "team")),
        ("share status", ("share", "status")), ("conflicts", ("conflicts",)),
        ("relink", ("relink",)), ("sync", ("sync", "team")),
        ("link", ("link", "HEAD~1", wid)), ("unlink", ("unlink", "HEAD~1", wid)),
        ("correct rename", ("correct", "rename", wid, "Session refresh race")),
        ("hooks uninstall", ("hooks", "uninstall")), ("share disable", ("share", "disable", "team")),
    ]
    seen = set()
    bundles = 0
    for command, args in runs:
        proc = cli(repo, *args, "--json", env=env, check=False)
        doc = json.loads(proc.stdout)
        if proc.returncode != 0:
            _strict(ErrorOut, doc, command)
            raise AssertionError(f"{args}: {doc}")
        _strict(wire_model(command), doc, command)
        seen.add(command)
        if command == "resume" and doc["state"] == "confident":
            bundles += 1  # its bundle was checked to the leaves (BundleOut)
            assert doc["bundle"]["workitem"]["id"] == doc["candidates"][0]["id"]
    assert bundles, "no confident resume: the bundle's shape went unchecked"
    undo = json.loads(cli(repo, "log", "--user", "--json", env=env).stdout)["ops"][0]["id"]
    _strict(wire_model("correct undo"),
            json.loads(cli(repo, "correct", "undo", undo[:12], "--json", env=env).stdout),
            "correct undo")
    seen.add("correct undo")
    # The other corrections, each on a WorkItem or candidate it applies to.
    items = work(repo, env)
    oauth = by_files(items, "auth/oauth.py")
    s0, s1 = [s["id"] for s in oauth["sessions"]][:2]
    cands = [w["id"] for w in json.loads(cli(repo, "work", "--candidates", "--json",
                                             env=env).stdout)["workitems"]
             if not w["promoted"]]
    others = [w["id"] for w in items if w["id"] not in (oauth["id"], wid)]
    for command, args in (
            ("correct split", ("correct", "split", oauth["id"], "--into", "P1,P2",
                               "--part", f"1={s0}", "--part", f"2={s1}")),
            ("correct promote", ("correct", "promote", cands[0])),
            ("correct reject", ("correct", "reject", cands[1])),
            ("correct merge", ("correct", "merge", others[0], wid)),
            ("correct false-positive", ("correct", "false-positive", others[1]))):
        proc = cli(repo, *args, "--json", env=env, check=False)
        doc = json.loads(proc.stdout)
        assert proc.returncode == 0, (args, doc)
        _strict(wire_model(command), doc, command)
        seen.add(command)
    assert seen == set(WIRE), set(WIRE) - seen  # every declared shape met a real output


def test_mcp_bundle_parts_extend_the_cli_bundle() -> None:
    """MCP's resume bundle reuses the CLI's parts: a field both carry has one name and type."""
    from looma_git.wire import mcp, read

    for sub, base in ((mcp.GitState, read.GitStateOut), (mcp.CommitRow, read.CommitOut),
                      (mcp.SessionRow, read.SessionOut), (mcp.Provenance, read.EvidenceSource),
                      (mcp.BundleWorkItem, read.Rated)):
        assert issubclass(sub, base), (sub, base)


def test_errors_validate(scenario) -> None:
    repo, env, _ = scenario
    for args in (("timeline", "nosuch"), ("work", "--bogus"), ("correct", "merge", "A", "B")):
        proc = cli(repo, *args, "--json", env=env, check=False)
        _strict(ErrorOut, json.loads(proc.stdout), " ".join(args))


def test_status_before_and_after_init(repo) -> None:
    """`status --json` has its declared shape at every stage of a clone, not only a built one."""
    from looma_git.wire.status import StatusOut

    before = json.loads(cli(repo, "status", "--json").stdout)
    _strict(StatusOut, before, "status")
    assert before["state"] == {"state": "not initialized", "next": "looma init"}
    assert before["index"]["state"] == "missing" and before["health"] is None
    cli(repo, "init")
    after = json.loads(cli(repo, "status", "--health", "--json").stdout)
    _strict(StatusOut, after, "status --health")
    assert after["state"]["state"] == "no transcripts read"
    assert after["health"]["unlinked_commit_ratio"] == 1.0  # one commit, no WorkItem
    assert {w["metric"] for w in after["warnings"]} >= {"unlinked_commit_ratio"}
    assert after["previous"] is None  # the first snapshot
    again = json.loads(cli(repo, "status", "--health", "--json").stdout)
    assert again["previous"] == after["health"]


def test_a_health_snapshot_alone_is_not_an_ingest(repo) -> None:
    """`status --health` keeps its snapshot in store.db; before any ingest that file must not
    turn the clone into "up to date" with an unreadable store."""
    cli(repo, "init")
    cli(repo, "status", "--health", "--json")
    doc = json.loads(cli(repo, "status", "--json").stdout)
    assert doc["state"]["state"] == "no transcripts read"
    assert doc["ingestion"] == {"sessions": {}, "events": 0, "last_ingest": None, "counts": {}}
