"""`looma mcp config --client X [--write]`: exact snippets and merges that keep other settings."""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest

from looma_git.mcp import config
from tests.helpers import cli as looma


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), **extra}


def _body(stdout: str) -> str:
    return "".join(line + "\n" for line in stdout.splitlines() if not line.startswith("# "))


def _argv_ok(argv: list[str], repo: Path) -> None:
    assert argv == [sys.executable, "-m", "looma_git", "-C", str(repo), "mcp"]
    assert os.path.isabs(argv[0])


@pytest.mark.parametrize("client", [c for c in config.CLIENTS if c not in ("vscode", "windsurf")])
def test_snippet_per_client(repo: Path, scrubbed_env: Path, client: str) -> None:
    out = looma(repo, "mcp", "config", "--client", client, env=_env(scrubbed_env)).stdout
    head = out.splitlines()[0]
    body = _body(out)
    assert "project (this repository)" in head  # one repository's memory stays with it
    if client == "codex":
        assert f"in {repo}/.codex/config.toml" in head
        entry = tomllib.loads(body)["mcp_servers"]["looma"]
        _argv_ok([entry["command"], *entry["args"]], repo)
        assert entry["startup_timeout_sec"] == config.CODEX_STARTUP_TIMEOUT
        assert body.startswith("[mcp_servers.looma]\n")
        assert "trusted" in out
        return
    data = json.loads(body)
    if client == "opencode":
        assert f"in {repo}/opencode.json" in head
        entry = data["mcp"]["looma"]
        assert entry["type"] == "local" and entry["enabled"] is True
        _argv_ok(entry["command"], repo)
        return
    entry = data["mcpServers"]["looma"]
    _argv_ok([entry["command"], *entry["args"]], repo)
    where = {"claude-code": f"{repo}/.mcp.json", "cursor": f"{repo}/.cursor/mcp.json",
             "gemini-cli": f"{repo}/.gemini/settings.json"}[client]
    assert f"in {where}" in head
    if client == "claude-code":
        assert entry["type"] == "stdio"
        assert (f"# or run: claude mcp add --scope project looma -- {sys.executable} -m "
                f"looma_git -C {repo} mcp") in out


def test_write_gemini_merges_into_existing_settings(repo: Path, scrubbed_env: Path) -> None:
    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    original = {"theme": "GitHub", "mcpServers": {"other": {"command": "x", "args": ["y"]},
                                                  "looma": {"command": "old", "timeout": 30000}},
                "telemetry": {"enabled": False}}
    settings.write_text(json.dumps(original, indent=4) + "\n")
    proc = looma(repo, "mcp", "config", "--client", "gemini-cli", "--write",
                 env=_env(scrubbed_env))
    assert f"--- {settings} (before)" in proc.stdout and f"+++ {settings} (after)" in proc.stdout
    assert re.search(r'^-\s+"command": "old",$', proc.stdout, re.M)
    data = json.loads(settings.read_text())
    assert data["theme"] == "GitHub" and data["telemetry"] == {"enabled": False}
    assert data["mcpServers"]["other"] == {"command": "x", "args": ["y"]}
    entry = data["mcpServers"]["looma"]
    _argv_ok([entry["command"], *entry["args"]], repo)
    assert entry["timeout"] == 30000  # the user's own addition to our entry survives
    assert settings.read_text().startswith('{\n    "theme"')  # their indentation is kept
    again = looma(repo, "mcp", "config", "--client", "gemini-cli", "--write",
                  env=_env(scrubbed_env))
    assert "already configured, unchanged" in again.stdout


def test_write_codex_toml_keeps_every_other_table(repo: Path, scrubbed_env: Path) -> None:
    codex_home = scrubbed_env / "codex-home"
    cfg = codex_home / "config.toml"
    codex_home.mkdir()
    original = ('# my codex config\nmodel = "o3"\napproval_policy = "on-request"\n\n'
                '[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "other-mcp"]\n\n'
                '[mcp_servers.looma]\ncommand = "stale"\nstartup_timeout_sec = 20\n\n'
                '[mcp_servers.looma.env]\nLOOMA_MCP_LOG = "info"\n\n'
                '[profiles.fast]\nmodel = "o4-mini"\n')
    cfg.write_text(original)
    proc = looma(repo, "mcp", "config", "--client", "codex", "--scope", "user", "--write",
                 env=_env(scrubbed_env, CODEX_HOME=str(codex_home)))
    assert '-command = "stale"' in proc.stdout
    after = cfg.read_text()
    assert after.startswith("# my codex config\n")  # comments and layout kept
    data = tomllib.loads(after)
    before = tomllib.loads(original)
    assert data["model"] == "o3" and data["profiles"] == before["profiles"]
    assert data["mcp_servers"]["other"] == before["mcp_servers"]["other"]
    entry = data["mcp_servers"]["looma"]
    # User scope: not pinned to this repository (each project is found from roots or cwd).
    assert [entry["command"], *entry["args"]] == [sys.executable, "-m", "looma_git", "mcp"]
    assert entry["startup_timeout_sec"] == 20 and entry["env"] == {"LOOMA_MCP_LOG": "info"}
    again = looma(repo, "mcp", "config", "--client", "codex", "--scope", "user", "--write",
                  env=_env(scrubbed_env, CODEX_HOME=str(codex_home)))
    assert "unchanged" in again.stdout and cfg.read_text() == after


