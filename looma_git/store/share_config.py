"""Which remotes share looma's refs: the refspecs and `looma.*` keys in the repository config."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from looma_git.errors import NotFoundError, ReadOnlyError, UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.store import git
from looma_git.store.refnames import LEDGER_REF, NOTES_REF, tracking_ref

DEFAULT_CURATION_NAME = "looma-curation"
# `looma.share.<remote>` makes the remote name a git config variable name.
_VAR_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*\Z")


def fetch_refspecs(remote: str) -> list[str]:
    """Non-forced fetch refspecs, never into refs/notes/* (a forced one destroys local notes).

    The source side is a one-star pattern (`refs/looma/ledger*`) rather than the exact ref:
    git refuses the whole `git fetch` ("couldn't find remote ref") when an exact configured
    source is missing on the remote, which is the case until the first `looma sync`.
    """
    return [f"{LEDGER_REF}*:{tracking_ref(remote, 'ledger')}*",
            f"{NOTES_REF}*:{tracking_ref(remote, 'notes')}*"]


PUSH_REFSPECS = [f"{LEDGER_REF}:{LEDGER_REF}", f"{NOTES_REF}:{NOTES_REF}"]


@dataclass(frozen=True)
class ShareSettings:
    """Sharing as configured: enabled remotes and curation redirections."""

    enabled: tuple[str, ...] = ()
    curation: dict[str, str] = field(default_factory=dict)  # remote -> curation remote

    def targets_for(self, remote: str) -> list[str]:
        """The remotes looma's refs go to when the user pushes to `remote`."""
        out = []
        if remote in self.curation and self.curation[remote] in self.enabled:
            out.append(self.curation[remote])
        if remote in self.enabled and remote not in out:
            out.append(remote)
        return out


@dataclass(frozen=True)
class ShareChange:
    """What `enable`/`disable` changed in the config (key=value lines)."""

    remote: str
    url: str | None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


def _git_config(paths: RepoPaths, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    proc = git.config(None, *args, git_dir=paths.common_dir)
    if check and proc.returncode != 0:
        raise ReadOnlyError(f"git config {' '.join(args)} failed: {proc.stderr.strip()}",
                            hint="looma needs write access to the repository config")
    return proc


def _get_all(paths: RepoPaths, key: str) -> list[str]:
    return git.config_get_all(None, key, git_dir=paths.common_dir)


def check_remote_name(name: str) -> str:
    """A remote name usable as `looma.share.<name>` (git config variable syntax)."""
    if not _VAR_NAME.match(name):
        raise UsageError(f"remote name {name!r} cannot be shared by looma",
                         hint="use a remote whose name is letters, digits and '-' "
                              "(git remote rename OLD NEW)")
    return name


def remote_url(paths: RepoPaths, name: str) -> str | None:
    """`remote.<name>.url`, or None when no such remote is configured."""
    urls = _get_all(paths, f"remote.{name}.url")
    return urls[0] if urls else None


def resolve_url(paths: RepoPaths, url: str) -> str:
    """A relative local path is relative to the work tree (as git reads it), not to the cwd."""
    scp_like = ":" in url.split("/", 1)[0]
    if "://" in url or scp_like or url.startswith("/"):
        return url
    base = paths.worktree if paths.worktree is not None else paths.common_dir
    return str((base / url).resolve())


def read_settings(paths: RepoPaths) -> ShareSettings:
    """Every `looma.share.*=true` and `looma.curation.*` entry."""
    proc = _git_config(paths, "--get-regexp", r"^looma\.(share|curation)\.")
    enabled: list[str] = []
    curation: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        parts = key.split(".", 2)
        if len(parts) != 3:
            continue
        if parts[1] == "share" and value.strip().lower() in ("true", "yes", "on", "1"):
            enabled.append(parts[2])
        elif parts[1] == "curation" and value.strip():
            curation[parts[2]] = value.strip()
    return ShareSettings(tuple(sorted(set(enabled))), curation)


def _add(paths: RepoPaths, remote: str, key: str, value: str, added: list[str]) -> None:
    """Add key=value unless present, and remember it so disable removes exactly this."""
    if value in _get_all(paths, key):
        return
    _git_config(paths, "--add", key, value, check=True)
    _git_config(paths, "--add", f"looma.shareadded.{remote}", f"{key}={value}", check=True)
    added.append(f"{key}={value}")


def enable(paths: RepoPaths, remote: str = "origin", *, curation_url: str | None = None,
           curation_name: str | None = None, git_push: bool = False) -> ShareChange:
    """Configure `remote` (or a separate curation remote for it) to carry looma's refs.

    With `curation_url`, looma's refs go to a remote named `curation_name` (created with that
    URL if missing) and `remote` itself gets nothing. With `git_push`, plain `git push` also
    pushes looma's refs (the remote's push refspecs, plus `HEAD` if it had none, because any
    push refspec replaces git's default of pushing the current branch).
    """
    check_remote_name(remote)
    added: list[str] = []
    target = remote
    if curation_url is not None:
        target = check_remote_name(curation_name or DEFAULT_CURATION_NAME)
        if target == remote:
            raise UsageError("the curation remote must differ from the remote it replaces")
        existing = remote_url(paths, target)
        if existing is not None and existing != curation_url:
            raise UsageError(f"remote {target!r} already exists with URL {existing}",
                             hint="pass --curation-name NAME to use another remote name")
        if existing is None:
            _git_config(paths, f"remote.{target}.url", curation_url, check=True)
            _git_config(paths, f"looma.sharecreated.{target}", "true", check=True)
            added.append(f"remote.{target}.url={curation_url}")
        _git_config(paths, f"looma.curation.{remote}", target, check=True)
        added.append(f"looma.curation.{remote}={target}")
    url = remote_url(paths, target)
    if url is None:
        raise NotFoundError(f"no remote named {target!r}",
                            hint=f"git remote add {target} URL, or pass --curation-remote URL")
    for spec in fetch_refspecs(target):
        _add(paths, target, f"remote.{target}.fetch", spec, added)
    created = bool(_get_all(paths, f"looma.sharecreated.{target}"))
    if git_push or created:
        if not created and not _get_all(paths, f"remote.{target}.push"):
            _add(paths, target, f"remote.{target}.push", "HEAD", added)
        for spec in PUSH_REFSPECS:
            _add(paths, target, f"remote.{target}.push", spec, added)
    if target not in read_settings(paths).enabled:
        _git_config(paths, f"looma.share.{target}", "true", check=True)
        added.append(f"looma.share.{target}=true")
    return ShareChange(target, url, tuple(added))


def disable(paths: RepoPaths, remote: str = "origin") -> ShareChange:
    """Remove exactly what `enable` added for `remote` (and its curation remote, if any)."""
    check_remote_name(remote)
    removed: list[str] = []
    names = [remote]
    curation = _get_all(paths, f"looma.curation.{remote}")
    if curation:
        names.insert(0, curation[0])
        _git_config(paths, "--unset-all", f"looma.curation.{remote}", check=True)
        removed.append(f"looma.curation.{remote}={curation[0]}")
    url = None
    for name in names:
        url = url or remote_url(paths, name)
        for entry in _get_all(paths, f"looma.shareadded.{name}"):
            key, _, value = entry.partition("=")
            if value in _get_all(paths, key):
                _git_config(paths, "--fixed-value", "--unset", key, value, check=True)
                removed.append(entry)
        for key in (f"looma.shareadded.{name}", f"looma.share.{name}"):
            if _get_all(paths, key):
                values = _get_all(paths, key)
                _git_config(paths, "--unset-all", key, check=True)
                if key.startswith("looma.share."):
                    removed.append(f"{key}={values[0]}")
        if _get_all(paths, f"looma.sharecreated.{name}"):
            _git_config(paths, "--unset-all", f"looma.sharecreated.{name}", check=True)
            if _get_all(paths, f"remote.{name}.url"):
                removed.append(f"remote.{name}.url={remote_url(paths, name)}")
                _git_config(paths, "--remove-section", f"remote.{name}", check=True)
    if not removed:
        raise NotFoundError(f"sharing is not enabled for {remote!r}",
                            hint="see `looma share status`")
    return ShareChange(remote, url, removed=tuple(removed))
