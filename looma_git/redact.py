"""Secret redaction: known credential shapes, then a Shannon-entropy fallback with an allowlist."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import filterfalse
from typing import Any

from looma_git.redact_entropy import _DIGEST_CTX as _DIGEST_CTX_SHARED
from looma_git.redact_entropy import (  # noqa: F401  (re-exported for callers and benches)
    _GLUED,
    _HEX,
    _TOKEN,
    _UUID,
    ENTROPY_MIN_BITS,
    ENTROPY_MIN_LEN,
    PLACEHOLDER,
    PLACEHOLDER_PREFIX,
    _entropy_repl,
    _suspect,
    _unit,
    _wordlike,
    glued_suspect,
    placeholder,
    redact_entropy_pass,
    shannon_entropy,
)
from looma_git.redact_entropy import _looks_random as _looks_random_any
from looma_git.redact_entropy import _pathlike as _pathlike_any

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
_SLACK_TOKEN = re.compile(
    r"\b(?:xox[abpsre]-(?=[A-Za-z0-9\-]{0,24}\d)[A-Za-z0-9\-]{10,}+|xoxe\.xox[bp]-\d-[A-Za-z0-9]{20,}+"
    r"|xoxo-\d{1,16}-\d{1,16}-\d{1,16}-[A-Fa-f0-9]{8,}+|(?i:xapp)-\d-[A-Za-z0-9\-]{10,}+)")
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
    ("slack_token", ("xox", "xapp"), _SLACK_TOKEN, None),
    ("google_api_key", ("AIza",), _GOOGLE, None),
    ("stripe_key", ("_live_", "_test_", "whsec_"), _STRIPE, None),
    ("jwt", ("eyJ",), _JWT, None),
    ("url_password", ("://",), _URL_PASSWORD, _repl_url),
    ("bearer_token", ("Bearer", "bearer", "BEARER"), _BEARER, _repl_bearer),
]

# --- PEM private keys --------------------------------------------------------------------
_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9_\-]{0,100}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9_\-]{0,100}?PRIVATE KEY(?: BLOCK)?-----|KEY(?: BLOCK)?-----")
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
    r"credentials?|creds|auth|key))"
    # a short tail after the keyword: `SECRET_KEY_BASE`, `api_key_prod`, `password1`
    r"((?i:[_.\-]?(?:base|value|prod|dev|test|live|b64|base64|enc|hash|[0-9]{1,2}))?)"
    # the operator: `=`, `:`, `:=`, `::=`, `:::=`, `?=`, `.=`, `+=`, `=>`, `,` after a quoted
    # name, and typed declarations `var x string =`, `val x: String =`
    r"((?:\\?[\"'`])?[ \t]{0,8}(?::[ \t]{0,4}[A-Za-z_][\w.\[\]*]{0,30}[ \t]{1,4}=(?!=)|"
    r"[A-Za-z_][\w\[\]*]{0,30}[ \t]{1,4}=(?![=>])|:{1,3}=|\?=|\.=|\+=|=>|=(?!=)|:(?![:/\\])|,)"
    r"[ \t]{0,8})"
    r"(?:(\\?[\"'`])((?:[^\"'`\\\n]|\\[^\"'`\n]){1,512}+)(\\?[\"'`])"
    r"|([^\s,;\"'`(){}\[\]<>\\]{1,512}+))")
# Names that are credentials only when the value looks random (`key: value`, `auth: true`).
_WEAK_NAMES = frozenset({"key", "auth"})
# Lowercase literals each keyword pattern's matches start with (checked against
# _KEYWORD_STARTS below).
_ASSIGN_STARTS = ("pass", "pwd", "secret", "token", "api", "access", "private", "signing",
                  "client", "credential", "cred", "auth", "key")
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
    if "[REDACTED:" in value or _ENV_REF.fullmatch(value):
        return False
    if quoted:
        return True
    # Bare values are often code (`token = get_token`, `password: str`): hide only literals
    # that look like secrets (a digit, a symbol, mixed case) or are long.
    if value.isdigit():
        return len(value) >= 12  # a numeric id or PIN long enough to be one
    if _DOTTED_IDENT.fullmatch(value) and all(
            (len(p) <= 12 and not any(c.isdigit() for c in p)) or _wordlike(p)
            for p in value.split(".")):
        return False
    if _TYPEISH.fullmatch(value) and not any(c.isdigit() for c in value) and (
            len(value) < 16 or ("_" in value and (value.islower() or value.isupper()))):
        return False  # a type or a snake_case / CONSTANT_CASE variable name
    return len(value) >= 4


_ENV_REF = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*%|\$\(.*\)|\$\{\{.*\}\}|@[A-Za-z_]+@")


def _randomish(value: str) -> bool:
    """A value that would be a secret whatever the name: long, mixed, not a word or path."""
    if len(value) < 12 or value.startswith(_PLACEHOLDER_PREFIX) or "[REDACTED:" in value:
        return False
    if _PLACEHOLDER_VALUE.fullmatch(value) or _ENV_REF.fullmatch(value) or _DOTTED_IDENT.fullmatch(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return _looks_random_any(value)
    return not _wordlike(value) and not _pathlike_any(value) and shannon_entropy(value) >= 3.0


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
    op = m.group(3)
    weak = m.group(1).lower() in _WEAK_NAMES
    # `setProperty("X_TOKEN", "v")`: a comma separates name and value only when both are quoted
    comma = op.strip().lstrip("\"'`\\").startswith(",")
    if comma and (op[:1] not in "\"'`\\" or m.group(5) is None):
        return m.group(0)
    head = f"{m.group(1)}{m.group(2)}{op}"
    if m.group(5) is not None:
        value = m.group(5)
        # after a comma (`f("X_TOKEN", "v")`, `['A_KEY', 'B_KEY']`) the quotes prove less
        quoted = not comma
        if not _value_is_secret(value, quoted) or (weak and not _randomish(value)):
            return m.group(0)
        hits["credential"] += 1
        return f"{head}{m.group(4)}{_ph('credential')}{m.group(6)}"
    value = m.group(7)
    end = m.end()
    if end < len(text) and text[end] in "([":  # a call or an index: code, not a literal
        return m.group(0)
    if not _value_is_secret(value, False) or (weak and not _randomish(value)):
        return m.group(0)
    hits["credential"] += 1
    return f"{head}{_ph('credential')}"


# --- structural contexts the assignment regex cannot see ---------------------------------
_CRED_WORD = re.compile(
    r"(?i:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"private[_\-]?key|client[_\-]?secret|credentials?|key)(?:[_.\-]?[0-9]{1,2})?$")
_XML_KV = re.compile(
    r"(?i:\b(?:key|name)\s{0,4}=\s{0,4}\"([^\"<>]{1,80})\"(\s{1,64}value\s{0,4}=\s{0,4}\"))([^\"]{1,512})\"")
_XML_ELEM = re.compile(
    r"<([A-Za-z][\w.\-]{0,60}?(?i:password|passwd|secret|token|api[_\-]?key|apikey|key|"
    r"credentials?|pwd))>(\s{0,40})([^<>\s]{1,512})(\s{0,40})</\1>")
_CURL_USER = re.compile(
    r"(?<!\S)(?:-u|--user)(?:=|[ \t]{1,5})([\"']?)([^\s:\"']{1,128}):([\"']?)([^\s\"']{1,512})\3\1")


def _name_is_credential(name: str) -> tuple[bool, bool]:
    """(credential name?, weak name needing a random-looking value?)"""
    m = _CRED_WORD.search(name)
    if m is None:
        return False, False
    word = m.group(0).lower().rstrip("0123456789_.-")
    return True, word == "key"


def _structural(text: str, hits: Counter[str]) -> str:
    """XML key/value attributes and elements, and `curl -u user:pass`."""
    if "value" in text or "Value" in text or "VALUE" in text:
        def kv(m: re.Match[str]) -> str:
            cred, weak = _name_is_credential(m.group(1))
            v = m.group(3)
            if not cred or not _value_is_secret(v, True) or (weak and not _randomish(v)):
                return m.group(0)
            hits["credential"] += 1
            return m.group(0)[:m.start(3) - m.start(0)] + _ph("credential") + '"'
        text = _XML_KV.sub(kv, text)
    if "</" in text:
        def elem(m: re.Match[str]) -> str:
            _, weak = _name_is_credential(m.group(1))
            v = m.group(3)
            if not _value_is_secret(v, True) or (weak and not _randomish(v)):
                return m.group(0)
            hits["credential"] += 1
            return f"<{m.group(1)}>{m.group(2)}{_ph('credential')}{m.group(4)}</{m.group(1)}>"
        text = _XML_ELEM.sub(elem, text)
    if "-u" in text or "--user" in text:
        def curl(m: re.Match[str]) -> str:
            v = m.group(4)
            if v.startswith(("$", "%", _PLACEHOLDER_PREFIX)) or _PLACEHOLDER_VALUE.fullmatch(v):
                return m.group(0)
            hits["credential"] += 1
            return (m.group(0)[:m.start(4) - m.start(0)] + _ph("credential") + m.group(3)
                    + m.group(1))
        text = _CURL_USER.sub(curl, text)
    return text


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
                   "client", "cred", "auth", "aws", "key")
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
                new = repl(m, hits)
                if new == m.group(0):  # not a credential here: later offsets still count
                    continue
                out.append(text[last:i])
                out.append(new)
                last = m.end()
                break
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


# --- pass (c): provider token shapes from the public catalog (looma_git/redact_rules.py) ------
# A rule runs only when one of its keywords occurs in the lowercased text; which keywords occur
# is found by one regex scan (a trie of all keywords) instead of one substring scan each.


@dataclass(frozen=True)
class _CatalogRule:
    rule_id: str
    family: str
    pattern: re.Pattern[str]
    entropy: float


def _trie_regex(words: list[str]) -> str:
    """One alternation for many literals, factored by common prefix so sre tries few branches."""
    trie: dict[str, Any] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if "" in node:
            alts.append("")
        if len(alts) == 1:
            return alts[0]
        return "(?:" + "|".join(alts) + ")"
    return emit(trie)


def _load_catalog() -> tuple[re.Pattern[str], dict[str, list[_CatalogRule]]]:
    from looma_git.redact_rules import CATALOG

    by_kw: dict[str, list[_CatalogRule]] = {}
    for rule_id, family, keywords, regex, entropy in CATALOG:
        rule = _CatalogRule(rule_id, family, re.compile(regex), entropy)
        for kw in keywords:
            by_kw.setdefault(kw, []).append(rule)
    return re.compile(_trie_regex(sorted(by_kw))), by_kw


_CATALOG_KW, _CATALOG_BY_KW = _load_catalog()
# Characters a token continues with: a match is widened over them so the whole token goes.
_TOKEN_CH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=~|%")
_TOKEN_JOIN = frozenset(".:")  # continue a token only when a token character follows


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole token around text[start:end]: never leave a piece of it behind."""
    n = len(text)
    while start > 0 and ((text[start - 1] in _TOKEN_CH and text[start - 1] not in "=/|%")
                         or (text[start - 1] in "." and start > 1 and text[start - 2] in _TOKEN_CH)):
        start -= 1
    while end < n and (text[end] in _TOKEN_CH or (
            text[end] in _TOKEN_JOIN and end + 1 < n and text[end + 1] in _TOKEN_CH)):
        end += 1
    return start, end


