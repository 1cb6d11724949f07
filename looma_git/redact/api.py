"""The public redaction API: `redact`, `redact_into`, `redact_text`, `redact_obj`, `family_of`, `Redaction`."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Any, NamedTuple

from looma_git.literals import any_of
from looma_git.redact.catalog import (
    _CATALOG_TOKEN,
    _catalog_pass,
    _splice,
    _token_keywords,
    _widen,
)
from looma_git.redact.context import (
    _CRED_AT,
    WEAK_PW_STARTS,
    _bundler_pass,
    _context_pass,
    _run_material,
    _weak_pw_pass,
)
from looma_git.redact.entropy import ENTROPY_MIN_LEN, redact_entropy_pass, run_suspect
from looma_git.redact.keywords import _KEYWORD_STARTS, _keyword_passes
from looma_git.redact.shapes import _GATES, _RULES, _bind, _redact_pem
from looma_git.redact.structural import _structural
from looma_git.redact.values import _filler
from looma_git.redact.vendors import VENDORS


class Redaction(NamedTuple):
    """The redacted text and how many secrets of each kind were replaced (immutable; a named
    tuple because one is made per redacted string and a frozen dataclass costs 3x more)."""

    text: str
    hits: dict[str, int]


_MIN_SECRET_LEN = 7  # `pwd=abc`: nothing shorter can hold a secret we recognise


# --- public API --------------------------------------------------------------------------

class _Hits(Counter[str]):
    """Hits by kind: a Counter made without Counter.__init__'s update() call (one is made per
    redacted string that has any candidate; the plain constructor costs 3x more)."""

    def __init__(self) -> None:
        pass


# Every pass needs one of these to occur, so a text with none of them is returned as it is
# after a few scans in C (most event strings): a run of 16+ characters without whitespace,
# quotes or brackets (every provider token, catalog secret and entropy token lies inside one),
# a keyword start (lowercased), or one of the short contexts below.
_RUN16 = re.compile(r"[^\s\"'`<>(){}\[\],;]{16}")
# (a trie of the literals: whether any occurs is all it answers, ~30% faster than the flat
# alternation on a cold ingest's unique texts)
_KW = any_of({*_KEYWORD_STARTS, *WEAK_PW_STARTS})
_WEAK_PW_HINT = re.compile("|".join(map(re.escape, WEAK_PW_STARTS)))
_SHORT_CONTEXTS = ("://", "PRIVATE KEY", "-u", "--user", "-H")


def has_suspect(text: str) -> bool:
    """Cheap prefilter: False only when `redact(text)` is sure to return `text` unchanged
    (nothing any pass could start from: no run of 16+ token characters, no keyword, no URL,
    no PEM header, no `-u` flag). One or two scans in C."""
    if len(text) < _MIN_SECRET_LEN:
        return False
    return (_RUN16.search(text) is not None or _KW.search(text.lower()) is not None
            or any(c in text for c in _SHORT_CONTEXTS))


def redact(text: str) -> Redaction:
    """Replace every secret in `text` by `[REDACTED:<kind>]`; report the hits by kind."""
    out, pairs = _pairs_of(text)
    return _new(Redaction, (out, dict(pairs) if pairs else {}))


def _pairs_of(text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    """(redacted text, (kind, hits) pairs): the one dispatch `redact` and `redact_into` share."""
    n = len(text)
    if n < _MIN_SECRET_LEN:
        return text, ()
    # transcripts repeat their strings (ids, tool names, quoted output): more than half of
    # the event strings of a real capture were seen before in it
    if n <= _CACHE_MAX_LEN:
        return _redact_cached(text)
    if n <= _LONG_CACHE_MAX_LEN:
        return _redact_cached_long(text)
    return _redact_pairs(text)


def redact_into(text: str, hits: dict[str, int]) -> str:
    """`redact(text).text`, its hits added to `hits` by kind (in the order `redact` reports
    them). Ingest redacts every stored string this way: no Redaction and no hits dict of its
    own per string (most have no hit)."""
    out, pairs = _pairs_of(text)
    for kind, k in pairs:
        hits[kind] = hits.get(kind, 0) + k
    return out


# bounded caches: at most 16k strings of up to 1 KB and 128 of up to 32 KB
_CACHE_MAX_LEN = 1024
_LONG_CACHE_MAX_LEN = 32768


def _redact_pairs(text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    out, hits = _redact(text)
    # A redaction can expose a secret the first pass read as part of another match (an
    # unterminated PEM header before a complete escaped one left the second key's body in
    # the text: tests/test_redact.py's idempotence property found it). Passes repeat until
    # nothing changes (bounded; only texts with a hit pay for it), so the output is what a
    # second `redact` of it gives.
    for _ in range(3):
        if not hits:
            break
        again, more = _redact(out)
        if again == out:
            break
        out = again
        for kind, k in (more or {}).items():
            hits[kind] = hits.get(kind, 0) + k
    return out, tuple(hits.items()) if hits else ()


_redact_cached = lru_cache(maxsize=16384)(_redact_pairs)
_redact_cached_long = lru_cache(maxsize=128)(_redact_pairs)


@lru_cache(maxsize=16384)
def _run_flags(run: str) -> int:
    """What one token run may need, as bits (cached: transcripts repeat their tokens):
    1 a catalog keyword, 2 a suspect token for the entropy pass, 8 a hand-written shape's
    trigger."""
    if _PLAIN_RUN.fullmatch(run):
        return 0  # a timestamp or a UUID: the context pass judges UUIDs next to a vendor name
    hand = 8 if _HAND_ANY.search(run) else 0
    if _DIGIT_CH.search(run) is None and _UPPER_LOWER.search(run) is None:
        return hand  # a path, a name or a word without digits and mixed case: no token
    # the uncached functions: this verdict is the cache (one entry per run, not four)
    return (1 if _token_keywords(run) else 0) | (2 if _run_suspect_uncached(run) else 0) | hand


_DIGIT_CH = re.compile(r"[0-9]")
# mixed case inside a word (`aB`, `ABc`) or 20 letters of one case: maybe random letters
# (`UserCard` has it too); a run with neither this nor a digit is lowercase/uppercase words
_UPPER_LOWER = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|[a-z]{20}|[A-Z]{20}")
# ISO 8601 timestamps and UUIDs, the commonest runs in transcripts: no pass but the context
# pass can start from them
_PLAIN_RUN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{5,15}(?:Z|[+\-][0-9:]{4,5})?|"
                        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


_NO_RUNS: list[str] = []
_run_suspect_uncached = run_suspect.__wrapped__


def _redact(text: str) -> tuple[str, Counter[str] | None]:
    # runs of 16+: every token-shaped secret lies in one
    toks = _find_runs(text) if len(text) >= 16 else _NO_RUNS
    low = text.lower()
    kw = _kw_search(low) is not None
    url = "://" in text
    pem = "PRIVATE KEY" in text
    flags = "-u" in text or "-H" in text  # `--user` too; `-H` curl headers
    if not (toks or kw or url or pem or flags):
        return text, None  # most event strings: a few scans, nothing to do
    need = 0
    for t in toks:
        need |= _run_flags(t)
    hits = _Hits()
    out = text
    if pem:
        out = _redact_pem(out, hits)
    # a hand-written shape's trigger lies inside a token run, or is a URL or `Bearer`
    if need & 8 or ((url or "earer" in text or "EARER" in text)
                    and _HAND_ANY.search(out) is not None):
        out = _shapes(out, hits)
    if need & 1 or (kw and "<" in out):
        if out is not text:
            toks = _find_runs(out)
            low = out.lower()
        out = _catalog_pass(out, hits, toks, low)
    if kw or flags or url:  # `DirectoryEntry("LDAP://…", "user", "pw")` has no keyword
        out = _structural(out, hits)
    if kw:
        out = _keyword_passes(out, hits)
        if _WEAK_PW_HINT.search(low) is not None:
            out = _weak_pw_pass(out, hits)
    if toks and len(out) >= ENTROPY_MIN_LEN:
        # Most texts hold no suspect token at all: the verdict per run is cached (transcripts
        # repeat the same ids, paths and hashes), the text is rebuilt only when one is suspect.
        if out is not text:
            toks = _find_runs(out)
            if any(map(run_suspect, toks)):
                out = redact_entropy_pass(out, hits)
        elif need & 2:
            out = redact_entropy_pass(out, hits)
    if toks:
        # after the entropy pass: what is random on its own is reported as such; this one
        # finds ids and test keys by the vendor or credential word next to them
        if "BUNDLE_" in out:
            out = _bundler_pass(out, hits)
        # only with key material in a run and a credential word or a vendor name in the text:
        # when no earlier pass changed the text, its runs (judged once each, cached) decide
        # first, and most texts skip the word scans; a changed text's runs are the pass's own
        if (out is not text or any(map(_run_material, toks))) and (
                (kw and _cred_search(low) is not None)
                or not _VENDOR_SET.isdisjoint(_words(low))):
            out = _context_pass(out, hits, None if out is not text else toks)
    return out, hits


_new = tuple.__new__
_VENDOR_SET = frozenset(VENDORS)
_cred_search = _CRED_AT.search
_words = re.compile(r"[a-z][a-z0-9]+").findall  # vendor names are whole words of the text
_find_runs = _CATALOG_TOKEN.findall
_kw_search = _KW.search


def _hand_triggers() -> tuple[re.Pattern[str], dict[str, str]]:
    """One scan (an alternation of literals, no groups, so sre keeps its fast first-character
    test) for every hand-written rule's triggers, and which rule each trigger belongs to."""
    kind_of: dict[str, str] = {}
    for kind, triggers, _, _ in _RULES:
        for t in triggers:
            kind_of.setdefault(t, kind)
    lits = sorted((t for t in kind_of if t != "$"), key=len, reverse=True)
    alts = [re.escape(t) for t in lits] + [_GATES["password_hash"].pattern]
    return re.compile("|".join(alts)), kind_of


