"""The import rule: edges -> api -> core, never back; --help stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "looma_git"
EDGES = ("looma_git.cli", "looma_git.mcp", "looma_git.hooks")
API = "looma_git.api"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _module(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    return ".".join(rel.parts).removesuffix(".__init__")


def test_core_never_imports_api_or_edges() -> None:
    bad = []
    for path in PKG.rglob("*.py"):
        mod = _module(path)
        if mod.startswith((*EDGES, API)) or mod in ("looma_git.__main__",):
            continue
        for name in _imports(path):
            if name.startswith((*EDGES, API)):
                bad.append(f"{mod} imports {name}")
    assert not bad, "core modules must not import api or edges:\n" + "\n".join(bad)


def test_api_never_imports_edges() -> None:
    bad = []
    for path in (PKG / "api").rglob("*.py"):
        for name in _imports(path):
            if name.startswith(("looma_git.cli", "looma_git.mcp")):
                bad.append(f"{_module(path)} imports {name}")
    assert not bad, "\n".join(bad)


def test_help_imports_no_heavy_module() -> None:
    code = (
        "import sys\n"
        "from looma_git.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('tantivy', 'onnxruntime', 'mcp', 'apsw', 'sqlite_vec', 'numpy',"
        " 'tokenizers') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "HEAVY=\n" in out or out.strip().endswith("HEAVY="), out


def test_every_module_opens_with_a_docstring() -> None:
    missing = [str(p.relative_to(PKG.parent)) for p in PKG.rglob("*.py")
               if p.name != "__main__.py" and ast.get_docstring(ast.parse(p.read_text())) is None]
    assert not missing, "modules without a one-line docstring: " + ", ".join(missing)


def test_help_lists_every_command() -> None:
    from looma_git.cli.main import COMMANDS

    proc = subprocess.run([sys.executable, "-m", "looma_git", "--help"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    for name in COMMANDS:
        if name == "hook":  # the internal hook runner is hidden
            continue
        assert name in proc.stdout


def test_help_lists_commands_without_importing_them() -> None:
    """`looma --help` takes each command's summary from cli.main.SHORT_HELP: they must be the
    commands' own first sentences, and no command module is imported to print them."""
    import click

    from looma_git.cli.main import COMMANDS, SHORT_HELP, cli

    ctx = click.Context(cli, info_name="looma")
    for name in COMMANDS:
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        if cmd.hidden:
            assert name not in SHORT_HELP
        else:
            assert SHORT_HELP.get(name) == cmd.get_short_help_str(limit=300), name
    code = ("import sys\nfrom looma_git.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in sys.modules if m.startswith('looma_git.cli.') and "
            "m.endswith('_cmd')] + [m for m in sys.modules if m.startswith('pydantic')])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout
