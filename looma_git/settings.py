"""Typed settings from git config and the environment; only edges call `load_settings`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from looma_git.errors import UsageError
from looma_git.gitrepo import RepoPaths
from looma_git.store import git

DEFAULT_LLM_TIMEOUT = 20.0
MAX_LLM_TIMEOUT = 300.0


@dataclass(frozen=True)
class LLMSettings:
    """An OpenAI-compatible endpoint for the optional LLM extractor."""

    url: str  # base URL; requests go to `{url}/chat/completions`
    model: str
    timeout: float = DEFAULT_LLM_TIMEOUT
    api_key_env: str | None = None  # the NAME of the variable, as configured
    api_key: str | None = field(default=None, repr=False)  # its value, resolved by the edge

    @property
    def endpoint(self) -> str:
        return self.url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class Settings:
    """Everything looma reads from `looma.*` git config (plus the env variables it names)."""

    llm: LLMSettings | None = None


def read_git_config(paths: RepoPaths) -> dict[str, str]:
    """All `looma.*` keys (lower-cased names as git prints them; the last value wins)."""
    cwd = paths.worktree or paths.git_dir
    try:
        proc = git.run_bytes(cwd, "config", "-z", "--get-regexp", r"^looma\.")
    except OSError:
        return {}
    if proc.returncode != 0:  # 1: no such keys
        return {}
    out: dict[str, str] = {}
    for record in proc.stdout.decode("utf-8", "replace").split("\0"):
        if not record:
            continue
        key, _, value = record.partition("\n")
        out[key.lower()] = value
    return out


def llm_settings(config: Mapping[str, str], environ: Mapping[str, str]) -> LLMSettings | None:
    """`looma.llm.*` validated; None when `looma.llm.url` is unset or empty (the default)."""
    url = config.get("looma.llm.url", "").strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"looma.llm.url must be an http(s) URL, got {url!r}",
                         hint="e.g. git config looma.llm.url http://127.0.0.1:8080/v1")
    model = config.get("looma.llm.model", "").strip()
    if not model:
        raise UsageError("looma.llm.url is set but looma.llm.model is not",
                         hint="git config looma.llm.model <model name> (or unset looma.llm.url)")
    raw_timeout = config.get("looma.llm.timeout", "").strip()
    timeout = DEFAULT_LLM_TIMEOUT
    if raw_timeout:
        try:
            timeout = float(raw_timeout)
        except ValueError:
            timeout = -1.0
        if not 0 < timeout <= MAX_LLM_TIMEOUT:
            raise UsageError(f"looma.llm.timeout must be seconds in (0, {MAX_LLM_TIMEOUT:g}], "
                             f"got {raw_timeout!r}")
    key_env = config.get("looma.llm.apikeyenv", "").strip() or None
    key = None
    if key_env:
        key = environ.get(key_env) or None
        if key is None:
            raise UsageError(f"looma.llm.apiKeyEnv names {key_env}, which is not set",
                             hint=f"export {key_env}=... or unset looma.llm.apiKeyEnv")
    return LLMSettings(url=url, model=model, timeout=timeout, api_key_env=key_env, api_key=key)


def load_settings(paths: RepoPaths, environ: Mapping[str, str]) -> Settings:
    """Settings for this repository; raises UsageError for a present but invalid value."""
    config = read_git_config(paths)
    return Settings(llm=llm_settings(config, environ))
