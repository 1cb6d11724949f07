"""Adapters that turn third-party secret scanners into redactors, for comparing them with
looma's own rules on the same corpus (tests/bench/redact_catch.py --engine NAME). Neither
package is a looma dependency; install them in a scratch venv to run the comparison.
"""

from __future__ import annotations

from collections.abc import Callable


def _replace(text: str, secrets: list[str]) -> str:
    for s in sorted(set(secrets), key=len, reverse=True):
        if s:
            text = text.replace(s, "[REDACTED:engine]")
    return text


def detect_secrets_redact() -> Callable[[str], str]:
    # The plugins' own thresholds, as `detect-secrets scan` applies them to a file's lines
    # (`scan_line` is the ad-hoc mode that reports every string with its entropy).
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import default_settings

    def redact(text: str) -> str:
        with default_settings():
            lines = list(enumerate(text.splitlines() or [text], 1))
            found = [p.secret_value or "" for p in _process_line_based_plugins(lines, "x.txt")]
        return _replace(text, found)
    return redact


def betterleaks_redact() -> Callable[[str], str]:
    import betterleaks

    def redact(text: str) -> str:
        return _replace(text, [f.secret for f in betterleaks.scan_string(text)])
    return redact


class _Lazy(dict[str, Callable[[str], str]]):
    def __missing__(self, key: str) -> Callable[[str], str]:
        fn = {"detect-secrets": detect_secrets_redact, "betterleaks": betterleaks_redact}[key]()
        self[key] = fn
        return fn


ENGINES: dict[str, Callable[[str], str]] = _Lazy()
