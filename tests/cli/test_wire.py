"""Every `--json` output has one declared shape in looma_git.wire.cli.WIRE, and the real output
of each command validates against it (no undeclared fields, none missing)."""

from __future__ import annotations

import json
from typing import Any

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


def _strict(model: type[BaseModel], doc: Any, where: str) -> None:
    """Validate, and refuse keys the model does not declare (pydantic ignores them)."""
    model.model_validate(doc)
    assert isinstance(doc, dict), where
    extra = set(doc) - set(model.model_fields)
    assert not extra, f"{where}: undeclared fields {sorted(extra)}"
    for name, field in model.model_fields.items():
        ann = field.annotation
        sub = getattr(ann, "__args__", ())
        value = doc.get(name)
        if isinstance(ann, type) and issubclass(ann, BaseModel) and isinstance(value, dict):
            _strict(ann, value, f"{where}.{name}")
        elif sub and isinstance(value, list):
            inner = sub[0]
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                for i, v in enumerate(value[:5]):
                    _strict(inner, v, f"{where}.{name}[{i}]")


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
    for command, args in runs:
        proc = cli(repo, *args, "--json", env=env, check=False)
        doc = json.loads(proc.stdout)
        if proc.returncode != 0:
            _strict(ErrorOut, doc, command)
            raise AssertionError(f"{args}: {doc}")
        _strict(wire_model(command), doc, command)
        seen.add(command)
    undo = json.loads(cli(repo, "log", "--user", "--json", env=env).stdout)["ops"][0]["id"]
    _strict(wire_model("correct undo"),
            json.loads(cli(repo, "correct", "undo", undo[:12], "--json", env=env).stdout),
            "correct undo")
    assert len(seen) >= 25


def test_errors_validate(scenario) -> None:
    repo, env, _ = scenario
    for args in (("timeline", "nosuch"), ("work", "--bogus"), ("correct", "merge", "A", "B")):
        proc = cli(repo, *args, "--json", env=env, check=False)
        _strict(ErrorOut, json.loads(proc.stdout), " ".join(args))
