"""The hook shim template: which hooks exist, how a shim is rendered and recognised."""

from __future__ import annotations

from importlib import resources

# The hooks looma installs, in the order status lists them.
HOOK_NAMES: tuple[str, ...] = ("post-commit", "post-rewrite", "post-merge", "post-checkout",
                               "pre-push")

# Marker every rendered shim carries on line 2 (any version); how install/status tell ours apart.
MARKER = "# looma-shim v"
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


def render(python: str) -> str:
    """The shim with `python` (normally sys.executable) baked in. One text for every hook:
    the shim takes its hook name from $0."""
    if "\n" in python or "\0" in python:
        raise ValueError("interpreter path contains a newline or NUL")
    return template_text().replace("@PYTHON@", _sh_single_quoted_body(python))


def is_looma_shim(content: bytes) -> bool:
    """Whether file content is a looma shim (any interpreter, any version)."""
    head = content[:256].split(b"\n", 2)
    return len(head) >= 2 and head[1].startswith(MARKER.encode())


def baked_python(content: str) -> str | None:
    """The interpreter path a rendered shim carries, or None if it is not one of ours."""
    for line in content.splitlines()[:20]:
        if line.startswith("LOOMA_PYTHON='") and line.endswith("'"):
            return line[len("LOOMA_PYTHON='"):-1].replace("'\\''", "'")
    return None
