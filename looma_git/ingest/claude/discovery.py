"""Where Claude Code keeps transcripts: config dirs, project slugs, both subagent layouts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from looma_git.ingest.base import DiscoveryEnv, Skip, Source
from looma_git.ingest.names import CLAUDE_NOT_TRANSCRIPTS

AGENT = "claude-code"
_MAX_DEPTH = 6  # projects/<slug>/<sid>/subagents/workflows/<wf>/agent-x.jsonl


def project_roots(env: DiscoveryEnv) -> list[Path]:
    """The `projects` directories (or explicit override paths) to scan, deduplicated."""
    found: list[Path] = []
    overrides = env.overrides.get(AGENT)
    if overrides:
        for p in overrides:
            found.append(p / "projects" if (p / "projects").is_dir() else p)
    else:
        configured = env.environ.get("CLAUDE_CONFIG_DIR", "")
        dirs = [Path(d.strip()).expanduser() for d in configured.split(",") if d.strip()]
        if dirs:
            found += [d / "projects" for d in dirs]
        else:
            found.append(env.home / ".claude" / "projects")
            found.append(env.xdg("XDG_CONFIG_HOME", ".config") / "claude" / "projects")
    unique: list[Path] = []
    seen: set[str] = set()
    for p in found:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def discover(env: DiscoveryEnv, skips: list[Skip]) -> list[Source]:
    """Every transcript file under the project roots, sorted; unreadable places become skips."""
    sources: dict[str, Source] = {}
    for root in project_roots(env):
        try:
            st = root.stat()
        except FileNotFoundError:
            continue
        except OSError:
            skips.append(Skip("unreadable", str(root)))
            continue
        if stat.S_ISREG(st.st_mode):
            sources.setdefault(str(root), Source(AGENT, root, "jsonl"))
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        for path in _walk(root, skips):
            sources.setdefault(str(path), Source(AGENT, path, "jsonl"))
    return [sources[k] for k in sorted(sources)]


def _walk(root: Path, skips: list[Skip]) -> list[Path]:
    out: list[Path] = []
    base_depth = len(root.parts)

    def onerror(err: OSError) -> None:
        skips.append(Skip("unreadable", str(err.filename or root)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        depth = len(Path(dirpath).parts) - base_depth
        if depth >= _MAX_DEPTH:
            dirnames[:] = []
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".jsonl") or name in CLAUDE_NOT_TRANSCRIPTS:
                continue
            path = Path(dirpath) / name
            try:
                st = path.stat()
            except OSError:
                skips.append(Skip("unreadable", str(path)))  # dangling or looping symlink
                continue
            if not stat.S_ISREG(st.st_mode):
                skips.append(Skip("not_a_file", str(path)))  # a FIFO would block open()
                continue
            out.append(path)
        # Is this directory itself readable? os.walk reports listing errors via onerror.
    return out


def subagent_info(path: Path) -> tuple[str | None, str | None, dict[str, str]]:
    """(parent session id from the layout, agent id, .meta.json facts) for `agent-*.jsonl`.

    New layout `<sid>/subagents/[workflows/<wf>/]agent-<id>.jsonl` names the parent in the
    path; the legacy sibling layout carries it only in the records' `sessionId`.
    """
    stem = path.stem
    if not stem.startswith("agent-"):
        return None, None, {}
    agent_id = stem[len("agent-"):]
    parent: str | None = None
    parts = path.parts
    if "subagents" in parts:
        i = len(parts) - 1 - parts[::-1].index("subagents")
        if i >= 1:
            parent = parts[i - 1]
    meta: dict[str, str] = {}
    meta_path = path.with_name(stem + ".meta.json")
    try:
        if meta_path.is_file() and meta_path.stat().st_size < 65536:
            import json

            data = json.loads(meta_path.read_text(encoding="utf-8", errors="replace"))
            if isinstance(data, dict):
                for k in ("agentType", "description", "toolUseId"):
                    v = data.get(k)
                    if isinstance(v, str):
                        meta[k] = v[:500]
    except (OSError, ValueError, RecursionError):
        pass
    return parent, agent_id, meta
