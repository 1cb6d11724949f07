"""The Claude Code streaming-split reader: one transcript file's records -> NormalizedEvents."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import Any

from looma_git.ingest import noise
from looma_git.ingest.base import (
    CARRY_BYTES,
    KEYED_KINDS,
    Cursor,
    ReadResult,
    Skip,
    Source,
    event_id,
    head_fingerprint,
)
from looma_git.ingest.claude import discovery, shell
from looma_git.ingest.claude.records import (
    AGENT,
    MAX_OPEN_SPAN,
    NON_MESSAGE,
    PEEK_LINES,
    Ctx,
    Group,
    base_extra,
    cap_raw,
    group_event,
    new_event,
    record_kind,
)
from looma_git.ingest.claude.tools import attach_result, tool_call_from_use
from looma_git.ingest.jsonl import Line, iter_jsonl
from looma_git.model import NormalizedEvent, ToolCall


class Reader:
    """One read of one transcript file: records -> events, merging streaming-split replies."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.source = source
        self.path = source.path
        self.old = cursor or Cursor()
        self.skips: list[Skip] = []
        self.noise: dict[str, int] = {}
        self.notes: list[str] = []
        self.events: list[NormalizedEvent] = []
        self.groups: dict[str, Group] = {}
        self.open_groups: list[Group] = []  # groups whose `closed` is still False
        self.pending: dict[str, tuple[Group, int]] = {}
        self.seq = 0
        self.ctx = Ctx()
        self.records: dict[int, Any] = {}  # ReadResult.records
        self.carried = 0  # bytes of the lines carried in groups' records
        self.stem = self.path.stem  # asked for on every record
        self.where = str(self.path)  # and this on every skipped one
        parent, agent_id, meta = discovery.subagent_info(self.path)
        self.is_sub = agent_id is not None
        self.layout_parent = parent
        self.agent_id = agent_id
        self.sub_meta = meta
        # _session's answers by (record sessionId, ctx.sid): asked for on every message record,
        # they depend on nothing else that changes within a read.
        self._sessions: dict[tuple[str | None, str], tuple[str, dict[str, str]]] = {}

    # -- bookkeeping -----------------------------------------------------------------------
    def _noise(self, reason: str) -> None:
        self.noise[reason] = self.noise.get(reason, 0) + 1

    def _skip(self, reason: str, line: Line) -> None:
        self.skips.append(Skip(reason, f"{self.where}:{line.lineno if line.start == 0 else line.start}"))

    def _session(self, rec_sid: str | None) -> tuple[str, dict[str, str]]:
        """Session id and the extra facts every event of this file carries (callers copy the
        dict before adding to it: one answer is shared by every record asking the same)."""
        key = (rec_sid, self.ctx.sid)
        got = self._sessions.get(key)
        if got is None:
            got = self._sessions[key] = self._session_of(rec_sid)
        return got

    def _session_of(self, rec_sid: str | None) -> tuple[str, dict[str, str]]:
        if self.is_sub:
            parent = self.layout_parent or rec_sid or self.ctx.sid or self.path.parent.name
            extra = {"parent_session": parent, "is_subagent": "1",
                     "agent_id": self.agent_id or ""}
            if "agentType" in self.sub_meta:
                extra["agent_type"] = self.sub_meta["agentType"]
            if "description" in self.sub_meta:
                extra["agent_description"] = self.sub_meta["description"]
            return f"{parent}/agent-{self.agent_id}", extra
        sid = rec_sid or self.ctx.sid or self.stem
        extra = {}
        if sid != self.stem and self.stem not in ("chat",):
            extra["source_file"] = self.path.name  # a continuation/replay file of `sid`
        return sid, extra

    # -- main loop -------------------------------------------------------------------------
    def run(self) -> ReadResult:
        try:
            st = self.path.stat()
        except OSError:
            return ReadResult([], self.old, [Skip("unreadable", str(self.path))])
        if not stat.S_ISREG(st.st_mode) or not os.access(self.path, os.R_OK):
            return ReadResult([], self.old, [Skip("unreadable", str(self.path))])
        start = self.old.offset
        state: dict[str, Any] = {}
        if start:
            if st.st_size < start or head_fingerprint(self.path, start) != self.old.head_fp:
                self.notes.append(f"{self.path}: truncated or replaced since last read; rescanned")
                start = 0
            else:
                try:
                    state = json.loads(self.old.state or "{}")
                except ValueError:
                    state = {}
        if start and isinstance(state, dict):
            self.seq = int(state.get("seq", 0))
            c = state.get("ctx") or {}
            bash = c.get("bash")
            self.ctx = Ctx(c.get("sid", ""), c.get("cwd"), c.get("branch"), c.get("ver"),
                            bash if isinstance(bash, list) and len(bash) == 2 else None)
        else:
            start = 0
        pos = [start]
        lines = iter_jsonl(self.path, start, self.skips, pos_out=pos)
        if not start:
            for line in self._peek(lines):
                self._record(line)
        for line in lines:
            self._record(line)
        end = pos[0]
        records = self.records
        for g in self.groups.values():
            self.events.append(group_event(g))
            if g.records and any(c["kind"] in KEYED_KINDS for c in g.calls):
                for (offset, _), record in zip(g.spans, g.records, strict=True):
                    records[offset] = record
        self.events.sort(key=lambda e: e.seq)
        open_groups = [g for g in self.groups.values() if not self._final(g, end)]
        if open_groups:
            first = min(open_groups, key=lambda g: g.start)
            resume, seq, ctx = first.start, first.seq, first.ctx
        else:
            resume, seq, ctx = end, self.seq, self.ctx.dump()
        new = Cursor(offset=resume, head_fp=head_fingerprint(self.path, resume),
                     state=json.dumps({"seq": seq, "ctx": ctx}, sort_keys=True))
        return ReadResult(self.events, new, self.skips, self.noise, self.notes, records)

    def _peek(self, lines: Iterator[Line]) -> list[Line]:
        """Learn sessionId/cwd before the first message (summary lines come first): from the
        first lines of `lines`, returned to be read as records next (each decoded once)."""
        head: list[Line] = []
        for i, line in enumerate(lines):
            head.append(line)
            sid, cwd = line.obj.get("sessionId"), line.obj.get("cwd")
            if isinstance(sid, str) and sid and not self.ctx.sid:
                self.ctx.sid = sid
            if isinstance(cwd, str) and cwd and not self.ctx.cwd:
                self.ctx.cwd = cwd
            if (self.ctx.sid and self.ctx.cwd) or i >= PEEK_LINES:
                break
        return head

    def _final(self, g: Group, end: int) -> bool:
        if end - g.start > MAX_OPEN_SPAN:
            return True
        return g.closed and all(c.get("resolved") for c in g.calls)

    def _update_ctx(self, obj: dict[str, Any]) -> None:
        ctx, get = self.ctx, obj.get  # unrolled: called for every message record
        v = get("sessionId")
        if v and isinstance(v, str):
            ctx.sid = v
        v = get("cwd")
        if v and isinstance(v, str):
            ctx.cwd = v
        v = get("gitBranch")
        if v and isinstance(v, str):
            ctx.branch = v
        v = get("version")
        if v and isinstance(v, str):
            ctx.version = v

    def _close_groups(self, except_key: str | None = None) -> None:
        # Only groups still open are visited (a closed group never reopens).
        keep: list[Group] = []
        for g in self.open_groups:
            if g.key != except_key:
                g.closed = True
                if g.records and not any(c["kind"] in KEYED_KINDS for c in g.calls):
                    g.records = None  # nothing keyed so far: not worth holding
            else:
                keep.append(g)
        self.open_groups = keep

    def _record(self, line: Line) -> None:
        obj = line.obj
        kind = record_kind(obj)
        msg = obj.get("message")
        if not isinstance(kind, str):
            self._skip("unknown_type", line)
            return
        if kind in ("user", "assistant", "system"):
            self._update_ctx(obj)
        if kind == "assistant":
            self._assistant(line, msg)
        elif kind == "user":
            self._user(line, msg)
        elif kind == "summary":
            self._summary(line)
        elif kind == "system":
            if obj.get("subtype") == "compact_boundary":
                self._noise("compact_boundary")
            else:
                self._skip("non_message", line)
        elif kind in NON_MESSAGE:
            self._skip("non_message", line)
        else:
            self._skip("unknown_type", line)


    def _summary(self, line: Line) -> None:
        text = line.obj.get("summary")
        if not isinstance(text, str) or not text.strip():
            self._noise(noise.EMPTY)
            return
        session, extra = self._session(None)
        leaf = line.obj.get("leafUuid")
        extra = dict(extra, leaf_uuid=leaf) if isinstance(leaf, str) else extra
        eid = event_id(AGENT, session, "summary", leaf, text)
        self.events.append(self._event(eid, session, None, "summary", None, text.strip(),
                                       (), line, extra))

    def _user(self, line: Line, msg: Any) -> None:
        obj = line.obj
        if not isinstance(msg, dict):
            self._skip("no_message", line)
            return
        content = msg.get("content")
        texts: list[str] = []
        had_results = False
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, str):
                    texts.append(block)
                elif not isinstance(block, dict):
                    continue
                elif block.get("type") == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif block.get("type") == "tool_result":
                    had_results = True
                    ref = self.pending.get(str(block.get("tool_use_id")))
                    if ref is not None:
                        grp, idx = ref
                        attach_result(grp.calls[idx], block, obj.get("toolUseResult"))
        else:
            self._skip("no_content", line)
            return
        if not texts:
            if not had_results:
                self._noise(noise.EMPTY)
            return
        if obj.get("isMeta") is True:
            self._noise(noise.META)
            return
        if obj.get("isCompactSummary") is True:
            self._noise(noise.COMPACTION_SUMMARY)
            return
        joined = "\n".join(texts)
        if "<bash-" in joined and shell.bash_record(self, line, joined):
            return
        joined = shell.slash_command(joined)
        clean, reasons = noise.clean_text(joined)
        if not clean:
            self._noise(reasons[0] if reasons else noise.EMPTY)
            return
        for r in reasons:
            self._noise(r)
        reason = noise.classify_prompt(clean)
        if reason is not None:
            self._noise(reason)
            if reason != noise.HOOK_FEEDBACK:
                self._close_groups()
            return
        session, extra = self._session(obj.get("sessionId") if isinstance(
            obj.get("sessionId"), str) else None)
        self._close_groups()
        extra = {**extra, **base_extra(obj)}
        # A retried prompt (same text at the same fork point) collapses into one event.
        anchor = obj.get("parentUuid") if "parentUuid" in obj else (
            obj.get("timestamp") or obj.get("uuid") or f"@{line.start}")
        eid = event_id(AGENT, session, "user", anchor, clean)
        if eid in {e.event_id for e in self.events[-8:]}:
            self._noise(noise.REPEATED_ACK)
            return
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        self.events.append(self._event(eid, session, ts, "user", None, clean, (), line, extra))


    def _assistant(self, line: Line, msg: Any) -> None:
        obj = line.obj
        if not isinstance(msg, dict):
            self._skip("no_message", line)
            return
        content = msg.get("content")
        if content is None:
            self._skip("no_content", line)  # usage-only lines (ccusage-style)
            return
        rec_sid = obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else None
        session, extra = self._session(rec_sid)
        mid = msg.get("id")
        if isinstance(mid, str) and mid:
            key = f"msg:{mid}"
        elif isinstance(obj.get("uuid"), str):
            key = f"uuid:{obj['uuid']}"
        else:
            key = "line:" + event_id(line.raw)
        key = f"{session}\x00{key}"
        g = self.groups.get(key)
        if g is None:
            self._close_groups()
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            model = msg.get("model") if isinstance(msg.get("model"), str) else None
            g = Group(key=key, seq=self.seq, start=line.start, ctx=self.ctx.dump(),
                       session=session, ts=ts, model=model, cwd=self.ctx.cwd,
                       branch=self.ctx.branch, version=self.ctx.version,
                       extra={**extra, **base_extra(obj)})
            self.seq += 1
            self.groups[key] = g
            self.open_groups.append(g)
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            if uuid in g.uuids:
                return  # the same line written twice (replay)
            g.uuids.add(uuid)
        g.spans.append((line.start, line.end - line.start))  # iter_jsonl always knows both
        g.last_end = line.end
        if g.records is not None:
            self._carry(g, line)
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                if block["text"].strip():
                    g.texts.append(block["text"])
            elif btype == "tool_use":
                call = tool_call_from_use(block)
                g.calls.append(call)
                if call.get("call_id"):
                    self.pending[call["call_id"]] = (g, len(g.calls) - 1)

    def _carry(self, g: Group, line: Line) -> None:
        # A line json.loads decoded (not msgspec from its bytes) may have had lone surrogates
        # scrubbed, which reading it back would not do: such a group is read back.
        size = line.end - line.start
        if type(line.data) is bytes and self.carried + size <= CARRY_BYTES:
            g.records.append(line.obj)  # type: ignore[union-attr]
            self.carried += size
        else:
            g.records = None

    def _event(self, eid: str, session: str, ts: str | None, role: str, model: str | None,
               text: str, calls: tuple[ToolCall, ...], line: Line,
               extra: dict[str, str]) -> NormalizedEvent:
        # The raw record stays in the transcript: stored as its byte span, not copied.
        by_ref = line.start >= 0
        ev = new_event({
            "event_id": eid, "source": AGENT, "session_native_id": session,
            "project_root": self.ctx.cwd, "git_remote": None, "git_branch": self.ctx.branch,
            "seq": self.seq, "ts": ts, "role": role, "agent_model": model, "text": text,
            "tool_calls": calls, "raw_json": "" if by_ref else cap_raw([line.raw]),
            "raw_spans": ((line.start, line.end - line.start),) if by_ref else (),
            "schema_version": self.ctx.version or "1", "extra": tuple(sorted(extra.items()))})
        self.seq += 1
        return ev
