"""Installing and uninstalling the shims: hooks dir lookup, chaining foreign hooks, restoring."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from looma_git.errors import NotARepositoryError, ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.hooks import shims

_INSTALL_RECORD = "hooks-install.json"


@dataclass(frozen=True)
class HookInfo:
    """What is at one hook path right now."""

    name: str
    path: Path
    state: str  # "installed" | "outdated" (ours, other template/interpreter) | "foreign" | "absent"
    chained: bool  # a foreign hook is kept aside as <name>.looma-chained
    python: str | None  # the interpreter our shim carries


@dataclass(frozen=True)
class HookChange:
    """What install/uninstall did to one hook."""

    name: str
    path: Path
    action: str  # install: installed|updated|unchanged|chained|conflict; uninstall: removed|restored|absent|foreign|orphan
    detail: str = ""


def hooks_dir(paths: RepoPaths) -> Path:
    """Where git looks for hooks: core.hooksPath if set, else the common dir's hooks/."""
    cwd = paths.worktree or paths.git_dir
    proc = subprocess.run(["git", "rev-parse", "--git-path", "hooks"], cwd=cwd,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise NotARepositoryError(f"cannot locate the hooks directory of {cwd}: "
                                  f"{proc.stderr.strip()}")
    path = Path(proc.stdout.strip())
    return path if path.is_absolute() else (cwd / path)


def _read(path: Path) -> bytes | None:
    try:
        return None if path.is_symlink() else path.read_bytes()
    except (OSError, ValueError):
        return None


def inspect_hooks(paths: RepoPaths) -> list[HookInfo]:
    """The state of every looma hook path."""
    base = hooks_dir(paths)
    out = []
    for name in shims.HOOK_NAMES:
        path = base / name
        chained = os.path.lexists(_chained(path))
        if not os.path.lexists(path):
            out.append(HookInfo(name, path, "absent", chained, None))
            continue
        content = _read(path)
        if content is None or not shims.is_looma_shim(content):
            out.append(HookInfo(name, path, "foreign", chained, None))
            continue
        text = content.decode("utf-8", "replace")
        python = shims.baked_python(text)
        current = python is not None and text == shims.render(name, python)
        out.append(HookInfo(name, path, "installed" if current else "outdated", chained, python))
    return out


def _chained(path: Path) -> Path:
    return path.with_name(path.name + shims.CHAINED_SUFFIX)


def _write_shim(path: Path, text: str) -> None:
    # Write-then-rename so git never runs a half-written hook.
    tmp = path.with_name(f".{path.name}.looma-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def _readonly(action: str, path: Path, exc: OSError) -> ReadOnlyError:
    return ReadOnlyError(f"cannot {action} {path}: {exc.strerror or exc}",
                         hint="check the permissions of the hooks directory")


def install(paths: RepoPaths, python: str) -> list[HookChange]:
    """Install every shim (idempotent); a foreign hook is moved aside and chained."""
    base = hooks_dir(paths)
    created = False
    if not base.is_dir():
        try:
            base.mkdir(parents=True)
        except OSError as exc:
            raise _readonly("create", base, exc) from exc
        created = True
    changes = []
    for name in shims.HOOK_NAMES:
        path = base / name
        try:
            changes.append(_install_one(name, path, python))
        except OSError as exc:
            raise _readonly("install", path, exc) from exc
    if created:
        _record_created_dir(paths, base)
    return changes


def _install_one(name: str, path: Path, python: str) -> HookChange:
    text = shims.render(name, python)
    chained = _chained(path)
    if os.path.lexists(path):
        content = _read(path)
        if content is not None and shims.is_looma_shim(content):
            if content == text.encode("utf-8"):
                return HookChange(name, path, "unchanged")
            _write_shim(path, text)
            return HookChange(name, path, "updated")
        if os.path.lexists(chained) and (content is None or content != _read(chained)):
            return HookChange(name, path, "conflict",
                              f"{path} is a foreign hook and {chained.name} already exists; "
                              "move one of them away and install again")
        os.replace(path, chained)  # rename keeps bytes, mode and owner exactly
        _write_shim(path, text)
        return HookChange(name, path, "chained", f"foreign hook kept as {chained.name}")
    _write_shim(path, text)
    return HookChange(name, path, "installed")


def uninstall(paths: RepoPaths) -> list[HookChange]:
    """Remove our shims and put every chained foreign hook back exactly as it was."""
    base = hooks_dir(paths)
    changes = []
    for name in shims.HOOK_NAMES:
        path = base / name
        try:
            changes.append(_uninstall_one(name, path))
        except OSError as exc:
            raise _readonly("uninstall", path, exc) from exc
    _remove_created_dir(paths, base)
    return changes


def _uninstall_one(name: str, path: Path) -> HookChange:
    chained = _chained(path)
    content = _read(path) if os.path.lexists(path) else None
    if content is not None and shims.is_looma_shim(content):
        if os.path.lexists(chained):
            os.replace(chained, path)
            return HookChange(name, path, "restored")
        path.unlink()
        return HookChange(name, path, "removed")
    if os.path.lexists(chained):
        # Someone replaced our shim since install; putting the old hook back would clobber theirs.
        return HookChange(name, path, "orphan",
                          f"{chained.name} left in place: {path.name} is no longer looma's")
    return HookChange(name, path, "foreign" if os.path.lexists(path) else "absent")


def _record_created_dir(paths: RepoPaths, base: Path) -> None:
    # Best effort: uninstall removes a hooks dir it created only if this record says so.
    with contextlib.suppress(OSError):
        paths.state_dir.mkdir(parents=True, exist_ok=True)
        (paths.state_dir / _INSTALL_RECORD).write_text(json.dumps({"created_dir": str(base)}))


def _remove_created_dir(paths: RepoPaths, base: Path) -> None:
    record = paths.state_dir / _INSTALL_RECORD
    try:
        created = json.loads(record.read_text()).get("created_dir")
    except (OSError, ValueError, AttributeError):
        return
    if created == str(base):
        with contextlib.suppress(OSError):
            base.rmdir()  # only succeeds when empty: never removes anything of the user's
    with contextlib.suppress(OSError):
        record.unlink()
