"""The shared-text gate `redact_shared`: the stricter cut for free text bound for git."""

from __future__ import annotations

import re
from functools import lru_cache

from looma_git.redact.api import redact
from looma_git.redact.entropy import _DIGEST_CTX as _DIGEST_CTX_SHARED
from looma_git.redact.entropy import _unit, shannon_entropy
from looma_git.redact.entropy import placeholder as _ph

# --- the stricter gate for text bound for git ----------------------------------------------
# What is written under refs/looma/* and refs/notes/looma is pushed and shared: a quote or a
# summary that still holds anything key-like after redaction is cut at that token (the text
# before it is kept). Shorter tokens and a lower entropy floor than the local pass.
_SHARED_TOKEN = re.compile(r"[A-Za-z0-9_+/\-]{16,}+={0,3}")
SHARED_MIN_BITS = 3.3


@lru_cache(maxsize=8192)
def _shared_suspect(tok: str) -> bool:
    from looma_git.redact.entropy import _is_allowed

    if not any(c.isdigit() for c in tok) or not any(c.isalpha() for c in tok):
        return False
    if shannon_entropy(tok) < SHARED_MIN_BITS:
        return False
    return not _is_allowed(tok)


def redact_shared(text: str) -> tuple[str, dict[str, int]]:
    """`redact`, then cut the text at the first token that still looks like key material.

    For free text bound for git (quotes, summaries, titles, aliases); returns the text and
    the hits by kind (a cut counts as `shared_gate`)."""
    r = redact(text)
    out = r.text
    hits = dict(r.hits)
    for m in _SHARED_TOKEN.finditer(out):
        tok = m.group(0)
        if not _shared_suspect(tok):
            continue
        if _DIGEST_CTX_SHARED.search(out, max(0, m.start() - 12), m.start()):
            continue
        a, _ = _unit(out, m.start(), m.end())
        hits["shared_gate"] = hits.get("shared_gate", 0) + 1
        return out[:a].rstrip() + (" " if a else "") + _ph("shared_gate"), hits
    return out, hits
