"""The import rule: edges -> api -> core, never back; --help stays light."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "looma_git"
EDGES = ("looma_git.cli", "looma_git.mcp", "looma_git.hooks")
API = "looma_git.api"


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the rules below (read only)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> set[str]:
    tree = _tree(path)
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


# api/ is porcelain: it opens the repository, calls the core and returns a wire type. Tables
# and queries live in index/ (store.db), refs and the git runner in store/, caches and
# ranking in index/ and retrieval/; nothing in api/ finds its siblings by name.
API_FORBIDDEN = ("sqlite3", "dulwich", "subprocess", "importlib", "apsw")


def _all_imports(path: Path) -> set[str]:
    """Every module an import statement names, at any depth (a function's lazy import too),
    relative imports included by their last part."""
    tree = _tree(path)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "__import__":
            names.add("importlib")  # the same scaffolding by another name
    return names


def test_api_is_porcelain() -> None:
    bad = []
    for path in sorted((PKG / "api").rglob("*.py")):
        for name in _all_imports(path):
            root = name.split(".")[0]
            if root in API_FORBIDDEN:
                bad.append(f"{_module(path)} imports {name}")
    assert not bad, ("api/ must not touch sqlite3, dulwich, subprocess or importlib "
                     "(move it to index/, store/ or retrieval/):\n" + "\n".join(bad))


def test_the_link_step_api_opens_no_store() -> None:
    """api/linking.py calls the index layer's link step (index/link_step.py), which opens
    store.db; the api module itself does not (issue 20: api is porcelain)."""
    assert "looma_git.index.storedb" not in _all_imports(PKG / "api" / "linking.py")


def test_the_api_rule_catches_a_lazy_import(tmp_path: Path) -> None:
    """The rule reads imports inside functions too (api/ imports lazily for a light start)."""
    mod = tmp_path / "m.py"
    mod.write_text("def f():\n    import subprocess\n    from dulwich.objects import Tree\n")
    assert {"subprocess", "dulwich.objects"} <= _all_imports(mod)


def test_git_runs_only_through_the_runner() -> None:
    """Core modules start `git` through store/git.py (one runner); edges may print git's
    own output to the user (pager, completion, `ask` helpers)."""
    bad = []
    allowed = {"looma_git.store.git"}
    for path in sorted(PKG.rglob("*.py")):
        mod = _module(path)
        if mod in allowed or mod.startswith(EDGES[:1]):
            continue
        tree = _tree(path)
        if any(isinstance(n, ast.List | ast.Tuple) and n.elts
               and isinstance(n.elts[0], ast.Constant) and n.elts[0].value == "git"
               for n in ast.walk(tree)) and "subprocess" in _all_imports(path):
            bad.append(mod)
    assert not bad, "modules spawning git outside store/git.py: " + ", ".join(bad)


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
               if p.name != "__main__.py" and ast.get_docstring(_tree(p)) is None]
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
