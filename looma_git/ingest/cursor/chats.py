"""The `cursor-agent` CLI chat store: `~/.cursor/chats/<md5(cwd)>/<uuid>/{meta.json,store.db}`."""

from __future__ import annotations

import binascii
import json
from pathlib import Path
from typing import Any

from looma_git.ingest.base import Cursor, ReadResult, Skip
from looma_git.ingest.cursor.transcripts import Origin, content_event
from looma_git.ingest.ide_common import (
    dump_state,
    is_file,
    iso_from_any,
    load_state,
    read_json_file,
)
from looma_git.ingest.sqlite_ro import ReadOnlyDb, bytes_to_text, file_signature, load_json_object


def chat_meta(db: ReadOnlyDb) -> dict[str, Any]:
    """The store's `meta` row "0": hex-encoded JSON (agentId, name, createdAt, lastUsedModel)."""
    if not db.has("meta", "key", "value"):
        return {}
    rows = db.rows("SELECT value FROM meta WHERE key = '0'")
    if not rows:
        return {}
    text = bytes_to_text(rows[0][0]).strip()
    try:
        text = binascii.unhexlify(text).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        pass  # some builds may store plain JSON
    obj, _err = load_json_object(text)
    return obj or {}


def _json_blob(data: Any) -> dict[str, Any] | None:
    """A blob that is a UTF-8 JSON message object; protobuf tree nodes return None."""
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if raw[:1] != b"{":
            return None
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
    else:
        obj, _err = load_json_object(data)
    return obj if isinstance(obj, dict) and "role" in obj else None


def read_chat(path: Path, cursor: Cursor | None, roots_by_md5: dict[str, str],
              busy_timeout: float) -> ReadResult:
    """JSON message blobs of one CLI chat, in insertion order, after the last rowid seen.

    Binary (protobuf) blobs hold the conversation tree and are not decoded; they are counted.
    """
    old = cursor or Cursor()
    sig = file_signature(path)
    result = ReadResult(events=[], cursor=old)
    if cursor is not None and old.content_hash == sig and old.state:
        return result
    state = load_state(old.state)
    last = state.get("rowid", 0) if isinstance(state.get("rowid"), int) else 0
    seq = state.get("seq", 0) if isinstance(state.get("seq"), int) else 0
    chat_dir = path.parent
    meta_json = read_json_file(chat_dir / "meta.json", result.skips) \
        if is_file(chat_dir / "meta.json") else None
    cwd = (meta_json or {}).get("cwd")
    root = cwd if isinstance(cwd, str) and cwd else roots_by_md5.get(chat_dir.parent.name)
    origin = Origin(chat_dir.name, root)
    with ReadOnlyDb(path, busy_timeout=busy_timeout) as db:
        meta = chat_meta(db) if db.ok else {}
        ts = iso_from_any(meta.get("createdAt")) or iso_from_any(
            (meta_json or {}).get("createdAtMs"))
        model = meta.get("lastUsedModel") if isinstance(meta.get("lastUsedModel"), str) else None
        if db.ok and not db.has("blobs", "data"):
            result.skips.append(Skip("unknown_schema", str(path)))
        elif db.ok:
            for rowid, bid, data in db.iter_rows(
                    "SELECT rowid, id, data FROM blobs WHERE rowid > ? ORDER BY rowid", (last,)):
                last = rowid
                msg = _json_blob(data)
                if msg is None:
                    result.noise["binary_blob"] = result.noise.get("binary_blob", 0) + 1
                    continue
                event = content_event(origin, f"blob:{bytes_to_text(bid)}", seq, msg.get("role"),
                                      msg.get("content"), ts, {"role": msg.get("role")},
                                      "cli-chat", result)
                if event is not None:
                    if model:
                        event = _with_model(event, model)
                    result.events.append(event)
                    seq += 1
        if db.skip is not None:
            return ReadResult(events=[], cursor=old, skips=[*result.skips, db.skip])
    result.cursor = Cursor(content_hash=sig, state=dump_state({"rowid": last, "seq": seq}))
    return result


def _with_model(event: Any, model: str) -> Any:
    from dataclasses import replace

    return replace(event, agent_model=model) if event.role == "assistant" else event
