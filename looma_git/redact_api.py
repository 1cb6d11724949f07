"""The public redaction API: `redact`, `redact_text`, `redact_obj`, `family_of` and `Redaction`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import filterfalse
from typing import Any

from looma_git.redact_catalog import _catalog_pass, _splice, _widen
from looma_git.redact_entropy import (
    _GLUED,
    _HEX,
    _TOKEN,
    _UUID,
    ENTROPY_MIN_LEN,
    _suspect,
    glued_suspect,
    redact_entropy_pass,
)
from looma_git.redact_keywords import _filler, _keyword_passes, _structural
from looma_git.redact_shapes import _GATES, _RULES, _bind, _redact_pem


@dataclass(frozen=True)
class Redaction:
    """The redacted text and how many secrets of each kind were replaced."""

    text: str
    hits: dict[str, int] = field(default_factory=dict)


_MIN_SECRET_LEN = 7  # `pwd=abc`: nothing shorter can hold a secret we recognise


# --- public API --------------------------------------------------------------------------

def redact(text: str) -> Redaction:
    """Replace every secret in `text` by `[REDACTED:<kind>]`; report the hits by kind."""
    if len(text) < _MIN_SECRET_LEN:
        return Redaction(text, {})
    hits: Counter[str] = Counter()
    out = _redact_pem(text, hits)
    out = _known_shapes(out, hits)
    if len(out) >= ENTROPY_MIN_LEN:
        # Most texts hold no suspect token at all: judge the tokens in C (findall, uuids and
        # hex dropped by the allowlist's own first test, cached verdicts that hit without
        # running Python) and rebuild the text only when one is suspect.
        toks = filterfalse(_HEX.fullmatch, filterfalse(_UUID.fullmatch, _TOKEN.findall(out)))
        if any(map(_suspect, toks)) or any(map(glued_suspect, _GLUED.findall(out))):
            out = redact_entropy_pass(out, hits)
    return Redaction(out, dict(hits))


def _known_shapes(out: str, hits: Counter[str]) -> str:
    """Pass (a): credential shapes, then keyword-anchored assignments and headers."""
    for kind, triggers, pattern, replacer in _RULES:
        gate = _GATES.get(kind)
        if gate is not None:
            if gate.search(out) is None:
                continue
        elif kind == "anthropic_key":
            if "sk-" not in out or "sk-ant-" not in out:  # most texts have no `sk-` at all
                continue
        else:
            for t in triggers:
                if t in out:
                    break
            else:
                continue
        if replacer is None:
            # the whole token goes, never a piece of it (`<jwt>.<4th part>`, `x<key>y`)
            spans = [(*_widen(out, m.start(), m.end()), kind) for m in pattern.finditer(out)
                     if not _filler(m.group(0))]
            if spans:
                out = _splice(out, spans, hits)
        else:
            out = pattern.sub(_bind(replacer, hits), out)
    out = _catalog_pass(out, hits)
    out = _structural(out, hits)
    return _keyword_passes(out, hits)


_HAND_FAMILIES = {
    "anthropic_key": "anthropic", "openai_key": "openai", "github_token": "github",
    "aws_access_key_id": "aws", "aws_secret_key": "aws", "slack_token": "slack",
    "slack_webhook": "slack", "google_api_key": "gcp", "stripe_key": "stripe", "jwt": "jwt",
    "bearer_token": "bearer_token", "url_password": "url_password", "private_key": "private_key",
    "credential": "credential", "password_hash": "password_hash", "webhook": "webhook", "high_entropy": "high_entropy", "shared_gate": "shared_gate"}


def family_of(kind: str) -> str:
    """The rule family a placeholder kind belongs to (catalog kinds already are families)."""
    return _HAND_FAMILIES.get(kind, kind)


def redact_text(text: str) -> str:
    """`redact(text).text`: the text with secrets replaced."""
    return redact(text).text


def redact_obj(value: Any) -> tuple[Any, dict[str, int]]:
    """Redact every string inside nested dicts/lists/tuples; return a new object and the hits.

    Keys are kept as they are (they name fields, they do not hold secrets); non-string
    leaves pass through unchanged.
    """
    hits: Counter[str] = Counter()

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            r = redact(v)
            hits.update(r.hits)
            return r.text
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple):
            return tuple(walk(x) for x in v)
        return v

    return walk(value), dict(hits)
