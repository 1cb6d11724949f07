"""Gemini chat replay: upserts by message id, `$rewindTo`, `$set`, and what was already emitted.

Gemini rewrites a message (same id) as its tool calls, results and tokens arrive, and a rewind
deletes a message and everything after it. The adapter protocol is append-only, so a message
that changed after it was emitted is emitted again with `extra["supersedes"]` naming the old
event id, and messages withdrawn by a rewind are named in a `system` event's
`extra["retracts"]` (comma-separated event ids). Within one read only the last write is seen.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from looma_git.gitshell import extra_of
from looma_git.ingest.agent_text import as_dict, as_list, as_str, utc_z
from looma_git.ingest.base import event_id
from looma_git.ingest.gemini.records import AGENT, record_raw, view
from looma_git.model import NormalizedEvent

MAX_ENTRIES = 5000  # bound on message ids remembered in the cursor state


@dataclass
class Entry:
    seq: int
    record: dict[str, Any] | None = None  # None: known from an earlier read, not rewritten now
    evid: str = ""  # event id emitted for this message ("" = not emitted: noise or new)
    checkpoint: bool = False


@dataclass
class SessionInfo:
    """Where a chat file belongs, resolved by the adapter from the directory layout."""

    fallback_id: str
    project_root: str | None = None
    dir_id: str | None = None  # the `tmp/<id>` directory name (64-hex hash or slug)
    parent_id: str | None = None  # `chats/<parentSessionId>/<id>.jsonl`: the parent session


@dataclass
class GeminiReplay:
    info: SessionInfo
    entries: OrderedDict[str, Entry] = field(default_factory=OrderedDict)
    meta: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    retracted: list[tuple[int, str, list[str]]] = field(default_factory=list)
    noise: dict[str, int] = field(default_factory=dict)

    # -- state -------------------------------------------------------------------------------
    @classmethod
    def load(cls, info: SessionInfo, state: str) -> GeminiReplay:
        replay = cls(info)
        try:
            data = json.loads(state) if state else {}
        except (ValueError, RecursionError):
            data = {}
        data = as_dict(data)
        replay.meta = {k: v for k, v in as_dict(data.get("meta")).items() if isinstance(v, str)}
        replay.model = as_str(data.get("model"))
        for row in as_list(data.get("entries")):
            if isinstance(row, list) and len(row) == 3 and isinstance(row[1], int):
                replay.entries[str(row[0])] = Entry(row[1], None, str(row[2]))
        return replay

    def to_state(self) -> str:
        rows = [[k, e.seq, e.evid] for k, e in self.entries.items()][-MAX_ENTRIES:]
        meta = {k: v for k, v in self.meta.items()
                if k in ("sessionId", "projectHash", "startTime", "kind") and isinstance(v, str)}
        return json.dumps({"meta": meta, "model": self.model, "entries": rows},
                          separators=(",", ":"))

    # -- records -----------------------------------------------------------------------------
    def message(self, record: dict[str, Any], seq: int, msg_id: str) -> None:
        """A message record: last write wins, position is that of its first appearance."""
        entry = self.entries.get(msg_id)
        if entry is None:
            self.entries[msg_id] = Entry(seq, record)
        else:
            entry.record = record

    def rewind(self, target: str, seq: int) -> None:
        """`$rewindTo`: drop the target and everything after it (everything if unknown)."""
        ids = list(self.entries)
        cut = ids.index(target) if target in self.entries else 0
        withdrawn = []
        for msg_id in ids[cut:]:
            entry = self.entries.pop(msg_id)
            if entry.evid:
                withdrawn.append(entry.evid)
        self.noise["rewound"] = self.noise.get("rewound", 0) + len(ids) - cut
        if withdrawn:
            self.retracted.append((seq, target, withdrawn))

    def set_meta(self, patch: dict[str, Any], seq: int) -> None:
        """`$set` / header line. `$set.messages` is a history checkpoint (compression, masking):
        known messages keep what was recorded; only new ids (e.g. a summary turn) are added."""
        for key, value in patch.items():
            if key != "messages" and (key not in self.meta or key != "sessionId"):
                self.meta[key] = value
        for msg in as_list(patch.get("messages")):
            msg_id = as_str(as_dict(msg).get("id"))
            if not msg_id:
                continue
            if msg_id in self.entries:
                self.noise["checkpoint"] = self.noise.get("checkpoint", 0) + 1
            else:
                self.entries[msg_id] = Entry(seq, msg, checkpoint=True)

    # -- events ------------------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return as_str(self.meta.get("sessionId")) or self.info.fallback_id

    def finish(self) -> list[NormalizedEvent]:
        """Events for every message written in this read that differs from what was emitted."""
        sid = self.session_id
        events: list[NormalizedEvent] = []
        facts: list[tuple[str, str]] = []
        project_hash = as_str(self.meta.get("projectHash"))
        if project_hash:
            facts.append(("project_hash", project_hash))
        if self.info.dir_id:
            facts.append(("project_dir", self.info.dir_id))
        if self.meta.get("kind") == "subagent" or self.info.parent_id:
            facts.append(("kind", "subagent"))
            facts.append(("is_subagent", "1"))
            if self.info.parent_id:
                facts.append(("parent_session", self.info.parent_id))
        start_ts = utc_z(self.meta.get("startTime"))
        for seq, target, withdrawn in self.retracted:
            events.append(self._event(
                sid, seq, "system", f"rewound to message {target}: "
                f"{len(withdrawn)} earlier message(s) withdrawn", start_ts,
                {"$rewindTo": target, "seq": seq}, (),
                [*facts, ("rewind_to", target), ("retracts", ",".join(withdrawn))],
                event_id(AGENT, sid, "rewind", seq, target)))
        for msg_id, entry in self.entries.items():
            if entry.record is None:
                continue
            record = entry.record
            msg = view(record)
            self.model = msg.model or self.model
            if msg.role is None:
                self.noise["unknown_type"] = self.noise.get("unknown_type", 0) + 1
                continue
            if msg.noise:
                self.noise[msg.noise] = self.noise.get(msg.noise, 0) + 1
                continue
            evid = event_id(AGENT, sid, msg_id, record)
            if evid == entry.evid:
                continue  # re-emitted unchanged
            extra = [*facts, ("message_id", msg_id), *(extra_of(msg.git) if msg.git else ())]
            if entry.evid:
                extra.append(("supersedes", entry.evid))
            role = msg.role
            if entry.checkpoint:
                extra.append(("checkpoint", "1"))
                if role == "user":
                    role = "summary"  # a compression summary posing as a user turn
            ts = utc_z(record.get("timestamp")) or start_ts
            events.append(self._event(sid, entry.seq, role, msg.text, ts, record,
                                      msg.tool_calls, extra, evid, msg.model or self.model))
            entry.evid = evid
        return events

    def _event(self, sid: str, seq: int, role: str, text: str, ts: str | None,
               record: dict[str, Any], calls: tuple[Any, ...], extra: list[tuple[str, str]],
               evid: str, model: str | None = None) -> NormalizedEvent:
        return NormalizedEvent(
            event_id=evid, source=AGENT, session_native_id=sid,
            project_root=self.info.project_root, git_remote=None, git_branch=None, seq=seq,
            ts=ts, role=role, agent_model=model or self.model, text=text, tool_calls=calls,
            raw_json=record_raw(record), extra=tuple(extra))
