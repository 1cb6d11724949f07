"""The hook shim template: which hooks exist, how a shim is rendered and recognised."""

from __future__ import annotations

from importlib import resources

# The hooks looma installs, in the order status lists them.
HOOK_NAMES: tuple[str, ...] = ("post-commit", "post-rewrite", "post-merge", "post-checkout",
                               "pre-push")

# First-line marker every rendered shim carries (line 2); how install/status tell ours apart.
MARKER = "# looma-shim v1"
CHAINED_SUFFIX = ".looma-chained"

# Interpreter baked into the reference copies under top-level hooks/: never executable, so a
# copied reference shim takes the PATH fallback (`looma`, then `git looma`).
PLACEHOLDER_PYTHON = "/path/to/looma/python"

_TEMPLATE = "shim.sh"


def template_text() -> str:
    """The packaged shim template (looma_git/hooks/templates/shim.sh)."""
    return resources.files("looma_git.hooks").joinpath("templates", _TEMPLATE).read_text("utf-8")


def _sh_single_quoted_body(value: str) -> str:
    # The template wraps the value in single quotes; a quote inside closes, escapes, reopens.
    return value.replace("'", "'\\''")


def render(hook: str, python: str) -> str:
    """The shim for `hook` with `python` (normally sys.executable) baked in."""
    if hook not in HOOK_NAMES:
        raise ValueError(f"unknown hook {hook!r}")
    if "\n" in python or "\0" in python:
        raise ValueError("interpreter path contains a newline or NUL")
    return (template_text()
            .replace("@HOOK@", hook)
            .replace("@PYTHON@", _sh_single_quoted_body(python)))


def is_looma_shim(content: bytes) -> bool:
    """Whether file content is a looma shim (any interpreter, any version of v1)."""
    head = content[:256].split(b"\n", 2)
    return len(head) >= 2 and head[1].startswith(MARKER.encode())


def baked_python(content: str) -> str | None:
    """The interpreter path a rendered shim carries, or None if it is not one of ours."""
    for line in content.splitlines()[:20]:
        if line.startswith("LOOMA_PYTHON='") and line.endswith("'"):
            return line[len("LOOMA_PYTHON='"):-1].replace("'\\''", "'")
    return None
