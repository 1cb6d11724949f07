"""MCP client configuration: the exact snippet per client, and a merge that keeps unrelated keys."""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from looma_git.errors import InvalidDataError, ReadOnlyError, UsageError

CLIENTS = ("claude-code", "codex", "cursor", "gemini-cli", "opencode", "vscode", "windsurf")
SERVER_NAME = "looma"
SCOPES = ("project", "user")
# Codex gives a server 10 s to start by default; a cold Python start on a loaded laptop can
# take a few seconds, and a server that misses the window has no tools for the whole session.
CODEX_STARTUP_TIMEOUT = 20
# Where each client reads project-scope servers (relative to the repository) and user-scope
# servers (relative to the home directory); None: the client has no such scope.
PROJECT_FILES = {"claude-code": ".mcp.json", "cursor": ".cursor/mcp.json",
                 "gemini-cli": ".gemini/settings.json", "opencode": "opencode.json",
                 "codex": ".codex/config.toml", "vscode": ".vscode/mcp.json", "windsurf": None}
USER_FILES = {"claude-code": None, "cursor": ".cursor/mcp.json",
              "gemini-cli": ".gemini/settings.json", "opencode": ".config/opencode/opencode.json",
              "codex": ".codex/config.toml", "vscode": None,
              "windsurf": ".codeium/windsurf/mcp_config.json"}


@dataclass(frozen=True)
class ClientConfigFile:
    """Where a client reads its MCP servers and how our entry looks there."""

    client: str
    path: Path
    fmt: Literal["json", "toml"]
    container: str  # the key holding the servers: mcpServers / mcp / mcp_servers
    entry: dict[str, Any]
    scope: str  # human words: "project (this repository)" or "user (every project)"


@dataclass(frozen=True)
class Plan:
    """A computed (not yet written) configuration change."""

    target: ClientConfigFile
    before: str | None  # None: the file does not exist
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified before/after diff of the file."""
        name = str(self.target.path)
        return "".join(difflib.unified_diff(
            (self.before or "").splitlines(keepends=True), self.after.splitlines(keepends=True),
            fromfile=f"{name} (before)" if self.before is not None else "/dev/null",
            tofile=f"{name} (after)"))


def server_command(python: str, repo: Path | None) -> list[str]:
    """argv that starts the server with this exact interpreter: for `repo`, or (None) for
    whatever project the client names in its MCP roots, else its working directory."""
    pin = ["-C", str(repo)] if repo is not None else []
    return [python, "-m", "looma_git", *pin, "mcp"]


def default_scope(client: str) -> str:
    """Project scope wherever the client has one: one repository's memory stays with it."""
    return "project" if PROJECT_FILES.get(client) else "user"


def target(client: str, *, python: str, repo: Path, home: Path,
           codex_home: Path | None = None, scope: str | None = None) -> ClientConfigFile:
    """The configuration location and entry for `client` at `scope` (default: project where
    the client reads project files). A project entry is pinned to `repo` with -C; a user entry
    is not (one server line serves every repository, each found from roots or the cwd)."""
    if client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}", hint="one of: " + ", ".join(CLIENTS))
    scope = scope or default_scope(client)
    rel = (PROJECT_FILES if scope == "project" else USER_FILES).get(client)
    if rel is None:
        other = "user" if scope == "project" else "project"
        raise UsageError(f"{client} has no {scope}-scope MCP configuration",
                         hint=f"use --scope {other}")
    if client == "codex" and scope == "user":
        path = (codex_home if codex_home is not None else home / ".codex") / "config.toml"
    else:
        path = (repo if scope == "project" else home) / rel
    words = "project (this repository)" if scope == "project" else \
        "user (every project; the repository comes from the client's roots or cwd)"
    argv = server_command(python, repo if scope == "project" else None)
    cmd, args = argv[0], argv[1:]
    entry: dict[str, Any]
    fmt: Literal["json", "toml"] = "json"
    container = "mcpServers"
    if client == "claude-code":
        entry = {"type": "stdio", "command": cmd, "args": args, "env": {}}
    elif client == "opencode":
        entry = {"type": "local", "command": argv, "enabled": True}
        container = "mcp"
    elif client == "vscode":
        entry = {"type": "stdio", "command": cmd, "args": args}
        container = "servers"
    elif client == "codex":
        entry = {"command": cmd, "args": args, "startup_timeout_sec": CODEX_STARTUP_TIMEOUT}
        fmt, container = "toml", "mcp_servers"
    else:  # cursor, gemini-cli, windsurf
        entry = {"command": cmd, "args": args}
    return ClientConfigFile(client, path, fmt, container, entry, words)


# ------------------------------------------------------------------ snippets

def snippet(t: ClientConfigFile) -> str:
    """The text to paste into `t.path` (a complete file when it does not exist yet)."""
    if t.fmt == "toml":
        return toml_table(t.container, SERVER_NAME, t.entry)
    doc: dict[str, Any] = {t.container: {SERVER_NAME: t.entry}}
    if t.client == "opencode":
        doc = {"$schema": "https://opencode.ai/config.json", **doc}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def notes(t: ClientConfigFile) -> list[str]:
    """What the user should know about this client's reading of the file."""
    if t.client == "codex" and t.path.parent.name == ".codex" and "-C" in t.entry["args"]:
        return ["Codex reads a project's .codex/config.toml only once the project is trusted "
                "(codex asks on first start in the directory)."]
    if t.client == "windsurf":
        return ["Windsurf has no project scope: the server finds the repository from the "
                "workspace roots Windsurf sends (or its working directory)."]
    return []


