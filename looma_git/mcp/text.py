"""Making transcript-derived text safe to hand to a model: invisible Unicode out, quotes fenced."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Characters a reader cannot see but a model reads: zero-width and joiners, bidi embeddings,
# overrides and isolates, BOM, soft hyphen, Hangul/Mongolian fillers, variation selectors, and
# the Unicode tag block (U+E0000-E007F) used to smuggle ASCII instructions past a human reviewer.
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB), (0x1D173, 0x1D17A), (0xE0000, 0xE007F),
    (0xE0100, 0xE01EF),
)
_INVISIBLE_RE = re.compile("[" + "".join(
    f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _INVISIBLE_RANGES) + "]")
_KEEP_CONTROLS = {"\n", "\t"}


def strip_invisible(text: str) -> str:
    """`text` without invisible/format characters and control characters (newline and tab stay)."""
    text = _INVISIBLE_RE.sub("", text)
    if text.isprintable():
        return text
    return "".join(ch for ch in text if ch in _KEEP_CONTROLS
                   or unicodedata.category(ch) not in ("Cc", "Cf", "Co", "Cs"))


def clean(value: Any) -> Any:
    """Strip invisible characters from every string inside plain data (dicts, lists, tuples)."""
    if isinstance(value, str):
        return strip_invisible(value)
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def one_line(text: str, limit: int = 120) -> str:
    """A single line of at most `limit` characters (for titles and labels)."""
    flat = " ".join(strip_invisible(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def fence(text: str, info: str = "text") -> str:
    """`text` inside a code fence longer than any backtick run it contains, so it cannot close
    the fence early and escape into the surrounding (trusted) text."""
    body = strip_invisible(text).rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{body}\n{ticks}"


def conf_tag(confidence: float | None, band: str | None) -> str:
    """`[conf 0.82 high]`, or `[unconfirmed]` when a fact carries no confidence."""
    if confidence is None:
        return "[unconfirmed]"
    return f"[conf {confidence:.2f} {band}]"


def more(items: list[str], shown: int = 2) -> str:
    """`a, b +3`: the first few items and a count of the rest."""
    if not items:
        return "-"
    rest = f" +{len(items) - shown}" if len(items) > shown else ""
    return ", ".join(items[:shown]) + rest


# Shapes of text that tries to steer the model reading it rather than inform it. A flag is a
# warning to the reader, never a reason to hide the evidence: the fact itself may be true.
_INJECTION = (
    ("override", re.compile(r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|"
                            r"prior|above|earlier|all|any|your)\b[^.\n]{0,20}\b(?:instructions?|"
                            r"prompts?|rules|directions|guidelines)\b", re.I)),
    ("role-play", re.compile(r"\b(?:you are now|from now on,? you|act as (?:an?|the) "
                             r"(?:system|admin|developer)|new (?:system )?instructions?:)", re.I)),
    ("system-prompt", re.compile(r"(?:\bsystem prompt\b|<\|?(?:system|im_start)\|?>|"
                                 r"\[/?(?:INST|SYS)\])", re.I)),
    ("pipe-to-shell", re.compile(r"\b(?:curl|wget|iwr|Invoke-WebRequest)\b[^\n|]{0,200}\|\s*"
                                 r"(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\bbase64\s+(?:-d|--decode)\b"
                                 r"[^\n|]{0,80}\|\s*(?:ba)?sh\b", re.I)),
    ("exfiltration-link", re.compile(r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?&][^)\s]*=|"
                                     r"\b(?:send|post|upload|exfiltrate)\b[^.\n]{0,60}\b(?:secrets?|"
                                     r"tokens?|keys?|credentials|env(?:ironment)?|\.env)\b[^.\n]"
                                     r"{0,60}https?://", re.I)),
    ("destructive-command", re.compile(r"\brm\s+-[a-z]*r[a-z]*f?\s+(?:/|~|\$HOME)(?:\s|$)|"
                                       r"\bgit\s+push\s+(?:-f|--force)\b[^\n]{0,40}\b(?:main|"
                                       r"master)\b", re.I)),
)


def suspicious(text: str) -> list[str]:
    """Labels of the prompt-injection shapes found in `text` (empty: none)."""
    flat = strip_invisible(text)
    return [label for label, rx in _INJECTION if rx.search(flat)]
