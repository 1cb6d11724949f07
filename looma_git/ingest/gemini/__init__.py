"""The Gemini CLI adapter: discovers ~/.gemini/tmp/<id>/chats sessions and replays them."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from looma_git.ingest.agent_text import as_dict, as_str, complete_end, raw_json, utc_z
from looma_git.ingest.base import (
    Cursor,
    DiscoveryEnv,
    ReadResult,
    Skip,
    Source,
    event_id,
    head_fingerprint,
    resume_point,
)
from looma_git.ingest.gemini.records import AGENT
from looma_git.ingest.gemini.replay import GeminiReplay, SessionInfo
from looma_git.ingest.jsonl import iter_jsonl
from looma_git.model import NormalizedEvent

HASH_DIR_RE = re.compile(r"^[0-9a-f]{64}$")
MAX_JSON_BYTES = 256 * 1024 * 1024


def gemini_project_hash(root: str | Path) -> str:
    """Gemini's project hash: sha256 hex of the absolute project root path string.

    Legacy (< v0.29) `~/.gemini/tmp/<id>` directories are named by it and every record carries
    it as `projectHash`; attribution can test a candidate root by comparing hashes.
    """
    return hashlib.sha256(str(root).encode("utf-8")).hexdigest()


def _load_json(path: Path) -> Any:
    try:
        if path.stat().st_size > 16 * 1024 * 1024:
            return None
        return json.loads(path.read_text("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return None


def resolve_project_root(project_dir: Path) -> str | None:
    """The project root of `~/.gemini/tmp/<id>`: `.project_root` marker, `projects.json`
    registry, or (legacy hash dirs) a registered/trusted path whose sha256 matches."""
    try:
        marker = (project_dir / ".project_root").read_text("utf-8").strip()
        if marker:
            return marker
    except (OSError, UnicodeDecodeError):
        pass
    dir_id = project_dir.name
    gemini_root = project_dir.parent.parent
    candidates: list[str] = []
    projects = as_dict(as_dict(_load_json(gemini_root / "projects.json")).get("projects"))
    for root, slug in projects.items():
        if slug == dir_id:
            return root
        candidates.append(root)
    if HASH_DIR_RE.match(dir_id):
        candidates.extend(as_dict(_load_json(gemini_root / "trustedFolders.json")))
        for root in candidates:
            if isinstance(root, str) and gemini_project_hash(root) == dir_id:
                return root
    return None


def _session_info(path: Path) -> SessionInfo:
    """Session id fallback and project from where a chat file sits."""
    name = path.name
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    chats = next((p for p in path.parents if p.name == "chats"), None)
    project_dir = chats.parent if chats else path.parent
    parent = path.parent.name if chats is not None and path.parent != chats else None
    if project_dir.parent.name != "tmp":
        return SessionInfo(name, parent_id=parent)
    return SessionInfo(name, resolve_project_root(project_dir), project_dir.name, parent)


class GeminiAdapter:
    """Gemini CLI chats: legacy whole-file JSON (<= v0.38) and append-only JSONL (>= v0.39)."""

    name = AGENT

    # -- discovery ---------------------------------------------------------------------------
    def discover(self, env: DiscoveryEnv) -> list[Source]:
        """Chat files under ~/.gemini/tmp/*/chats (subagent chats included); `logs.json` only
        for project dirs that have no chats (prompt logs predate chat recording)."""
        found: list[Path] = []
        try:
            overrides = env.overrides.get(AGENT)
            roots = list(overrides) if overrides else [env.home / ".gemini"]
            for root in roots:
                found.extend(self._scan(root))
        except OSError:
            pass
        return [Source(AGENT, p, "jsonl" if p.suffix == ".jsonl" else "json")
                for p in sorted(dict.fromkeys(found))]

    def _scan(self, root: Path) -> list[Path]:
        if root.is_file():
            return [root]
        if not root.is_dir():
            return []
        if (root / "tmp").is_dir():
            project_dirs = [p for p in (root / "tmp").iterdir() if p.is_dir()]
        elif (root / "chats").is_dir():
            project_dirs = [root]
        else:
            project_dirs = [p for p in root.iterdir() if (p / "chats").is_dir()]
        found: list[Path] = []
        for project in sorted(project_dirs):
            chats = project / "chats"
            files = [p for p in chats.glob("session-*.json*") if p.suffix in (".json", ".jsonl")]
            files += list(chats.glob("*/*.jsonl"))  # subagent chats: chats/<parent>/<id>.jsonl
            names = {p.name for p in files}
            # A resumed legacy session is migrated to `<name>.jsonl`; the twin adds nothing.
            files = [p for p in files if not (p.suffix == ".json" and p.name + "l" in names)]
            if not files and (project / "logs.json").is_file():
                files = [project / "logs.json"]
            found.extend(p for p in files if p.is_file())
        return found

    # -- reading -----------------------------------------------------------------------------
    def read(self, source: Source, cursor: Cursor | None) -> ReadResult:
        """New or changed messages since `cursor`; never raises on bad data."""
        path = source.path
        try:
            if path.suffix == ".jsonl":
                return self._read_jsonl(path, cursor)
            return self._read_json(path, cursor)
        except OSError as exc:
            return ReadResult([], cursor or Cursor(), [Skip("unreadable", f"{path} ({exc})")])

    def _read_jsonl(self, path: Path, cursor: Cursor | None) -> ReadResult:
        size = path.stat().st_size
        start, state, notes = resume_point(path, cursor)
        if cursor and start and start == size:
            return ReadResult([], cursor)
        replay = GeminiReplay.load(_session_info(path), state)
        skips: list[Skip] = []
        end = start
        for line in iter_jsonl(path, start, skips):
            end = line.end
            obj = line.obj
            rewind = obj.get("$rewindTo")
            if isinstance(rewind, str):
                replay.rewind(rewind, line.end)
            elif isinstance(obj.get("id"), str):
                replay.message(obj, line.end, obj["id"])
            elif isinstance(obj.get("$set"), dict):
                replay.set_meta(obj["$set"], line.end)
            elif isinstance(obj.get("sessionId"), str):
                replay.set_meta(obj, line.end)
            else:
                skips.append(Skip("unknown_type", f"{path}:{line.lineno}"))
        end = complete_end(path, end, size)
        events = replay.finish()
        new_cursor = Cursor(offset=end, head_fp=head_fingerprint(path, end),
                            state=replay.to_state())
        return ReadResult(events, new_cursor, skips, replay.noise, notes)

    def _read_json(self, path: Path, cursor: Cursor | None) -> ReadResult:
        """A legacy chat (rewritten in place) or a logs.json prompt log, by content hash."""
        if path.stat().st_size > MAX_JSON_BYTES:
            return ReadResult([], cursor or Cursor(), [Skip("too_large", str(path))])
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if cursor and cursor.content_hash == digest:
            return ReadResult([], cursor)
        try:
            doc = json.loads(data.decode("utf-8", "replace"))
        except RecursionError:
            return ReadResult([], Cursor(content_hash=digest), [Skip("too_deep", str(path))])
        except ValueError:
            # Mid-rewrite or torn: keep the old cursor so the next read tries again.
            return ReadResult([], cursor or Cursor(), [Skip("bad_json", str(path))])
        info = _session_info(path)
        if isinstance(doc, list):
            return self._read_prompt_log(path, doc, digest, info)
        if not isinstance(doc, dict):
            return ReadResult([], Cursor(content_hash=digest), [Skip("not_object", str(path))])
        replay = GeminiReplay.load(info, cursor.state if cursor else "")
        skips: list[Skip] = []
        old = list(replay.entries.items())
        replay.entries.clear()
        known = dict(old)
        replay.set_meta({k: v for k, v in doc.items() if k != "messages"}, 0)
        messages = doc.get("messages")
        if not isinstance(messages, list):
            skips.append(Skip("unknown_type", f"{path}#messages"))
            messages = []
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict):
                skips.append(Skip("not_object", f"{path}#messages[{i}]"))
                continue
            msg_id = as_str(msg.get("id")) or f"#{i}"
            prior = known.pop(msg_id, None)
            replay.message(msg, prior.seq if prior else i + 1, msg_id)
            if prior:
                replay.entries[msg_id].evid = prior.evid
        withdrawn = [e.evid for e in known.values() if e.evid]
        if known:
            replay.noise["rewound"] = len(known)
        if withdrawn:
            replay.retracted.append((len(messages) + 1, "(rewrite)", withdrawn))
        events = replay.finish()
        return ReadResult(events, Cursor(content_hash=digest, state=replay.to_state()), skips,
                          replay.noise)

    def _read_prompt_log(self, path: Path, doc: list[Any], digest: str,
                         info: SessionInfo) -> ReadResult:
        """`tmp/<id>/logs.json`: user prompts only (what old versions kept before chats)."""
        events: list[NormalizedEvent] = []
        skips: list[Skip] = []
        facts = (("project_dir", info.dir_id),) if info.dir_id else ()
        for i, rec in enumerate(doc):
            if not isinstance(rec, dict):
                skips.append(Skip("not_object", f"{path}[{i}]"))
                continue
            text = as_str(rec.get("message"))
            sid = as_str(rec.get("sessionId"))
            if not text or not sid or rec.get("type") != "user":
                skips.append(Skip("unknown_type", f"{path}[{i}]"))
                continue
            msg_id = rec.get("messageId")
            seq = msg_id if isinstance(msg_id, int) and not isinstance(msg_id, bool) else i
            events.append(NormalizedEvent(
                event_id=event_id(AGENT, sid, "log", rec), source=AGENT, session_native_id=sid,
                project_root=info.project_root, git_remote=None, git_branch=None, seq=seq,
                ts=utc_z(rec.get("timestamp")), role="user", agent_model=None, text=text,
                raw_json=raw_json(rec), extra=(*facts, ("from", "logs.json"))))
        return ReadResult(events, Cursor(content_hash=digest), skips)
