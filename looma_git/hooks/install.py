"""Installing and uninstalling the shims: where, beside which hook manager, and exactly back.

Where a hook manager owns a hook file looma uses that manager's own chaining slot instead of
fighting it: pre-commit runs `<hook>.legacy`; lefthook runs nothing beside its own hooks, so
the shim goes to `<hook>.looma` and a lefthook job calls it; anything else (husky's stubs, a
hand-written hook) is moved to `<hook>.looma-chained` and run first by the shim.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from looma_git.errors import NotARepositoryError, ReadOnlyError, UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.hooks import managers, shims
from looma_git.store import git

_INSTALL_RECORD = "hooks-install.json"
# Where the shim goes when a hook manager owns the hook file.
_SLOTS = {"pre-commit": ".legacy", "lefthook": ".looma"}


@dataclass(frozen=True)
class HookInfo:
    """What is at one hook path right now."""

    name: str
    path: Path
    # "installed" | "outdated" (ours, other template/interpreter) | "foreign" | "absent"
    state: str
    chained: bool  # a foreign hook is kept aside as <name>.looma-chained
    python: str | None  # the interpreter our shim carries
    manager: str | None = None  # pre-commit | lefthook | husky: who owns the hook file
    shim_path: Path | None = None  # where our shim is (the hook path or a manager's slot)
    problem: str | None = None  # a broken state, with its fix


@dataclass(frozen=True)
class HookChange:
    """What install/uninstall did to one hook."""

    name: str
    path: Path
    action: str  # install: installed|updated|unchanged|chained|conflict; uninstall: removed|restored|absent|foreign|orphan
    detail: str = ""


def _git(cwd: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return git.run(cwd, *args, input=input)


def _cwd(paths: RepoPaths) -> Path:
    return paths.worktree or paths.git_dir


def hooks_dir(paths: RepoPaths) -> Path:
    """Where git looks for hooks: core.hooksPath if set, else the common dir's hooks/."""
    cwd = _cwd(paths)
    proc = _git(cwd, "rev-parse", "--git-path", "hooks")
    if proc.returncode != 0 or not proc.stdout.strip():
        raise NotARepositoryError(f"cannot locate the hooks directory of {cwd}: "
                                  f"{proc.stderr.strip()}")
    path = Path(proc.stdout.strip())
    return path if path.is_absolute() else (cwd / path)


def hooks_path_scope(paths: RepoPaths) -> str | None:
    """The config scope that sets the effective core.hooksPath (local, worktree, global,
    system, command), or None when it is not set."""
    proc = _git(_cwd(paths), "config", "--show-scope", "--get-all", "core.hooksPath")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        return None
    return lines[-1].split("\t", 1)[0].strip() or None


def _read(path: Path) -> bytes | None:
    try:
        return None if path.is_symlink() else path.read_bytes()
    except (OSError, ValueError):
        return None


