"""Claude Code slash-command records and `!` shell mode (`<bash-input>`/`<bash-stdout>`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from looma_git.ingest.base import event_id
from looma_git.ingest.claude.records import AGENT, base_extra
from looma_git.ingest.jsonl import Line
from looma_git.ingest.toolcalls import exit_code_from_output, test_outcome
from looma_git.model import ToolCall

if TYPE_CHECKING:
    from looma_git.ingest.claude.reader import Reader

_TAG_RE = {t: re.compile(rf"<{t}>(.*?)(?:</{t}>|\Z)", re.DOTALL)
           for t in ("bash-input", "bash-stdout", "bash-stderr", "command-name",
                     "command-args")}
_ONLY_TAGS_RE = re.compile(
    r"^\s*(?:<(bash-input|bash-stdout|bash-stderr)>.*?</\1>\s*)+$", re.DOTALL)


def _tag(name: str, text: str) -> str | None:
    m = _TAG_RE[name].search(text)
    return m.group(1) if m else None


def parse_bash_mode(text: str) -> tuple[str | None, str | None] | None:
    """(command typed after `!`, its stdout+stderr) from a shell-mode user record; either part
    may be absent (Claude Code writes input and output as two records). None: not shell mode."""
    if not _ONLY_TAGS_RE.match(text):
        return None
    command = _tag("bash-input", text)
    out, err = _tag("bash-stdout", text), _tag("bash-stderr", text)
    output = None
    if out is not None or err is not None:
        output = "\n".join(p for p in ((out or "").strip(), (err or "").strip()) if p)
    command = command.strip() if command is not None else None
    return (command or None, output) if command or output is not None else None


def shell_mode_call(command: str | None, call_id: str, output: str | None) -> ToolCall:
    """The ToolCall of a `! command` (with its outcome once the output record is known)."""
    if output is None:
        return ToolCall(name="Bash", kind="shell", command=command, call_id=call_id)
    exit_code = exit_code_from_output(output)
    return ToolCall(name="Bash", kind="shell", command=command, exit_code=exit_code,
                    is_error=exit_code not in (None, 0), call_id=call_id,
                    test_outcome=test_outcome(command, exit_code, output))


def slash_command(text: str) -> str:
    """A slash command record (`<command-name>/commit</command-name>…<command-args>…`) as
    the user typed it (`/commit …`); any other text unchanged."""
    if "<command-name>" not in text:
        return text
    name = (_tag("command-name", text) or "").strip()
    if not name:
        return text
    if not name.startswith("/"):
        name = "/" + name
    args = (_tag("command-args", text) or "").strip()
    return f"{name} {args}".strip()


def bash_record(r: Reader, line: Line, text: str) -> bool:
    """Claude Code's shell mode (`! ls -la` typed by the user): the `<bash-input>` record
    becomes the user's prompt carrying a shell ToolCall, the `<bash-stdout>`/`<bash-stderr>`
    record that follows becomes that call's result (role `tool`). False: not shell mode."""
    shell = parse_bash_mode(text)
    if shell is None:
        return False
    command, output = shell
    obj = line.obj
    session, extra = r._session(obj.get("sessionId") if isinstance(
        obj.get("sessionId"), str) else None)
    extra = {**extra, **base_extra(obj), "shell_mode": "1"}
    ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    anchor = obj.get("uuid") or obj.get("timestamp") or line.start
    r._close_groups()
    if command is not None:
        call_id = f"bash-input:{anchor}"
        r.ctx.bash = [call_id, command]
        done = output is not None
        call = shell_mode_call(command, call_id, output if done else None)
        eid = event_id(AGENT, session, "user", anchor, command)
        r.events.append(r._event(eid, session, ts, "user", None, f"! {command}",
                                    (call,), line, extra))
        if not done:
            return True
    if output is None:
        return True
    call_id, command = r.ctx.bash or (f"bash-output:{anchor}", "")
    r.ctx.bash = None
    call = shell_mode_call(command or None, call_id, output)
    eid = event_id(AGENT, session, "tool", anchor, output)
    r.events.append(r._event(eid, session, ts, "tool", None, output, (call,),
                                line, extra))
    return True
