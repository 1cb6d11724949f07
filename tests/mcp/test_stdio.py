"""One real stdio round trip: `python -m looma_git -C <repo> mcp` as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio

from tests.helpers import looma
from tests.mcp.conftest import Seeded


def test_stdio_round_trip(seeded: Seeded) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.types import Implementation

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "looma_git", "-C", str(seeded.path), "mcp"],
                                   env=dict(os.environ), cwd=str(Path.cwd()))
    seen: dict[str, object] = {}

    async def main() -> None:
        async with Client(params, client_info=Implementation(name="codex", version="0.1"),
                          read_timeout_seconds=120) as c:
            seen["tools"] = sorted(t.name for t in (await c.list_tools()).tools)
            seen["work"] = await c.call_tool("list_work", {})
            seen["fix"] = await c.call_tool("correct", {"action": "rename",
                                                        "refs": [seeded.docs],
                                                        "title": "Public API docs"})

    anyio.run(main)
    assert seen["tools"] == ["ask", "correct", "list_work", "recall", "resume_work", "timeline"]
    work = seen["work"]
    assert not work.is_error and work.structured_content["count"] == 3  # type: ignore[attr-defined]
    fix = seen["fix"]
    assert fix.structured_content["actor"] == "codex"  # type: ignore[attr-defined]
    author = subprocess.run(["git", "log", "-1", "--format=%an", "refs/looma/ledger"],
                            cwd=seeded.path, capture_output=True, text=True).stdout.strip()
    assert author == "codex"


def test_serve_subcommand_and_missing_extra(repo: Path) -> None:
    # `looma mcp serve` with stdin closed: the server starts, sees EOF and exits cleanly.
    proc = looma(repo, "mcp", "serve", input="", check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # stdout belongs to the protocol
    # The server needs no SDK: it serves with the `mcp` package unimportable.
    code = ("import sys; sys.modules['mcp'] = None\n"
            "from looma_git.cli.main import main; main(['mcp'])")
    init = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n')
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True, timeout=120, input=init)
    assert proc.returncode == 0, proc.stderr
    assert '"protocolVersion":"2025-11-25"' in proc.stdout and "Traceback" not in proc.stderr


def test_help_does_not_import_the_sdk(repo: Path) -> None:
    code = ("import sys\nfrom looma_git.cli.main import main\n"
            "try:\n    main(['mcp', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('mcp-imported' if 'mcp' in sys.modules else 'lazy')")
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True, timeout=120)
    assert proc.stdout.strip().endswith("lazy"), proc.stdout + proc.stderr
    assert "config" in proc.stdout and "serve" in proc.stdout