def _slot(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _chained(path: Path) -> Path:
    return _slot(path, shims.CHAINED_SUFFIX)


def _ours(path: Path) -> bytes | None:
    """The content at `path` if it is one of our shims."""
    if not os.path.lexists(path):
        return None
    content = _read(path)
    return content if content is not None and shims.is_looma_shim(content) else None


def _shim_state(content: bytes) -> tuple[str, str | None]:
    text = content.decode("utf-8", "replace")
    python = shims.baked_python(text)
    current = python is not None and text == shims.render(python)
    return ("installed" if current else "outdated"), python


def inspect_hooks(paths: RepoPaths) -> list[HookInfo]:
    """The state of every looma hook path, including shims sitting in a manager's slot."""
    base = hooks_dir(paths)
    return [_inspect_one(paths, name, base / name) for name in shims.HOOK_NAMES]


def _inspect_one(paths: RepoPaths, name: str, path: Path) -> HookInfo:
    chained_path = _chained(path)
    chained = os.path.lexists(chained_path)
    if not os.path.lexists(path):
        problem = None
        if chained:
            problem = (f"{name}: {chained_path.name} is waiting but {name} itself is gone; "
                       f"rename it back (`mv {chained_path} {path}`) or remove it")
        return HookInfo(name, path, "absent", chained, None, problem=problem)
    content = _read(path)
    if content is not None and shims.is_looma_shim(content):
        state, python = _shim_state(content)
        problem = None
        if chained and managers.owner(_read(chained_path)) == "pre-commit":
            problem = (f"{name}: looma chains pre-commit's hook ({chained_path.name}), so "
                       "`pre-commit uninstall` would leave it running: run `looma hooks "
                       "install` to move looma into pre-commit's own .legacy slot")
        return HookInfo(name, path, state, chained, python, shim_path=path, problem=problem)
    manager = managers.owner(content)
    for via, slot in _SLOTS.items():
        shim = _ours(_slot(path, slot))
        if shim is not None and manager == via:
            state, python = _shim_state(shim)
            problem = None
            if via == "pre-commit" and name == "post-rewrite":
                problem = ("post-rewrite: pre-commit runs post-rewrite.legacy without git's "
                           "stdin, so rewrites are not recorded there (notes still follow "
                           "through notes.rewriteRef; `looma relink` re-attaches the links)")
            elif via == "lefthook" and not managers.lefthook_calls(paths.worktree, name):
                problem = (f"{name}: lefthook owns the hook and no lefthook job runs "
                           f"{_slot(path, slot).name}: {managers.LEFTHOOK_FIX}")
            return HookInfo(name, path, state, chained, python, manager=manager,
                            shim_path=_slot(path, slot), problem=problem)
    old = _slot(path, ".old")
    if _ours(old) is not None:
        return HookInfo(name, path, "foreign", chained, None, manager=manager, shim_path=old,
                        problem=(f"{name}: {manager or 'a hook manager'} moved looma's shim to "
                                 f"{old.name} and never runs it, so commits are not linked: "
                                 "run `looma hooks install`"
                                 + (f" ({managers.LEFTHOOK_FIX})" if manager == "lefthook"
                                    else "")))
    problem = None
    if chained:
        who = manager or "something"
        problem = (f"{name}: {who} rewrote {path.name} after looma installed (its previous "
                   f"hook is kept as {chained_path.name}), so looma's shim no longer runs: "
                   "run `looma hooks install`")
    return HookInfo(name, path, "foreign", chained, None, manager=manager, problem=problem)


def _write_shim(path: Path, text: str) -> None:
    # Write-then-rename so git never runs a half-written hook.
    tmp = path.with_name(f".{path.name}.looma-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def _readonly(action: str, path: Path, exc: OSError) -> ReadOnlyError:
    return ReadOnlyError(f"cannot {action} {path}: {exc.strerror or exc}",
                         hint="check the permissions of the hooks directory")


def _inside(child: Path, parent: Path) -> bool:
    try:
        child.resolve().relative_to(parent.resolve())
    except (ValueError, OSError):
        return False
    return True


def check_target(paths: RepoPaths, base: Path, *, global_ok: bool) -> None:
    """Refuse, before changing anything, to install where it would hurt: a bare repository,
    a global core.hooksPath (every repository on the machine) unless asked, and a hooks
    directory inside the work tree unless every file looma would write there is ignored."""
    if paths.worktree is None:
        raise UsageError(f"{paths.common_dir} is a bare repository: no commits are made here, "
                         "so there is nothing for looma's hooks to do; nothing was installed",
                         hint="install the hooks in a clone with a work tree")
    scope = hooks_path_scope(paths)
    if scope in ("global", "system") and not global_ok:
        raise UsageError(
            f"core.hooksPath is set in the {scope} git config ({base}): installing there would "
            "run looma's hooks in every repository on this machine; nothing was installed",
            hint="`looma hooks install --global` installs there anyway (the shims do nothing "
                 "in repositories where `looma init` has not run); or give this repository its "
                 "own: `git config core.hooksPath .git/hooks` (your global hooks then no longer "
                 "run here)")
    worktree = paths.worktree
    if not _inside(base, worktree) or _inside(base, paths.git_dir) \
            or _inside(base, paths.common_dir):
        return
    names = []
    for name in shims.HOOK_NAMES:
        for suffix in ("", shims.CHAINED_SUFFIX, ".legacy", ".looma"):
            names.append(os.path.relpath(base / (name + suffix), worktree))
    proc = _git(worktree, "check-ignore", "--stdin", "-z", input="\0".join(names) + "\0")
    ignored = {p for p in proc.stdout.split("\0") if p}
    exposed = [n for n in names if n not in ignored]
    if exposed:
        rel = os.path.relpath(base, worktree)
        raise UsageError(
            f"core.hooksPath points into the work tree ({rel}/), where looma's shims and the "
            f"moved team hooks would show in `git status` and could be committed (e.g. "
            f"{exposed[0]} is tracked or not ignored); nothing was installed",
            hint=f"keep the team's hooks in {rel}/ and call looma from them, or point "
                 "core.hooksPath of this clone elsewhere; see hooks/README.md")


def install(paths: RepoPaths, python: str, *, global_ok: bool = False) -> list[HookChange]:
    """Install every shim (idempotent) beside whatever hook manager owns each hook."""
    base = hooks_dir(paths)
    check_target(paths, base, global_ok=global_ok)
    created = False
    if not base.is_dir():
        try:
            base.mkdir(parents=True)
        except OSError as exc:
            raise _readonly("create", base, exc) from exc
        created = True
    changes = []
    text = shims.render(python)
    for name in shims.HOOK_NAMES:
        path = base / name
        try:
            changes.append(_install_one(name, path, text))
        except OSError as exc:
            raise _readonly("install", path, exc) from exc
    if created:
        _record_created_dir(paths, base)
    return changes


def _put(path: Path, text: str) -> str:
    """Write our shim at `path`: installed | updated | unchanged."""
    current = _ours(path)
    if current == text.encode("utf-8"):
        return "unchanged"
    _write_shim(path, text)
    return "updated" if current is not None else "installed"


def _install_one(name: str, path: Path, text: str) -> HookChange:
    chained = _chained(path)
    content = _read(path) if os.path.lexists(path) else None
    if content is not None and shims.is_looma_shim(content):
        chained_owner = managers.owner(_read(chained)) if os.path.lexists(chained) else None
        if chained_owner in _SLOTS:
            # Migrate: the manager's hook back in place, looma into the manager's slot, so
            # `pre-commit uninstall` puts looma back instead of leaving pre-commit running and
            # a lefthook re-sync has nothing of ours to move to .old.
            slot = _slot(path, _SLOTS[chained_owner])
            if not os.path.lexists(slot):
                os.replace(chained, path)
                _write_shim(slot, text)
                return HookChange(name, path, "chained",
                                  f"moved into {chained_owner}'s {slot.name} slot")
        return HookChange(name, path, _put(path, text))
    manager = managers.owner(content)
    old = _slot(path, ".old")
    if manager is not None and _ours(old) is not None:
        old.unlink()  # a manager moved our shim aside: it is re-placed below
    if manager == "pre-commit":
        legacy = _slot(path, ".legacy")
        if os.path.lexists(legacy) and _ours(legacy) is None:
            if os.path.lexists(chained):
                return HookChange(name, path, "conflict",
                                  f"{legacy.name} and {chained.name} both exist")
            os.replace(legacy, chained)  # pre-commit's previous hook: the shim runs it first
        action = _put(legacy, text)
        return HookChange(name, path, action, f"run by pre-commit as {legacy.name}")
    if manager == "lefthook":
        slot = _slot(path, ".looma")
        action = _put(slot, text)
        return HookChange(name, path, action,
                          f"lefthook owns {name}; {managers.LEFTHOOK_FIX}")
    if content is not None or os.path.lexists(path):
        if os.path.lexists(chained):
            if content is not None and content == _read(chained):
                os.unlink(chained)  # the same hook written again (husky's install): re-chain
            else:
                return HookChange(name, path, "conflict",
                                  f"{path} is a foreign hook and {chained.name} already exists; "
                                  "move one of them away and install again")
        os.replace(path, chained)  # rename keeps bytes, mode and owner exactly
        _write_shim(path, text)
        return HookChange(name, path, "chained", f"foreign hook kept as {chained.name}")
    _write_shim(path, text)
    return HookChange(name, path, "installed")


def uninstall(paths: RepoPaths) -> list[HookChange]:
    """Remove our shims wherever they are and put every chained hook back exactly."""
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
    if _ours(path) is not None:
        if os.path.lexists(chained):
            os.replace(chained, path)
            return HookChange(name, path, "restored")
        path.unlink()
        return HookChange(name, path, "removed")
    removed = []
    for suffix in (".legacy", ".looma", ".old"):
        slot = _slot(path, suffix)
        if _ours(slot) is not None:
            slot.unlink()
            removed.append(slot.name)
    current = _read(path) if os.path.lexists(path) else None
    if os.path.lexists(chained):
        legacy = _slot(path, ".legacy")
        if ".legacy" in [s[len(name):] for s in removed] and not os.path.lexists(legacy):
            os.replace(chained, legacy)  # pre-commit's chain goes back to the hook we chained
            return HookChange(name, path, "restored", f"{legacy.name} is the previous hook again")
        if current is not None and current == _read(chained):
            chained.unlink()  # a copy of what is there now (husky or lefthook wrote it again)
            return HookChange(name, path, "removed", f"dropped {chained.name}, a duplicate")
        # Someone replaced our shim since install; putting the old hook back would clobber theirs.
        return HookChange(name, path, "orphan",
                          f"{chained.name} left in place: {path.name} is no longer looma's")
    if removed:
        return HookChange(name, path, "removed", ", ".join(removed))
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