_HAND_ANY, _TRIGGER_KIND = _hand_triggers()
# a trigger found by the scan may hide a shorter one of another rule at the same place
_ALSO = {"anthropic_key": "openai_key", "slack_webhook": "webhook"}


def _shapes(out: str, hits: dict[str, int]) -> str:
    """Pass (a): the hand-written credential shapes whose triggers occur (in rule order)."""
    found = set(_HAND_ANY.findall(out))
    if not found:
        return out
    kinds = {_TRIGGER_KIND.get(t, "password_hash") for t in found}
    kinds.update([_ALSO[k] for k in kinds if k in _ALSO])
    for kind, _, pattern, replacer in _RULES:
        if kind not in kinds:
            continue
        gate = _GATES.get(kind)
        if gate is not None and gate.search(out) is None:
            continue
        if replacer is None:
            # the whole token goes, never a piece of it (`<jwt>.<4th part>`, `x<key>y`)
            spans = [(*_widen(out, m.start(), m.end()), kind) for m in pattern.finditer(out)
                     if not _filler(m.group(0))]
            if spans:
                out = _splice(out, spans, hits)  # type: ignore[arg-type]
        else:
            out = pattern.sub(_bind(replacer, hits), out)  # type: ignore[arg-type]
    return out


def _known_shapes(out: str, hits: Counter[str]) -> str:
    """Passes (a) to (d) on `out` whatever it holds (no trigger scan): shapes, catalog,
    structural contexts, keyword-anchored assignments and headers."""
    out = _shapes(out, hits)
    out = _catalog_pass(out, hits)
    out = _structural(out, hits)
    out = _weak_pw_pass(_keyword_passes(out, hits), hits)
    return _context_pass(_bundler_pass(out, hits), hits)


_HAND_FAMILIES = {
    "anthropic_key": "anthropic", "openai_key": "openai", "github_token": "github",
    "aws_access_key_id": "aws", "aws_secret_key": "aws", "slack_token": "slack",
    "slack_webhook": "slack", "google_api_key": "gcp", "stripe_key": "stripe", "jwt": "jwt",
    "bearer_token": "bearer_token", "url_password": "url_password", "private_key": "private_key",
    "credential": "credential", "vendor_secret": "vendor_secret", "weak_password": "weak_password",
    "password_hash": "password_hash", "webhook": "webhook", "high_entropy": "high_entropy", "shared_gate": "shared_gate"}


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