def test_write_codex_creates_the_file(repo: Path, scrubbed_env: Path) -> None:
    looma(repo, "mcp", "config", "--client", "codex", "--write", env=_env(scrubbed_env))
    data = tomllib.loads((repo / ".codex" / "config.toml").read_text())
    _argv_ok([data["mcp_servers"]["looma"]["command"], *data["mcp_servers"]["looma"]["args"]],
             repo)


def test_write_project_clients(repo: Path, scrubbed_env: Path) -> None:
    (repo / "opencode.json").write_text(json.dumps(
        {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude",
         "mcp": {"other": {"type": "remote", "url": "https://x"}}}, indent=2) + "\n")
    for client in ("claude-code", "cursor", "opencode"):
        proc = looma(repo, "mcp", "config", "--client", client, "--write",
                     env=_env(scrubbed_env))
        assert "created" in proc.stdout or "updated" in proc.stdout
    mcp_json = json.loads((repo / ".mcp.json").read_text())
    assert mcp_json["mcpServers"]["looma"]["type"] == "stdio"
    cursor = json.loads((repo / ".cursor" / "mcp.json").read_text())
    _argv_ok([cursor["mcpServers"]["looma"]["command"], *cursor["mcpServers"]["looma"]["args"]],
             repo)
    oc = json.loads((repo / "opencode.json").read_text())
    assert oc["model"] == "anthropic/claude" and oc["mcp"]["other"]["url"] == "https://x"
    _argv_ok(oc["mcp"]["looma"]["command"], repo)


@pytest.mark.parametrize("content", ['{"mcpServers": {// comment\n}}', '["not", "an object"]',
                                     '{"mcpServers": []}'])
def test_write_refuses_to_clobber_unparseable_json(repo: Path, scrubbed_env: Path,
                                                   content: str) -> None:
    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    proc = looma(repo, "mcp", "config", "--client", "gemini-cli", "--write",
                 env=_env(scrubbed_env), check=False)
    assert proc.returncode == 5 and "not touching it" in proc.stderr
    assert settings.read_text() == content


def test_write_refuses_invalid_or_inline_toml(repo: Path, scrubbed_env: Path) -> None:
    cfg = repo / ".codex" / "config.toml"
    cfg.parent.mkdir()
    for content in ('model = "o3\n', 'mcp_servers = { looma = { command = "x" } }\n'):
        cfg.write_text(content)
        proc = looma(repo, "mcp", "config", "--client", "codex", "--write",
                     env=_env(scrubbed_env), check=False)
        assert proc.returncode == 5, proc.stderr
        assert cfg.read_text() == content


def test_toml_escaping_round_trips(tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird\\path ü'
    t = config.target("codex", python="/opt/py 3/bin/python", repo=odd, home=tmp_path,
                      scope="project")
    entry = tomllib.loads(config.snippet(t))["mcp_servers"]["looma"]
    assert entry["command"] == "/opt/py 3/bin/python"
    assert entry["args"] == ["-m", "looma_git", "-C", str(odd), "mcp"]


def test_unknown_client_is_a_usage_error(repo: Path) -> None:
    proc = looma(repo, "mcp", "config", "--client", "vim", check=False)
    assert proc.returncode == 2 and "vim" in proc.stderr


def test_vscode_and_windsurf(repo: Path, scrubbed_env: Path) -> None:
    looma(repo, "mcp", "config", "--client", "vscode", "--write", env=_env(scrubbed_env))
    vs = json.loads((repo / ".vscode" / "mcp.json").read_text())["servers"]["looma"]
    assert vs["type"] == "stdio"
    _argv_ok([vs["command"], *vs["args"]], repo)
    out = looma(repo, "mcp", "config", "--client", "windsurf", "--write",
                env=_env(scrubbed_env)).stdout
    assert "roots" in out
    ws = json.loads((scrubbed_env / ".codeium" / "windsurf" / "mcp_config.json").read_text())
    entry = ws["mcpServers"]["looma"]
    assert [entry["command"], *entry["args"]] == [sys.executable, "-m", "looma_git", "mcp"]
    bad = looma(repo, "mcp", "config", "--client", "windsurf", "--scope", "project",
                env=_env(scrubbed_env), check=False)
    assert bad.returncode == 2 and "--scope user" in bad.stderr


def test_two_repositories_do_not_overwrite_each_other(tmp_path: Path, scrubbed_env: Path) -> None:
    from tests.helpers import make_repo

    a, b = make_repo(tmp_path / "a"), make_repo(tmp_path / "b")
    for r in (a, b):
        looma(r, "mcp", "config", "--client", "gemini-cli", "--write", env=_env(scrubbed_env))
    for r in (a, b):
        entry = json.loads((r / ".gemini" / "settings.json").read_text())["mcpServers"]["looma"]
        _argv_ok([entry["command"], *entry["args"]], r)
    assert not (scrubbed_env / ".gemini" / "settings.json").exists()