# Catalog secrets are long tokens: keywords are looked for only inside runs of 16+ characters
# without whitespace, quotes or brackets (prose has few), plus the few keywords that span
# such characters, in the whole text.
_CATALOG_TOKEN = re.compile(r"[^\s\"'`<>(){}\[\],;]{16,}+")
_CATALOG_SPACED = tuple(k for k in _CATALOG_BY_KW if re.search(r"[\s\"'`<>(){}\[\],;]", k))


def _catalog_pass(text: str, hits: Counter[str]) -> str:
    toks = _CATALOG_TOKEN.findall(text)
    found = set(_CATALOG_KW.findall(" ".join(toks).lower())) if toks else set()
    spaced: set[str] = set()
    if _CATALOG_SPACED:
        low = text.lower()
        spaced = {k for k in _CATALOG_SPACED if k in low}
    if not found and not spaced:
        return text
    n = len(text)
    # where each found keyword occurs: rules run on those tokens (a margin of two characters
    # each side for their boundary tests), not over the whole text
    tok_spans = [(m.start(), m.end(), m.group(0).lower()) for m in _CATALOG_TOKEN.finditer(text)]
    spans: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for kw in sorted(found | spaced):
        windows = [(0, n)] if kw in spaced else [
            (max(0, a - 2), min(n, b + 2)) for a, b, low_tok in tok_spans if kw in low_tok]
        for rule in _CATALOG_BY_KW.get(kw, ()):
            if rule.rule_id in seen:
                continue
            seen.add(rule.rule_id)
            for lo, hi in windows:
                for m in rule.pattern.finditer(text, lo, hi):
                    g = 1 if rule.pattern.groups else 0
                    # a group that is only a repeated piece of the match is not the secret
                    if m.group(g) is None or 2 * (m.end(g) - m.start(g)) < m.end() - m.start():
                        g = 0
                    secret = m.group(g)
                    if rule.entropy and shannon_entropy(secret) < rule.entropy:
                        continue
                    if "[REDACTED:" in secret or _PLACEHOLDER_VALUE.fullmatch(secret) or (
                            _ENV_REF.fullmatch(secret)):
                        continue
                    a, b = _widen(text, m.start(g), m.end(g))
                    spans.append((a, b, rule.family))
    if not spans:
        return text
    return _splice(text, spans, hits)


