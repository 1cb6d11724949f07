"""Secret redaction: known credential shapes, then a Shannon-entropy fallback with an allowlist."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import filterfalse
from typing import Any

from looma_git.redact_entropy import (  # noqa: F401  (re-exported for callers and benches)
    _HEX,
    _TOKEN,
    _UUID,
    ENTROPY_MIN_BITS,
    ENTROPY_MIN_LEN,
    PLACEHOLDER,
    PLACEHOLDER_PREFIX,
    _entropy_repl,
    _suspect,
    _wordlike,
    placeholder,
    shannon_entropy,
)

_PLACEHOLDER_PREFIX = PLACEHOLDER_PREFIX


@dataclass(frozen=True)
class Redaction:
    """The redacted text and how many secrets of each kind were replaced."""

    text: str
    hits: dict[str, int] = field(default_factory=dict)


_ph = placeholder


# --- pass (a): known credential shapes -------------------------------------------------
# Each rule is (kind, triggers, regex, replacer). `triggers` are plain substrings: the regex
# only runs when one of them occurs, so prose without any trigger costs a few memchr scans.
# All quantifiers are bounded or possessive so no input can make a rule backtrack badly.

_Repl = Callable[["re.Match[str]", "Counter[str]"], str]
_Rule = tuple[str, tuple[str, ...], "re.Pattern[str]", _Repl | None]

_ANTHROPIC = re.compile(r"\bsk-ant-(?:api\d\d|oat\d\d|admin\d\d|sid\d\d)-[A-Za-z0-9_\-]{20,}+")
# `sk-` keys must contain a digit so kebab-case words like `sk-learn-style-wrapper` survive.
_OPENAI = re.compile(
    r"\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_\-]{0,200}\d)[A-Za-z0-9_\-]{20,}+")
_GITHUB = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}+|github_pat_[A-Za-z0-9_]{22,}+)")
# Access key ids only (AKIA long-term, ASIA temporary); AIDA/AROA... name users and roles.
_AWS_ID = re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")
_AWS_SECRET = re.compile(
    r"(?i:(aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key|aws_?secret))"
    r"([\"']?\s{0,8}(?:=|:|=>)\s{0,8}[\"']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])")
_SLACK_TOKEN = re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}+")
_SLACK_HOOK = re.compile(
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,}+")
_GOOGLE = re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")
_STRIPE = re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}+|\bwhsec_[A-Za-z0-9]{24,}+")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]*+")
_BEARER = re.compile(r"\b([Bb]earer|BEARER)(\s{1,4})(?!\[REDACTED:)([A-Za-z0-9._~+/\-]{16,}+=*+)")
_URL_PASSWORD = re.compile(
    r"\b([a-zA-Z][a-zA-Z0-9+.\-]{0,30}://)([^\s:/@\"'<>]{0,256}):(?!\[REDACTED:)([^\s@/\"'<>]{1,256})@")


def _repl_url(m: re.Match[str], hits: Counter[str]) -> str:
    hits["url_password"] += 1
    return f"{m.group(1)}{m.group(2)}:{_ph('url_password')}@"


def _repl_aws_secret(m: re.Match[str], hits: Counter[str]) -> str:
    hits["aws_secret_key"] += 1
    return f"{m.group(1)}{m.group(2)}{_ph('aws_secret_key')}"


def _repl_bearer(m: re.Match[str], hits: Counter[str]) -> str:
    # "Bearer authentication_scheme_words" is prose, not a token.
    if not any(c.isdigit() for c in m.group(3)) and _wordlike(m.group(3)):
        return m.group(0)
    hits["bearer_token"] += 1
    return f"{m.group(1)}{m.group(2)}{_ph('bearer_token')}"


_RULES: list[_Rule] = [
    ("anthropic_key", ("sk-ant-",), _ANTHROPIC, None),
    ("openai_key", ("sk-",), _OPENAI, None),
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), _GITHUB, None),
    ("aws_access_key_id", ("AKIA", "ASIA", "ABIA", "ACCA"), _AWS_ID, None),
    ("slack_webhook", ("hooks.slack.com",), _SLACK_HOOK, None),
    ("slack_token", ("xox",), _SLACK_TOKEN, None),
    ("google_api_key", ("AIza",), _GOOGLE, None),
    ("stripe_key", ("_live_", "_test_", "whsec_"), _STRIPE, None),
    ("jwt", ("eyJ",), _JWT, None),
    ("url_password", ("://",), _URL_PASSWORD, _repl_url),
    ("bearer_token", ("Bearer", "bearer", "BEARER"), _BEARER, _repl_bearer),
]

# --- PEM private keys --------------------------------------------------------------------
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----")
# A truncated key (no END line) runs while the text still looks like key material: base64,
# header lines, real newlines, or `\n` escapes when the key sits inside a JSON string.
_PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=\r\n:,\-]|\\{1,4}[nr])*+")
_PEM_MAX = 64 * 1024


def _redact_pem(text: str, hits: Counter[str]) -> str:
    if "PRIVATE KEY" not in text:
        return text
    out: list[str] = []
    pos = 0
    # The first END after a BEGIN is searched once and reused by later BEGINs before it, so
    # thousands of BEGIN lines without an END cost one scan, not one scan each.
    end_m: re.Match[str] | None = None
    end_searched_from = -1
    while True:
        m = _PEM_BEGIN.search(text, pos)
        if m is None:
            break
        if end_searched_from < 0 or (end_m is not None and end_m.start() < m.end()):
            end_m = _PEM_END.search(text, m.end())
            end_searched_from = m.end()
        if end_m is not None and end_m.start() - m.end() <= _PEM_MAX:
            stop = end_m.end()
        else:  # truncated: swallow what still looks like key material
            body = _PEM_BODY.match(text, m.end(), min(len(text), m.end() + _PEM_MAX))
            stop = body.end() if body else m.end()
        out.append(text[pos:m.start()])
        out.append(_ph("private_key"))
        hits["private_key"] += 1
        pos = stop
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# --- credential-named assignments ----------------------------------------------------------
# Anchored on the keyword (never on a leading identifier run, which would backtrack); the
# keyword must end the name (`max_tokens=`, `token_count:` do not match) and the name boundary
# before it is checked in the replacer.
_ASSIGN = re.compile(
    r"(?i:(password|passwd|passphrase|pwd|pass|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|secret[_\-]?key|private[_\-]?key|signing[_\-]?key|client[_\-]?secret|"
    r"credentials?|auth))"
    r"((?:\\?[\"'])?\s{0,8}(?:=|:|=>)\s{0,8})"
    r"(?:(\\?[\"'])((?:[^\"'\\\n]|\\[^\"'\n]){1,512}+)(\\?[\"'])|([^\s,;\"'`(){}\[\]<>]{1,512}+))")
# Lowercase literals each keyword pattern's matches start with (checked against
# _KEYWORD_STARTS below).
_ASSIGN_STARTS = ("pass", "pwd", "secret", "token", "api", "access", "private", "signing",
                  "client", "credential", "auth")
_AUTH_STARTS = ("authorization", "x-api-key", "api-key", "x-auth-token", "private-token")
_AWS_STARTS = ("aws", "secret")
_AUTH_HEADER = re.compile(
    r"(?i:(authorization|x-api-key|api-key|x-auth-token|auth-token|private-token)(\\?[\"']?\s{0,4}:\s{0,4}\\?[\"']?))"
    r"(?:(?i:(bearer|basic|token|bot|digest))\s{1,4})?(?!\[REDACTED:)([A-Za-z0-9._~+/=\-]{8,}+)")
_DOTTED_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\[.*)?")
_PLACEHOLDER_VALUE = re.compile(
    r"\*+|x+|X+|\.\.\.|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|%\(?\w*\)?s|"
    r"\$[0-9]|(?i:none|null|nil|true|false|undefined|redacted|changeme|your[-_a-z]*|str|string|bytes|int|bool|optional.*)")
_TYPEISH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _value_is_secret(value: str, quoted: bool) -> bool:
    """Whether an assigned value should be hidden: literal, not a placeholder or a code reference."""
    if not value or value.startswith(_PLACEHOLDER_PREFIX) or _PLACEHOLDER_VALUE.fullmatch(value):
        return False
    if quoted:
        return True
    # Bare values are often code (`token = get_token`, `password: str`): hide only literals
    # that look like secrets (a digit, a symbol, mixed case) or are long.
    if _DOTTED_IDENT.fullmatch(value) or value.isdigit():
        return False
    if _TYPEISH.fullmatch(value) and not any(c.isdigit() for c in value) and len(value) < 16:
        return False
    return len(value) >= 4


def _assign_repl(m: re.Match[str], hits: Counter[str]) -> str:
    """Hide the value of `password=...`-style assignments, keeping the name and the quotes."""
    start = m.start(1)
    text = m.string
    if start > 0:
        prev = text[start - 1]
        first = text[start]
        # `bypass=`, `mytoken=`: the keyword is the tail of another lowercase word.
        if prev.isalnum() and not (prev.islower() and first.isupper()) and not (
                prev.isupper() and first.isupper()) and not prev.isdigit():
            return m.group(0)
    if m.group(4) is not None:
        if not _value_is_secret(m.group(4), True):
            return m.group(0)
        hits["credential"] += 1
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{_ph('credential')}{m.group(5)}"
    value = m.group(6)
    if not _value_is_secret(value, False):
        return m.group(0)
    hits["credential"] += 1
    return f"{m.group(1)}{m.group(2)}{_ph('credential')}"


def _auth_repl(m: re.Match[str], hits: Counter[str]) -> str:
    """Hide the credential of an `Authorization:`-style header, keeping the scheme."""
    scheme = m.group(3)
    if scheme is None and m.group(4).lower() in {"bearer", "basic", "token"}:
        return m.group(0)
    hits["bearer_token"] += 1
    head = f"{m.group(1)}{m.group(2)}" + (f"{scheme} " if scheme else "")
    return head + _ph("bearer_token")


_KEYWORD_PASSES: tuple[tuple[re.Pattern[str], _Repl], ...] = (
    (_AWS_SECRET, _repl_aws_secret), (_AUTH_HEADER, _auth_repl), (_ASSIGN, _assign_repl))
# Every match of a keyword pass starts with one of these (lowercased) literals; the passes
# are tried only at their offsets (a case-insensitive regex scan of the whole text at every
# position is what made prose slow).
_KEYWORD_STARTS = ("pass", "pwd", "secret", "token", "api", "access", "private", "signing",
                   "client", "credential", "auth", "aws")
# `x-api-key`: the pass tried at `api` matches `api-key`, leaving `x-` in front untouched.
assert all(any(s in k for s in _KEYWORD_STARTS)
           for k in (*_ASSIGN_STARTS, *_AUTH_STARTS, *_AWS_STARTS))


def _keyword_passes(text: str, hits: Counter[str]) -> str:
    """AWS secrets in context, auth headers and credential assignments, in one left-to-right
    walk over the offsets where a keyword starts."""
    low = text.lower()
    if len(low) != len(text):  # a few Unicode letters change length when lowered
        for pattern, repl in _KEYWORD_PASSES:
            text = pattern.sub(_bind(repl, hits), text)
        return text
    offsets: set[int] = set()
    for lit in _KEYWORD_STARTS:
        i = low.find(lit)
        while i >= 0:
            offsets.add(i)
            i = low.find(lit, i + 1)
    if not offsets:
        return text
    out: list[str] = []
    last = 0
    for i in sorted(offsets):
        if i < last:
            continue
        for pattern, repl in _KEYWORD_PASSES:
            m = pattern.match(text, i)
            if m is not None:
                out.append(text[last:i])
                out.append(repl(m, hits))
                last = m.end()
                break
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


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
        if any(map(_suspect, toks)):
            out = _TOKEN.sub(lambda m: _entropy_repl(m, hits), out)
    return Redaction(out, dict(hits))


# One regex search instead of one substring scan per trigger, for trigger families that
# share a literal prefix (sre jumps between occurrences of the prefix): true exactly when
# one of the rule's triggers occurs.
_GATES = {"github_token": re.compile(r"g(?:h[pousr]_|ithub_pat_)"),
          "aws_access_key_id": re.compile(r"A(?:KIA|SIA|BIA|CCA)")}


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
            out, n = pattern.subn(_ph(kind), out)
            if n:
                hits[kind] += n
        else:
            out = pattern.sub(_bind(replacer, hits), out)
    return _keyword_passes(out, hits)


def _bind(fn: _Repl, hits: Counter[str]) -> Callable[[re.Match[str]], str]:
    return lambda m: fn(m, hits)


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
