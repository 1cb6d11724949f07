"""Value judgement for the credential passes: stand-ins, placeholders, code refs, key material."""

from __future__ import annotations

import re
from functools import lru_cache

from looma_git.redact.entropy import PLACEHOLDER_PREFIX as _PLACEHOLDER_PREFIX
from looma_git.redact.entropy import _looks_random as _looks_random_any
from looma_git.redact.entropy import _pathlike as _pathlike_any
from looma_git.redact.entropy import _wordlike, shannon_entropy

_DOTTED_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\[.*)?")
_PLACEHOLDER_VALUE = re.compile(
    r"\*+|x+|X+|\.\.\.|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|%\(?\w*\)?s|"
    r"\$[0-9]|[^\s]{0,16}(?:\.\.\.|\u2026)|"
    r"(?i:none|null|nil|true|false|undefined|redacted|changeme|your[-_a-z]*|str|string|bytes|int|bool|optional.*)")
_TYPEISH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# lowercase, searched in the lowered value (a case-insensitive scan is several times slower)
_FILLER_WORDS = re.compile(r"your[_\-]|_here\b|put[_\-]your|placeholder|changeme|replace[_\-]?me|"
                           r"(?:token|string|key|secret|value)here$")  # `…AccessTokenHere`


def _filler(value: str) -> bool:
    """`ghp_xxxx…`, `AKIAXXXX…`, `0000…aa`, `aaaa…end`, `…_PUT_YOUR_TOKEN_HERE_…`: a stand-in."""
    body = value.rsplit("_", 1)[-1] if "_" in value[:12] else value
    body = body.split("-", 1)[-1] if "-" in body[:8] else body
    flat = body.replace("-", "")
    n = len(flat)
    if n >= 8 and any(flat.count(c) >= 0.6 * n for c in "xX*0#"):
        return True
    return _FILLER_WORDS.search(value.lower()) is not None


def _quoted_code(value: str) -> bool:
    """A quoted "value" that is code around quotes (`" + getPassword() + "`), a CSS selector,
    an ARN or a path: not a literal secret."""
    v = value.strip()
    if not v or v[0] in "+.&,;|" or v[-1] in "+&|" or v.startswith("arn:"):
        return True
    if v[0] in "#." and _words(v[1:]):
        return True
    return v.startswith("/") and _pathlike_any(v)


def _value_is_secret(value: str, quoted: bool) -> bool:
    """Whether an assigned value should be hidden: literal, not a placeholder or a code reference."""
    if not value or value.startswith(_PLACEHOLDER_PREFIX) or _PLACEHOLDER_VALUE.fullmatch(value):
        return False
    if _filler(value):
        return False
    if "[REDACTED:" in value or _ENV_REF.fullmatch(value):
        return False
    if quoted:
        return True
    if _SHELL_EXPANSION.match(value):
        return False  # `$BASE_URL/path`, `${HOME}/x`: composed by the shell, not a literal
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


_SHELL_EXPANSION = re.compile(r"\$\{?[A-Za-z_]")
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


_STRONG = frozenset({"password", "passwd", "passphrase", "pwd", "secret"})
_UUIDISH = re.compile(r"[0-9A-Fa-f]{8}(?:-?[0-9A-Fa-f]{4}){3}-?[0-9A-Fa-f]{12}")


def _named_value_is_secret(name: str, value: str) -> bool:
    """A value right after a credential word (no operator): key material, not the next word."""
    n = len(value)
    digit = _DIGIT_CH.search(value) is not None
    if n < 6 or (n < 16 and not digit):
        return False  # prose goes on with a word here (`the token is`, `secret sauce`)
    if 10 <= n < 16 and len(_DIGIT_CH.findall(value)) >= 4 and len(_ALPHA_CH.findall(value)) >= 3 and (
            not _words(value) and _DOTTED_IDENT.fullmatch(value) is None):
        return True  # `ZYXWV9876543210`, `abcdef12345`: short, but digits mixed in
    last = _LAST_WORD.findall(name.lower())[-1:]
    return _named_value_verdict(bool(last) and last[0] in _STRONG, value, digit)


@lru_cache(maxsize=8192)
def _named_value_verdict(strong: bool, value: str, digit: bool) -> bool:
    if value.startswith(("$", "%")) or _PLACEHOLDER_VALUE.fullmatch(value) or "://" in value:
        return False
    if _filler(value):
        return False
    if _ENV_REF.fullmatch(value) or _DOTTED_IDENT.fullmatch(value) or _pathlike_any(value):
        return False
    n = len(value)
    if _UUIDISH.fullmatch(value) or (n >= 16 and all(c in "0123456789abcdefABCDEF-" for c in value)):
        return True
    alpha = _ALPHA_CH.search(value) is not None
    if n >= 16 and alpha and not _words(value):
        return True
    if n >= 16 and digit and not alpha:
        return True  # a long numeric token (`browshot SECRET 1234…`)
    # short values count only after a strong name: `password 012345abcdef`, `-Password VMware1!`
    return strong and digit and alpha


_DIGIT_CH = re.compile(r"[0-9]")
_ALPHA_CH = re.compile(r"[A-Za-z]")
_LAST_WORD = re.compile(r"password|passwd|passphrase|pwd|secret|token|key|private|access|auth|pat")
_LETTER_RUN = re.compile(r"[A-Za-z]{16,}")
_WORD_SEP = re.compile(r"[_\-.]")
_DIGIT_RUN = re.compile(r"(?<=[A-Za-z])[0-9]{2,}(?=[A-Za-z])")
_LONG_DIGITS = re.compile(r"[0-9]{4,}")


def _words(value: str) -> bool:
    """Made of words: an identifier, a phrase joined by `_-.`; no 16-letter run (no word is
    that long) and no random piece."""
    if _LETTER_RUN.search(value):
        return False
    if len(_DIGIT_RUN.findall(value)) >= 2 or (_LONG_DIGITS.search(value) and not value.isdigit()):
        return False  # `abcd1234ABCD5678`, `abcdefghij1234567890`: digits mixed in, not a name
    pieces = [p for p in _WORD_SEP.split(value) if p]
    return all(p.isdigit() or len(p) <= 3 or _wordlike(p) for p in pieces) and (
        any(_wordlike(p) for p in pieces))
