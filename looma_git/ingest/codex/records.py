"""Codex rollout records -> NormalizedEvents, with the per-session state that spans reads."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

from looma_git.ingest.agent_text import (
    as_dict,
    as_list,
    as_str,
    clip_output,
    command_test_outcome,
)
from looma_git.ingest.base import CARRY_BYTES, KEYED_KINDS, Skip, builder
from looma_git.ingest.codex import session_state
from looma_git.ingest.codex.ids import id_and_raw, ts_of
from looma_git.ingest.codex.tools import (
    CallSpec,
    call_spec,
    command_text,
    output_exit_code,
    output_text,
    parse_arguments,
    running_process,
)
from looma_git.ingest.codex.vocabulary import (
    CWD_RE,
    NOISE_EVENTS,
    QUIET_EVENTS,
    QUIET_RECORDS,
    TEXT_TYPES,
    injected_reason,
)
from looma_git.model import NormalizedEvent, ToolCall

AGENT = "codex"
MAX_TRACKED = 512  # bound on remembered calls / texts / processes carried in the cursor state
def _bounded_set(od: OrderedDict[str, Any], key: str, value: Any) -> None:
    od[key] = value
    od.move_to_end(key)
    while len(od) > MAX_TRACKED:
        od.popitem(last=False)


class CodexSession:
    """Replays one rollout's records in order. All cross-record memory lives in `to_state()`,
    so an incremental read resumes exactly where the previous one stopped."""

    def __init__(self, fallback_id: str, state: str = "") -> None:
        self.events: list[NormalizedEvent] = []
        self.skips: list[Skip] = []
        self.noise: dict[str, int] = {}
        self.sid = fallback_id
        self.meta_seen = False
        self.cwd: str | None = None
        self.branch: str | None = None
        self.remote: str | None = None
        self.model: str | None = None
        self.last_ts: str | None = None
        # (offset, length) of the record being fed in its file, when it has one there: its
        # events keep the raw record by reference instead of a copy.
        self.span: tuple[int, int] | None = None
        self.plain = False  # the record being fed: decoded without a float (ids.id_and_raw)
        self.record: dict[str, Any] | None = None  # the record being fed, when it may be carried
        self.records: dict[int, Any] = {}  # ReadResult.records
        self.carried = 0  # bytes of the lines in `records`
        self.era = "enveloped"
        self.facts: dict[str, str] = {}
        # The facts tuple of the last event: the next one that states the same facts gets this
        # very object (all str pairs, so equal means the same text), which extra_json has
        # encoded already.
        self.last_extra: tuple[tuple[str, str], ...] = ()
        self.texts: OrderedDict[str, list[int]] = OrderedDict()  # text key -> [item, event]
        self.turn = ""  # turn_id of the current turn (texts pair only within one turn)
        self.pending: OrderedDict[str, Any] = OrderedDict()  # call_id -> CallSpec json / stdin
        self.resolved: OrderedDict[str, int] = OrderedDict()
        self.procs: OrderedDict[str, str] = OrderedDict()  # unified-exec process -> call_id
        if state:
            session_state.load(self, state)

    # -- state: codex/session_state.py --------------------------------------------------
    def to_state(self) -> str:
        """Everything a later read needs to resume after this record (the cursor's state)."""
        return session_state.dump(self)

    # -- dispatch --------------------------------------------------------------------------
    def feed(self, obj: dict[str, Any], seq: int, loc: str, start: int | None = None, *,
             plain: bool = False, carry: bool = False) -> None:
        """One record (enveloped or bare era). Unknown shapes become Skips; never raises.

        `start`: the record's byte offset in the rollout when `seq` is its end offset there.
        `plain`: ids.DECODE decoded `obj` without meeting a float. `carry`: `obj` was decoded
        from the line's bytes as read, as reading it back would (ReadResult.records).
        """
        self.span = (start, seq - start) if start is not None else None
        self.plain = plain
        self.record = obj if carry else None
        try:
            self._feed(obj, seq, loc)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # defensive: bad data
            self.skips.append(Skip("malformed", f"{loc} ({type(exc).__name__})"))

    def _feed(self, obj: dict[str, Any], seq: int, loc: str) -> None:
        kind = obj.get("type")
        if isinstance(kind, str) and "payload" in obj:
            ts = ts_of(obj.get("timestamp"))
            if ts:
                self.last_ts = ts
            payload = obj.get("payload")
            if not isinstance(payload, dict):
                self.skips.append(Skip("malformed", loc))
            elif kind == "session_meta":
                self.meta(payload, ts)
            elif kind == "turn_context":
                self._turn(payload)
                self.cwd = as_str(payload.get("cwd")) or self.cwd
                self.model = as_str(payload.get("model")) or self.model
            elif kind == "response_item":
                self._item(payload, obj, ts, seq, loc)
            elif kind == "event_msg":
                self._event_msg(payload, obj, ts, seq, loc)
            elif kind in QUIET_RECORDS:
                return
            elif kind == "compacted":
                text = as_str(payload.get("message"))
                if text:
                    self._emit("summary", text, obj, seq, ts)
                else:
                    self._noise("compaction")
            else:
                self.skips.append(Skip("unknown_type", loc))
        elif "record_type" in obj:
            return  # bare-era `{"record_type":"state"}` marker
        elif kind is None and ("id" in obj or "instructions" in obj) and "timestamp" in obj:
            self.era = "bare"
            self.meta(obj, ts_of(obj.get("timestamp")))
        elif isinstance(kind, str):
            if not self.meta_seen:
                self.era = "bare"
            self._item(obj, obj, None, seq, loc)
        else:
            self.skips.append(Skip("unknown_type", loc))

    def meta(self, p: dict[str, Any], ts: str | None) -> None:
        """session_meta / bare header / legacy `session`: identity, cwd, git. First one wins."""
        if self.meta_seen:
            return
        self.meta_seen = True
        self.sid = as_str(p.get("id")) or as_str(p.get("session_id")) or self.sid
        self.cwd = as_str(p.get("cwd")) or self.cwd
        git = as_dict(p.get("git"))
        self.branch = as_str(git.get("branch")) or self.branch
        self.remote = as_str(git.get("repository_url")) or self.remote
        self.last_ts = self.last_ts or ts or ts_of(p.get("timestamp"))
        for key in ("cli_version", "originator", "forked_from_id"):
            value = as_str(p.get(key))
            if value:
                self.facts[key] = value
        spawn = as_dict(as_dict(as_dict(p.get("source")).get("subagent")).get("thread_spawn"))
        parent = as_str(spawn.get("parent_thread_id"))
        if parent:
            self.facts["parent_thread_id"] = parent
            self.facts["parent_session"] = parent  # a spawned subagent thread
            self.facts["is_subagent"] = "1"

    # -- response items ----------------------------------------------------------------------
    def _item(self, p: dict[str, Any], obj: dict[str, Any], ts: str | None, seq: int,
              loc: str) -> None:
        kind = p.get("type")
        if kind == "message" or (kind is None and "role" in p and "content" in p):
            self._message(p, obj, ts, seq)
        elif kind == "reasoning":
            if p.get("encrypted_content"):
                self.skips.append(Skip("encrypted", loc))
            else:
                self._noise("reasoning")
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._call(p, obj, ts, seq)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = as_str(p.get("call_id")) or ""
            out = p.get("output")
            self._result(call_id, obj, ts, seq, output_exit_code(out), output_text(out),
                         running=running_process(out))
        elif kind == "web_search_call":
            action = as_dict(p.get("action"))
            query = as_str(action.get("query")) or " | ".join(
                q for q in as_list(action.get("queries")) if isinstance(q, str))
            call = ToolCall(name="web_search", kind="web", call_id=as_str(p.get("id")))
            self._emit("assistant", query, obj, seq, ts, (call,))
        elif kind in ("compaction", "context_compaction"):
            self._noise("compaction")
        elif isinstance(kind, str) and kind.endswith("_call"):
            call = ToolCall(name=kind, kind="other", call_id=as_str(p.get("call_id")))
            self._emit("assistant", "", obj, seq, ts, (call,))
        elif isinstance(kind, str) and kind.endswith("_output"):
            self._noise("tool_output")
        else:
            self.skips.append(Skip("unknown_type", loc))

    def _message(self, p: dict[str, Any], obj: dict[str, Any], ts: str | None,
                 seq: int) -> None:
        role = p.get("role")
        if role in ("developer", "system"):
            self._noise("developer_message")
            return
        if role not in ("user", "assistant"):
            self._noise("unknown_role")
            return
        content = p.get("content")
        items = [content] if isinstance(content, str) else as_list(content)
        texts: list[str] = []
        for item in items:
            text = item if isinstance(item, str) else None
            if isinstance(item, dict) and item.get("type") in TEXT_TYPES:
                text = as_str(item.get("text"))
            elif isinstance(item, dict) and item.get("type") == "input_image":
                text = "[image]"
            if not text:
                continue
            reason = injected_reason(text) if role == "user" else None
            if reason:
                self._noise(reason)
                if reason == "environment_context" and not self.cwd:
                    match = CWD_RE.search(text)
                    self.cwd = match.group(1).strip() if match else None
                continue
            texts.append(text)
        if texts:
            self._text(role, "\n\n".join(texts), 0, obj, seq, ts)

    def _text(self, role: str, text: str, stream: int, obj: dict[str, Any], seq: int,
              ts: str | None) -> None:
        """Emit a message unless it is the second copy of one seen on the other stream
        (response_item vs event_msg carry the same text; counts pair them, order-free, within
        one turn: the same prompt typed again in a later turn is a new message)."""
        key = hashlib.sha1(f"{role}\0{text.strip()}".encode("utf-8", "replace")).hexdigest()[:16]
        counts = self.texts.get(key, [0, 0])
        other = 1 - stream
        is_copy = counts[other] > counts[stream]
        counts[stream] += 1
        _bounded_set(self.texts, key, counts)
        if is_copy:
            self._noise("duplicate_text")
        else:
            self._emit(role, text, obj, seq, ts)

    def _call(self, p: dict[str, Any], obj: dict[str, Any], ts: str | None, seq: int) -> None:
        name = as_str(p.get("name")) or str(p.get("type"))
        call_id = as_str(p.get("call_id")) or as_str(p.get("id")) or f"@{seq}"
        if p.get("type") == "local_shell_call":
            args = {"command": as_dict(p.get("action")).get("command")}
        elif p.get("type") == "custom_tool_call":
            args = {"input": p.get("input")}
        else:
            args = parse_arguments(p.get("arguments"))
        if name == "write_stdin":
            # Polling a running unified-exec process: no new action; its output may carry the
            # exit code of the exec_command that started the process.
            _bounded_set(self.pending, call_id, {"stdin": str(args.get("session_id", ""))})
            self._noise("write_stdin")
            return
        spec = call_spec(name, args)
        _bounded_set(self.pending, call_id, spec.to_json())
        call = _new_tool_call({"name": spec.name, "kind": spec.kind, "paths": spec.paths,
                               "command": spec.command, "call_id": call_id})
        self._emit("assistant", spec.text, obj, seq, ts, (call,))

    def _result(self, call_id: str, obj: dict[str, Any], ts: str | None, seq: int,
                exit_code: int | None, text: str, *, running: str | None = None,
                success: bool | None = None, paths: tuple[str, ...] = (),
                fallback: CallSpec | None = None, extra: tuple[tuple[str, str], ...] = ()) -> None:
        """The outcome of a call: emitted once per call id, by whichever record settles it."""
        if call_id in self.resolved:
            self._noise("duplicate_result")
            return
        entry = self.pending.get(call_id)
        if isinstance(entry, dict) and "stdin" in entry:
            origin = self.procs.get(entry["stdin"])
            self.pending.pop(call_id, None)
            if origin and exit_code is not None and origin not in self.resolved:
                self._result(origin, obj, ts, seq, exit_code, text)
            else:
                self._noise("write_stdin")
            return
        spec = CallSpec.from_json(entry) if entry is not None else fallback
        if running and exit_code is None:
            _bounded_set(self.procs, running, call_id)
            self._noise("pending_output")
            return
        if spec is None:
            spec = CallSpec("unknown", "other")
        if exit_code is None and success is None and spec.kind in ("other", "task") \
                and len(text.strip()) < 40:
            self._noise("tool_ack")  # "Plan updated" and friends
            _bounded_set(self.resolved, call_id, 1)
            self.pending.pop(call_id, None)
            return
        is_error = (exit_code not in (None, 0)) or success is False
        call = _new_tool_call({"name": spec.name, "kind": spec.kind, "paths": paths or spec.paths,
                               "command": spec.command, "exit_code": exit_code,
                               "is_error": is_error,
                               "test_outcome": command_test_outcome(spec.command, exit_code),
                               "call_id": call_id})
        _bounded_set(self.resolved, call_id, 1)
        self.pending.pop(call_id, None)
        self._emit("tool", clip_output(text), obj, seq, ts, (call,), extra)

    # -- event_msg -------------------------------------------------------------------------
    def _event_msg(self, p: dict[str, Any], obj: dict[str, Any], ts: str | None, seq: int,
                   loc: str) -> None:
        kind = p.get("type")
        if kind in ("task_started", "turn_started"):
            self._turn(p)
        if kind in ("user_message", "agent_message"):
            text = as_str(p.get("message"))
            role = "user" if kind == "user_message" else "assistant"
            reason = injected_reason(text) if text and role == "user" else None
            if reason:
                self._noise(reason)
            elif text:
                self._text(role, text, 1, obj, seq, ts)
        elif kind == "exec_command_end":
            cmd = command_text(p.get("command"))
            code = p.get("exit_code")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            out = as_str(p.get("aggregated_output")) or as_str(p.get("stdout")) or ""
            reads = tuple(as_str(as_dict(c).get("path")) or "" for c in as_list(p.get("parsed_cmd"))
                          if as_dict(c).get("type") == "read")
            self._result(as_str(p.get("call_id")) or f"@{seq}", obj, ts, seq, code, out,
                         paths=tuple(r for r in reads if r),
                         fallback=CallSpec("exec_command", "shell", cmd))
        elif kind == "patch_apply_end":
            success = p.get("success")
            ok = success if isinstance(success, bool) else None
            changes = tuple(k for k in as_dict(p.get("changes")) if isinstance(k, str))
            out = (as_str(p.get("stdout")) or "") + (as_str(p.get("stderr")) or "")
            self._result(as_str(p.get("call_id")) or f"@{seq}", obj, ts, seq,
                         None if ok is None else (0 if ok else 1), out, success=ok,
                         paths=changes, fallback=CallSpec("apply_patch", "edit", None, changes))
        elif kind == "collab_agent_spawn_end":
            thread = as_str(p.get("new_thread_id"))
            self._result(as_str(p.get("call_id")) or f"@{seq}", obj, ts, seq, None,
                         f"spawned {as_str(p.get('new_agent_role')) or 'agent'} {thread or ''}",
                         success=thread is not None, fallback=CallSpec("spawn_agent", "task"),
                         extra=(("spawned_thread", thread),) if thread else ())
        elif kind in ("error", "warning"):
            text = as_str(p.get("message"))
            if text:
                self._emit("system", text, obj, seq, ts)
        elif kind == "token_count":
            self.model = as_str(as_dict(p.get("info")).get("model")) or self.model
        elif kind in NOISE_EVENTS:
            self._noise(NOISE_EVENTS[kind])
        elif kind in QUIET_EVENTS or kind == "mcp_tool_call_end":
            return
        else:
            self.skips.append(Skip("unknown_type", loc))

    def _turn(self, p: dict[str, Any]) -> None:
        turn = as_str(p.get("turn_id"))
        if turn and turn != self.turn:
            self.turn = turn
            self.texts.clear()  # a new turn: nothing left to pair with

    # -- output ----------------------------------------------------------------------------
    def _noise(self, reason: str) -> None:
        self.noise[reason] = self.noise.get(reason, 0) + 1

    def _emit(self, role: str, text: str, obj: dict[str, Any], seq: int, ts: str | None,
              calls: tuple[ToolCall, ...] = (), extra: tuple[tuple[str, str], ...] = ()) -> None:
        facts = [("era", self.era), *sorted(self.facts.items()), *extra]
        if ts is None:
            ts = self.last_ts
            if ts:
                facts.append(("ts_inferred", "1"))  # bare/legacy eras have no per-line stamps
        extra = tuple(facts)
        if extra != self.last_extra:
            self.last_extra = extra
        else:  # the usual case: the one object event_writer.extra_json encoded last time
            extra = self.last_extra
        spans = (self.span,) if self.span is not None else ()
        if spans and self.record is not None and any(c.kind in KEYED_KINDS for c in calls):
            size = spans[0][1]
            if self.carried + size <= CARRY_BYTES:
                self.records[spans[0][0]] = self.record
                self.carried += size
        eid, raw = id_and_raw(AGENT, self.sid, seq, obj, need_raw=not spans, plain=self.plain)
        self.events.append(_new_event({
            "event_id": eid, "source": AGENT, "session_native_id": self.sid,
            "project_root": self.cwd, "git_remote": self.remote, "git_branch": self.branch,
            "seq": seq, "ts": ts, "role": role, "agent_model": self.model, "text": text,
            "tool_calls": calls, "raw_json": "" if spans else raw, "raw_spans": spans,
            "extra": extra}))


_new_event = builder(NormalizedEvent)  # NormalizedEvent(**values), cheaper (one per event)
_new_tool_call = builder(ToolCall)  # and ToolCall(**values) (one per call and per result)