def cli_command(t: ClientConfigFile) -> str | None:
    """The client's own one-line install command, where it has one."""
    if t.client != "claude-code":
        return None
    argv = [t.entry["command"], *t.entry["args"]]
    return "claude mcp add --scope project looma -- " + " ".join(shlex.quote(a) for a in argv)


# ------------------------------------------------------------------ TOML (no dependency)

def _toml_str(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    out = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\u{ord(m.group()):04x}", out)
    return f'"{out}"'


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise InvalidDataError(f"cannot write a {type(v).__name__} value to TOML",
                           hint="add the snippet by hand")


def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_str(k)


def toml_table(container: str, name: str, entry: dict[str, Any]) -> str:
    """`[container.name]` with one `key = value` line per scalar/array field, then one
    subtable per nested mapping (e.g. `env`)."""
    def table(head: str, d: dict[str, Any]) -> list[str]:
        lines = [f"[{head}]"] + [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in d.items()
                                 if not isinstance(v, dict)]
        for k, v in d.items():
            if isinstance(v, dict):
                lines += ["", *table(f"{head}.{_toml_key(k)}", v)]
        return lines

    return "\n".join(table(f"{container}.{name}", entry)) + "\n"


def _merge_toml(before: str, t: ClientConfigFile) -> str:
    """Replace our table (and its subtables) in place, or append it; verify by re-parsing."""
    try:
        old = tomllib.loads(before)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidDataError(f"{t.path} is not valid TOML ({exc}); not touching it",
                               hint="fix it or add the snippet by hand") from exc
    ours = re.compile(rf'^\s*\[\s*{t.container}\s*\.\s*"?{SERVER_NAME}"?\s*[\].]')
    header = re.compile(r"^\s*\[")
    lines = before.splitlines(keepends=True)
    kept: list[str] = []
    start = None
    inside = False
    for line in lines:
        if header.match(line):
            inside = bool(ours.match(line))
            if inside and start is None:
                start = len(kept)
        if not inside:
            kept.append(line)
    current = (old.get(t.container) or {}).get(SERVER_NAME)
    # Our keys win; the user's own additions to our entry (env, timeouts...) are kept.
    entry = {**current, **t.entry} if isinstance(current, dict) else dict(t.entry)
    table = toml_table(t.container, SERVER_NAME, entry)
    if start is None:
        body = "".join(kept).rstrip("\n")
        after = body + "\n\n" + table if body.strip() else table
    else:
        tail = "".join(kept[start:])
        after = "".join(kept[:start]) + table + ("\n" if tail.strip() else "") + tail
    try:
        new = tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidDataError(f"could not merge into {t.path} safely ({exc}); not touching it",
                               hint="add the snippet by hand") from exc
    expect = copy.deepcopy(old)
    expect.setdefault(t.container, {})[SERVER_NAME] = entry
    if new != expect:
        raise InvalidDataError(f"merging into {t.path} would change other settings; "
                               "not touching it", hint="add the snippet by hand")
    return after


# ------------------------------------------------------------------ JSON

def _indent_of(text: str) -> int:
    m = re.search(r"\n( +)\S", text)
    return len(m.group(1)) if m else 2


def _merge_json(before: str, t: ClientConfigFile) -> str:
    try:
        data = json.loads(before) if before.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidDataError(f"{t.path} is not plain JSON ({exc.msg} at line {exc.lineno}); "
                               "not touching it", hint="add the snippet by hand") from exc
    if not isinstance(data, dict):
        raise InvalidDataError(f"{t.path} does not hold a JSON object; not touching it")
    servers = data.get(t.container)
    if servers is None:
        servers = data[t.container] = {}
    if not isinstance(servers, dict):
        raise InvalidDataError(f"{t.path}: {t.container!r} is not an object; not touching it")
    current = servers.get(SERVER_NAME)
    # Our keys win; the user's own additions to our entry (env, timeouts...) are kept.
    servers[SERVER_NAME] = {**current, **t.entry} if isinstance(current, dict) else t.entry
    return json.dumps(data, indent=_indent_of(before), ensure_ascii=False) + "\n"


# ------------------------------------------------------------------ plan / apply

def plan(t: ClientConfigFile) -> Plan:
    """What writing our entry into `t.path` would change (reads the file, writes nothing)."""
    try:
        before = t.path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Plan(t, None, snippet(t))
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidDataError(f"cannot read {t.path}: {exc}") from exc
    after = _merge_toml(before, t) if t.fmt == "toml" else _merge_json(before, t)
    if t.fmt == "json" and json.loads(after) == json.loads(before or "{}") and \
            before.endswith("\n"):
        after = before  # same data: leave the user's formatting alone
    return Plan(t, before, after)


def apply(p: Plan) -> None:
    """Write the planned text atomically (same directory, then rename), keeping the mode."""
    if not p.changed:
        return
    path = p.target.path
    tmp = path.with_name(f".{path.name}.looma-{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(p.after, encoding="utf-8")
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ReadOnlyError(f"cannot write {path}: {exc.strerror or exc}") from exc
