"""Hand-written credential shapes (pass a): the provider-token rules, their gates and PEM keys."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from looma_git.redact.entropy import _wordlike
from looma_git.redact.entropy import placeholder as _ph

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
_STRIPE = re.compile(r"\b(?:sk|rk)_(?:live|test)_(?=[0-9A-Za-z]{0,99}[0-9])[0-9A-Za-z]{12,}+|\bwhsec_[A-Za-z0-9]{24,}+")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]*+")
_BEARER = re.compile(r"\b([Bb]earer|BEARER)(\s{1,4})(?!\[REDACTED:)([A-Za-z0-9._~+/\-]{16,}+=*+)")
# crypt(3) / hashcat-style password hashes: `$1$salt$hash`, `$6$rounds=5000$…`, bcrypt `$2b$12$…`,
# yescrypt `$y$`, Cisco `$8$`/`$9$`, Kerberos `$krb5asrep$23$…`: an offline-crackable password.
_PW_HASH = re.compile(
    r"\$(?:1|2[abxy]?|5|6|7|8|9|y|gy|7|apr1|md5|sha1|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d{1,3})?"
    r"|krb5(?:asrep|tgs|pa)?)\$[^\s$\"'`]{1,64}\$[A-Za-z0-9./+=:@_$\-]{8,1024}+")
# A URL whose path names a webhook carries its secret in the rest of the path (Teams, Discord,
# Zapier, Tines, generic `/webhooks/<id>/<token>`): the whole URL goes.
_WEBHOOK_URL = re.compile(
    r"\b(https?://[A-Za-z0-9.\-]{3,253}(?::\d{1,5})?/(?:[^\s\"'<>`?#/]{1,64}/){0,4}"
    r"(?i:webhooks?|hooks|incomingwebhook|webhookb2)/)(?!\[REDACTED:)([^\s\"'<>`]{16,2048}+)")
_URL_PASSWORD = re.compile(
    r"\b([a-zA-Z][a-zA-Z0-9+.\-]{0,30}://)([^\s:/@\"'<>]{0,256}):(?!\[REDACTED:)([^\s/\"'<>]{1,256})@"
    r"(?=[^\s@/\"'<>]*(?:[/?#\s\"'<>]|$))([^\s\"'<>`]*)")


def _repl_url(m: re.Match[str], hits: Counter[str]) -> str:
    pw = m.group(3)
    if pw[0] in "$%{<" or set(pw) <= {"*", "x", "X"}:
        return m.group(0)  # `user:$password@`, `user:*****@`: a stand-in, not a password
    hits["url_password"] += 1
    # the whole URL goes: scheme, user and host say where the password works, and scanners
    # count the connection URI as the secret (`mongodb+srv://user:pw@cluster0.….net/db`)
    tail = m.group(4)
    keep = len(tail) - len(tail.rstrip(".,;:!?)]}"))  # sentence punctuation after the URL
    return _ph("url_password") + (tail[len(tail) - keep:] if keep else "")


def _repl_webhook(m: re.Match[str], hits: Counter[str]) -> str:
    rest = m.group(2)
    if sum(c.isdigit() for c in rest) < 4 or _wordlike(rest.replace("/", "")):
        return m.group(0)  # `/hooks/pre-commit-config`: a page, not a secret
    hits["webhook"] += 1
    return _ph("webhook")  # the whole URL: posting to it is the credential


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
    ("webhook", ("hook",), _WEBHOOK_URL, _repl_webhook),
    ("url_password", ("://",), _URL_PASSWORD, _repl_url),
    ("bearer_token", ("Bearer", "bearer", "BEARER"), _BEARER, _repl_bearer),
    ("password_hash", ("$",), _PW_HASH, None),
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


# One regex search instead of one substring scan per trigger, for trigger families that
# share a literal prefix (sre jumps between occurrences of the prefix): true exactly when
# one of the rule's triggers occurs.
_GATES = {"github_token": re.compile(r"g(?:h[pousr]_|ithub_pat_)"),
          "aws_access_key_id": re.compile(r"A(?:KIA|SIA|BIA|CCA)"),
          "password_hash": re.compile(r"\$(?:[0-9]|2[abxy]|g?y\$|apr1|md5|sha1|argon2|scrypt|pbkdf2|krb5)")}


def _bind(fn: _Repl, hits: Counter[str]) -> Callable[[re.Match[str]], str]:
    return lambda m: fn(m, hits)