def _splice(text: str, spans: list[tuple[int, int, str]], hits: Counter[str]) -> str:
    """Replace non-overlapping spans (overlaps merged, the first kind wins) by placeholders."""
    spans.sort()
    out: list[str] = []
    last = 0
    cur: list[Any] | None = None
    merged: list[list[Any]] = []
    for a, b, kind in spans:
        if cur is not None and a < cur[1]:
            cur[1] = max(cur[1], b)
            continue
        cur = [a, b, kind]
        merged.append(cur)
    for a, b, kind in merged:
        out.append(text[last:a])
        out.append(_ph(kind))
        hits[kind] += 1
        last = b
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
        if any(map(_suspect, toks)) or any(map(glued_suspect, _GLUED.findall(out))):
            out = redact_entropy_pass(out, hits)
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
    out = _catalog_pass(out, hits)
    out = _structural(out, hits)
    return _keyword_passes(out, hits)


def _bind(fn: _Repl, hits: Counter[str]) -> Callable[[re.Match[str]], str]:
    return lambda m: fn(m, hits)


_HAND_FAMILIES = {
    "anthropic_key": "anthropic", "openai_key": "openai", "github_token": "github",
    "aws_access_key_id": "aws", "aws_secret_key": "aws", "slack_token": "slack",
    "slack_webhook": "slack", "google_api_key": "gcp", "stripe_key": "stripe", "jwt": "jwt",
    "bearer_token": "bearer_token", "url_password": "url_password", "private_key": "private_key",
    "credential": "credential", "high_entropy": "high_entropy", "shared_gate": "shared_gate"}


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


# --- the stricter gate for text bound for git ----------------------------------------------
# What is written under refs/looma/* and refs/notes/looma is pushed and shared: a quote or a
# summary that still holds anything key-like after redaction is cut at that token (the text
# before it is kept). Shorter tokens and a lower entropy floor than the local pass.
_SHARED_TOKEN = re.compile(r"[A-Za-z0-9_+/\-]{16,}+={0,3}")
SHARED_MIN_BITS = 3.3


@lru_cache(maxsize=8192)
def _shared_suspect(tok: str) -> bool:
    from looma_git.redact_entropy import _is_allowed

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
