"""Codex tool calls: arguments, shell command lines, apply_patch file paths and exit codes."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from looma_git.ingest.agent_text import as_dict, as_list, as_str

SHELLS = {"bash", "sh", "zsh", "dash", "fish", "ksh", "pwsh", "powershell", "cmd", "cmd.exe"}
SHELL_TOOLS = {"shell", "container.exec", "local_shell", "local_shell_call"}
PATCH_FILE_RE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$", re.MULTILINE)
PATCH_MOVE_RE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
EXIT_RES = (
    re.compile(r"Process exited with code (-?\d+)"),
    re.compile(r"^Exit code: (-?\d+)", re.MULTILINE),
)
RUNNING_RE = re.compile(r"Process running with session ID (\d+)")


@dataclass(frozen=True)
class CallSpec:
    """What a tool call was, remembered (in cursor state) until its result arrives."""

    name: str
    kind: str
    command: str | None = None
    paths: tuple[str, ...] = ()
    text: str = ""  # what the call says in words (a plan, a search query, a subagent task)

    def to_json(self) -> list[Any]:
        return [self.name, self.kind, self.command, list(self.paths)]

    @classmethod
    def from_json(cls, data: Any) -> CallSpec | None:
        if not isinstance(data, list) or len(data) != 4:
            return None
        name, kind, command, paths = data
        if not isinstance(name, str) or not isinstance(kind, str):
            return None
        return cls(name, kind, command if isinstance(command, str) else None,
                   tuple(p for p in as_list(paths) if isinstance(p, str)))


def parse_arguments(raw: Any) -> dict[str, Any]:
    """`function_call.arguments`: a JSON string in most files, an object in some; never raises."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return {"_raw": raw}
        return value if isinstance(value, dict) else {"_raw": raw}
    return {}


def command_text(value: Any) -> str | None:
    """A command line from an argv list (unwrapping `bash -lc SCRIPT`) or a string."""
    if isinstance(value, str):
        return value.strip() or None
    argv = [a for a in as_list(value) if isinstance(a, str)]
    if not argv:
        return None
    shell = argv[0].rsplit("/", 1)[-1]
    if shell in SHELLS and len(argv) >= 3 and argv[1] in ("-c", "-lc", "-ic", "/c", "-Command"):
        return argv[2].strip() or None
    return shlex.join(argv)


def patch_paths(text: str) -> tuple[tuple[str, ...], bool]:
    """File paths named in an apply_patch body, and whether every file was added (a write)."""
    paths: list[str] = []
    ops: list[str] = []
    for match in PATCH_FILE_RE.finditer(text):
        ops.append(match.group(1))
        paths.append(match.group(2))
    paths.extend(m.group(1) for m in PATCH_MOVE_RE.finditer(text))
    unique = tuple(dict.fromkeys(p for p in paths if p))
    return unique, bool(ops) and all(op == "Add" for op in ops)


def _patch_spec(name: str, body: str) -> CallSpec:
    paths, all_added = patch_paths(body)
    return CallSpec(name, "write" if all_added else "edit", None, paths)


def call_spec(name: str, args: dict[str, Any]) -> CallSpec:
    """Normalize one tool call by its native name and parsed arguments."""
    if name in SHELL_TOOLS or name in ("shell_command", "exec_command"):
        raw_cmd = args.get("cmd") if name == "exec_command" else args.get("command")
        if raw_cmd is None:
            raw_cmd = args.get("command", args.get("cmd"))
        cmd = command_text(raw_cmd)
        argv = as_list(raw_cmd)
        if argv and argv[0] == "apply_patch" and len(argv) > 1 and isinstance(argv[1], str):
            return _patch_spec("apply_patch", argv[1])
        if cmd and "*** Begin Patch" in cmd:
            spec = _patch_spec("apply_patch", cmd)
            return CallSpec(spec.name, spec.kind, cmd, spec.paths)
        return CallSpec(name, "shell", cmd)
    if name == "apply_patch":
        body = as_str(args.get("patch")) or as_str(args.get("input")) or as_str(args.get("_raw"))
        return _patch_spec(name, body or "")
    if name == "update_plan":
        return CallSpec(name, "other", text=plan_text(args))
    if name == "spawn_agent":
        task = as_str(args.get("message")) or as_str(args.get("prompt")) or ""
        return CallSpec(name, "task", text=task)
    if name in ("read_file", "view_image", "list_dir"):
        path = (as_str(args.get("file_path")) or as_str(args.get("path"))
                or as_str(args.get("dir_path")))
        return CallSpec(name, "read", None, (path,) if path else ())
    if name in ("grep_files", "search_files"):
        return CallSpec(name, "search", text=as_str(args.get("pattern")) or "")
    if name in ("web_search", "search_query"):
        return CallSpec(name, "web", text=as_str(args.get("query")) or "")
    return CallSpec(name, "other")


def plan_text(args: dict[str, Any]) -> str:
    """An update_plan call rendered as a checklist (the plan is where todos live)."""
    lines: list[str] = []
    explanation = as_str(args.get("explanation"))
    if explanation:
        lines.append(explanation)
    for step in as_list(args.get("plan")):
        item = as_dict(step)
        text = as_str(item.get("step"))
        if text:
            lines.append(f"- [{as_str(item.get('status')) or 'pending'}] {text}")
    return "\n".join(lines)


def output_text(output: Any) -> str:
    """The text of a tool output: a string, a JSON `{output, metadata}` string or content items."""
    if isinstance(output, list):
        parts = [as_str(as_dict(p).get("text")) for p in output]
        return "\n".join(p for p in parts if p)
    if isinstance(output, dict):
        return output_text(output.get("output", output.get("content", "")))
    if not isinstance(output, str):
        return ""
    wrapped = _json_output(output)
    if wrapped is not None:
        inner = wrapped.get("output")
        return inner if isinstance(inner, str) else ""
    head, sep, body = output.partition("\nOutput:\n")
    # Unified exec prefixes a "Chunk ID / Wall time / ..." header; keep what the command printed.
    if sep and ("Wall time:" in head or "Exit code:" in head):
        return body
    return output


def _json_output(output: str) -> dict[str, Any] | None:
    if not output.startswith("{"):
        return None
    try:
        value = json.loads(output)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and "output" in value else None


def output_exit_code(output: Any) -> int | None:
    """The exit code a tool output reports (JSON metadata or unified-exec text), else None."""
    if isinstance(output, dict):
        code = as_dict(output.get("metadata")).get("exit_code")
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    if isinstance(output, list):
        output = output_text(output)
    if not isinstance(output, str):
        return None
    wrapped = _json_output(output)
    if wrapped is not None:
        return output_exit_code(wrapped)
    for regex in EXIT_RES:
        match = regex.search(output[:2000])
        if match:
            return int(match.group(1))
    return None


def running_process(output: Any) -> str | None:
    """The unified-exec process id when the output says the command is still running."""
    if not isinstance(output, str):
        return None
    match = RUNNING_RE.search(output[:2000])
    return match.group(1) if match else None
