"""Claude Code tool_use blocks -> ToolCall fields, and their tool_result outcomes."""

from __future__ import annotations

from typing import Any

from looma_git.ingest.toolcalls import exit_code_from_output, test_outcome

_KINDS = {
    "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit", "Write": "write",
    "Read": "read", "NotebookRead": "read", "Bash": "shell", "BashOutput": "shell",
    "Grep": "search", "Glob": "search", "LS": "search", "Task": "task", "Agent": "task",
    "WebFetch": "web", "WebSearch": "web",
}
_PATH_KEYS = ("file_path", "notebook_path", "path")
_OUTPUT_CAP = 20_000


def tool_call_from_use(block: dict[str, Any]) -> dict[str, Any]:
    """A mutable call record from one `tool_use` block (results are attached later)."""
    raw_name = block.get("name")
    name = raw_name if isinstance(raw_name, str) else "unknown"
    kind = _KINDS.get(name, "other")
    raw_inp = block.get("input")
    inp: dict[str, Any] = raw_inp if isinstance(raw_inp, dict) else {}
    paths: list[str] = []
    if kind in ("edit", "write", "read", "search"):
        for key in _PATH_KEYS:
            v = inp.get(key)
            if isinstance(v, str) and v:
                paths.append(v)
                break
        edits = inp.get("edits")
        if name == "MultiEdit" and isinstance(edits, list):
            for e in edits:
                if isinstance(e, dict) and isinstance(e.get("file_path"), str):
                    paths.append(e["file_path"])
    command = inp.get("command") if kind == "shell" and isinstance(inp.get("command"), str) \
        else None
    call_id = block.get("id") if isinstance(block.get("id"), str) else None
    return {"name": name, "kind": kind, "paths": list(dict.fromkeys(paths)), "command": command,
            "exit_code": None, "is_error": False, "test_outcome": None, "call_id": call_id,
            "resolved": False}


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content[:_OUTPUT_CAP]
    if isinstance(content, list):
        parts = [c.get("text", "") for c in content
                 if isinstance(c, dict) and isinstance(c.get("text"), str)]
        return "\n".join(parts)[:_OUTPUT_CAP]
    return ""


def attach_result(call: dict[str, Any], block: dict[str, Any], tur: Any) -> None:
    """Fold a `tool_result` block (and the record's `toolUseResult`) into its call."""
    is_error = block.get("is_error") is True
    call["resolved"] = True
    call["is_error"] = is_error
    if call["kind"] != "shell":
        return  # only a shell call's output says more (exit code, test outcome)
    output = _result_text(block)
    exit_code: int | None
    stated = exit_code_from_output(output)
    if isinstance(tur, dict):
        out = tur.get("stdout")
        err = tur.get("stderr")
        if isinstance(out, str) or isinstance(err, str):
            output = ((out if isinstance(out, str) else "") + "\n"
                      + (err if isinstance(err, str) else ""))[-_OUTPUT_CAP:]
    if is_error:
        exit_code = stated if stated is not None else 1
    elif isinstance(tur, dict) and tur.get("interrupted") is True:
        exit_code = None
    elif isinstance(tur, dict) and isinstance(tur.get("returnCodeInterpretation"), str):
        exit_code = stated  # a non-zero code Claude judged benign (e.g. grep: no matches)
    else:
        exit_code = stated if stated is not None else 0
    call["exit_code"] = exit_code
    call["test_outcome"] = test_outcome(call.get("command"), exit_code, output)
