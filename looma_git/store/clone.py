"""This clone's identity: its random clone id and the git user who acts through it."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from looma_git.errors import NotInitializedError, ReadOnlyError
from looma_git.gitrepo import RepoPaths
from looma_git.ledger.ops import Actor

SYSTEM_ACTOR = Actor(kind="system", name="looma", email="looma@localhost")


def clone_id_path(paths: RepoPaths) -> Path:
    return paths.state_dir / "clone-id"


def read_clone_id(paths: RepoPaths) -> str:
    """The clone id written by `looma init`; NotInitializedError without it."""
    try:
        value = clone_id_path(paths).read_text().strip()
    except FileNotFoundError:
        raise NotInitializedError("looma is not initialized in this clone",
                                  hint="run `looma init`") from None
    if not value.startswith("c_") or len(value) != 18:
        raise NotInitializedError(f"{clone_id_path(paths)} is corrupt",
                                  hint=f"remove it and run `looma init`: rm {clone_id_path(paths)}")
    return value


def ensure_clone_id(paths: RepoPaths) -> tuple[str, bool]:
    """Create the state dir and clone id if missing; returns (id, created)."""
    path = clone_id_path(paths)
    if path.exists():
        return read_clone_id(paths), False
    value = "c_" + secrets.token_hex(8)
    try:
        paths.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(value + "\n")
        try:
            os.link(tmp, path)  # atomic create-if-absent: a racing init keeps the first id
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    except PermissionError as exc:
        raise ReadOnlyError(f"cannot create {path}: {exc.strerror}",
                            hint="looma needs write access to the .git directory") from exc
    except OSError as exc:
        raise ReadOnlyError(f"cannot create {path}: {exc.strerror}") from exc
    return read_clone_id(paths), True


def user_actor(paths: RepoPaths) -> Actor:
    """The git identity (user.name / user.email) from the repository's config stack."""
    from dulwich.config import StackedConfig
    from dulwich.repo import Repo

    name = email = None
    repo = Repo(str(paths.common_dir))
    try:
        cfg: StackedConfig = repo.get_config_stack()
        for key in ("name", "email"):
            try:
                raw = cfg.get((b"user",), key.encode())
            except KeyError:
                continue
            if key == "name":
                name = raw.decode("utf-8", "replace")
            else:
                email = raw.decode("utf-8", "replace")
    finally:
        repo.close()
    return Actor(kind="user", name=name or "unknown", email=email or "unknown@localhost")
