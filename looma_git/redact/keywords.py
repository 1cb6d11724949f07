"""Keyword-anchored passes: credential-named assignments, auth headers, bare `name value` pairs."""

from __future__ import annotations

import re
from collections import Counter

from looma_git.redact.entropy import placeholder as _ph
from looma_git.redact.shapes import _AWS_SECRET, _bind, _Repl, _repl_aws_secret
from looma_git.redact.values import (
    _PLACEHOLDER_VALUE,
    _STRONG,
    _TYPEISH,
    _UUIDISH,
    _named_value_is_secret,
    _quoted_code,
    _randomish,
    _value_is_secret,
)

# --- credential-named assignments ----------------------------------------------------------
# Anchored on the keyword (never on a leading identifier run, which would backtrack); the
# keyword must end the name (`max_tokens=`, `token_count:` do not match) and the name boundary
# before it is checked in the replacer.
_ASSIGN = re.compile(
    r"(?i:(password|passwd|passphrase|pwd|pass|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|secret[_\-]?key|private[_\-]?key|signing[_\-]?key|client[_\-]?secret|"
    r"credentials?|creds|auth|key|pat|private|access|login|api|client[_\-]?id|account[_\-]?sid))"
    # a short tail after the keyword: `SECRET_KEY_BASE`, `api_key_prod`, `password1`
    r"((?i:[_.\-]?(?:base|value|prod|dev|test|live|b64|base64|enc|hash|id|[0-9]{1,2}))?)"
    # the operator: `=`, `:`, `:=`, `::=`, `:::=`, `?=`, `.=`, `+=`, `=>`, `,` after a quoted
    # name, and typed declarations `var x string =`, `val x: String =`
    r"((?:\\?[\"'`])?(?:[ \t]{1,32}[A-Za-z_][\w\[\]*]{0,30}[ \t]{1,4}=(?![=>])|[ \t]{0,32}"
    r"(?::[ \t]{0,4}[A-Za-z_][\w.\[\]*]{0,30}[ \t]{1,4}=(?!=)|"
    r":{1,3}=|\?=|\.=|\+=|=>|=(?!=)|:(?![:/\\])|,))"
    r"[ \t]{0,32})"
    r"(?:(\\?[\"'`])((?:[^\"'`\\\n]|\\[^\"'`\n]){1,4096}+)(\4|[\"'`](?=[ \t]*(?:$|\n))|(?<=[A-Za-z0-9+/=_\-]{12})$)"
    r"|([^\s,;\"'`(){}\[\]<>\\]{1,4096}+)"
    # a quoted value holding the other quote kinds (`'`123QWERasdf'`, `"7`D'}/v…"`): up to
    # the same quote again, never a piece of it (the first form stops at any quote)
    r"|([\"'`])((?:(?!\8)[^\n]){1,512}?)\8)")
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
    r"(?:(?i:(bearer|basic|token|bot|digest|ssws))\s{1,4})?(?!\[REDACTED:)([A-Za-z0-9._~+/=\-]{8,}+)")


_NAMED_NAMES = frozenset({"pat", "private", "access", "login", "api", "clientid", "client_id",
                          "client-id", "accountsid", "account_sid", "account-sid"})
_TAIL_OK = re.compile(r"(?i:password|passwd|secret|token|api[_\-]?key|apikey|secret[_\-]?key|"
                      r"access[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?)")
# compound `<x>_key` names that name a lookup key, not a credential
_KEY_PREFIX = re.compile(
    r"(?i:primary|foreign|cache|sort|partition|public|unique|hash|dict|lookup|map|row|group|"
    r"index|idempotency|storage|object|s3|redis|i18n|translation|react|list|route|query|"
    r"shortcut|hot|ssh|gpg|pgp|host)[_.\-]?$")
_PARAM_EXPANSION = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*$")


_COORDINATE = re.compile(r"[:.]")
# `aws_access_key_id`, `sumologic.accessId`: the public half of a key pair, kept as secret
# as the key itself by every scanner; other `*_id` names are ids
_KEY_ID_WORDS = frozenset({"access_key", "access-key", "accesskey", "access"})
_KEY_ID_VALUE = re.compile(r"(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{12,128}")


def _assign_repl(m: re.Match[str], hits: Counter[str]) -> str:
    """Hide the value of `password=...`-style assignments, keeping the name and the quotes."""
    start = m.start(1)
    text = m.string
    tail_word = False
    word = m.group(1).lower()
    if start > 0:
        prev = text[start - 1]
        first = text[start]
        # `bypass=`, `monkey=`: the keyword is the tail of another lowercase word (unambiguous
        # credential words may be: `openweatherapikey=`, `csrftoken=`, `dbpassword=`)
        if prev.isalnum() and not (prev.islower() and first.isupper()) and not (
                prev.isupper() and first.isupper()) and not prev.isdigit():
            if _TAIL_OK.fullmatch(m.group(1)) is None:
                return m.group(0)
            tail_word = True
    if text.endswith("${", 0, start) or _PARAM_EXPANSION.search(text, max(0, start - 64), start):
        return m.group(0)  # `${DB_PASSWORD:-default}`: a shell expansion, not an assignment
    op = m.group(3)
    weak = word in _WEAK_NAMES
    # `asana_key`, `getresponseKEY`, `ASANA_PAT`, `buddynsPRIVATE`, `sonar.login`, `MAILCHIMP_API`:
    # the value counts when it looks like key material (`primary_key`, `cache_key` stay weak)
    # `aws_access_key_id`, `secret_id`: an id of a credential, a secret when it looks like one
    id_tail = m.group(2).lower().lstrip("_.-") == "id"
    if id_tail and (word not in _KEY_ID_WORDS or _UUIDISH.fullmatch(
            (m.group(5) or m.group(7) or m.group(9) or "").strip())):
        return m.group(0)  # `kms_key_id`, `credentialsId: <uuid>`: an id; `aws_access_key_id` counts
    named = id_tail or word in _NAMED_NAMES or (
        word == "key" and start > 0 and (
        text[start - 1] in "_.-" or (text[start - 1].islower() and text[start].isupper()))
        and _KEY_PREFIX.search(text, max(0, start - 12), start) is None)
    # `setProperty("X_TOKEN", "v")`: a comma separates name and value only when both are quoted
    comma = op.strip().lstrip("\"'`\\").startswith(",")
    bare_colon = op.rstrip(" \t").endswith(":") and not op.endswith((" ", "\t"))
    if m.group(5) is None and m.group(9) is None and bare_colon and (
            word in _NAMED_NAMES or tail_word) and (
            _COORDINATE.search(m.group(7) or "")):
        return m.group(0)  # `neo4j-graphdb-api:jar:3.5.12`, `io.jsonwebtoken:jjwt-0.11`: coordinates
    if comma and (op[:1] not in "\"'`\\" or (m.group(5) is None and m.group(9) is None)):
        return m.group(0)
    head = f"{m.group(1)}{m.group(2)}{op}"
    if m.group(9) is not None:  # a quoted value holding other quote kinds
        value = m.group(9)
        if comma or _quoted_code(value) or not _value_is_secret(value.strip("\"'`"), True) or (
                (weak or named) and not _randomish(value)):
            return m.group(0)
        hits["credential"] += 1
        return f"{head}{m.group(8)}{_ph('credential')}{m.group(8)}"
    if m.group(5) is not None:
        value = m.group(5)
        if _quoted_code(value):
            return m.group(0)
        # after a comma (`f("X_TOKEN", "v")`, `['A_KEY', 'B_KEY']`) the quotes prove less
        quoted = not comma
        if id_tail:
            if not _value_is_secret(value, True) or not _KEY_ID_VALUE.fullmatch(value):
                return m.group(0)
        elif named:
            if not _value_is_secret(value, True) or not (
                    _named_value_is_secret(word, value) or _randomish(value)):
                return m.group(0)
        elif not _value_is_secret(value, quoted) or (weak and not _randomish(value)):
            return m.group(0)
        hits["credential"] += 1
        return f"{head}{m.group(4)}{_ph('credential')}{m.group(6)}"
    value = m.group(7)
    end = m.end()
    if end < len(text) and text[end] in "([<":  # a call, an index, generics: code, not a literal
        return m.group(0)
    if "::" in value:  # `config.get::<T>`, `Foo::bar`: a path in code
        return m.group(0)
    if id_tail:
        if not _value_is_secret(value, True) or not _KEY_ID_VALUE.fullmatch(value):
            return m.group(0)
    elif named:
        if not _value_is_secret(value, True) or not (
                _named_value_is_secret(word, value) or _randomish(value)):
            return m.group(0)
    elif (not _value_is_secret(value, False) and not _config_literal(word, op, value, text, end, start)) or (weak and not _randomish(value)):
        return m.group(0)
    hits["credential"] += 1
    return f"{head}{_ph('credential')}"


def _config_literal(word: str, op: str, value: str, text: str, end: int, start: int) -> bool:
    """`Password=secret;`, `AUTO_SESSION_PASSWORD=mypassword`: in a connection string or an
    env/ini line (`=` with no spaces, the value ends the field) a bare word after a strong name
    is the password itself, not a variable."""
    if (word not in _STRONG and word != "pass") or not _TYPEISH.fullmatch(value):
        return False
    if value.lower() in {"true", "false", "none", "null", "required", "optional"}:
        return False
    if op != "=":
        # `"Password =word;Initial Catalog=…"` (a connection-string field), PHP
        # `$password = word;` (a bare word is no variable there): spaces around `=` too
        if op.strip() != "=" or not text.startswith(";", end):
            return False
        before = text[max(0, start - 24):start].rstrip(" \t")
        return before.endswith(("$", ";", '"')) or (
            before.endswith("_") and "$" in before[-16:])
    if end >= len(text) or text[end] in ";&\r\n" or text.startswith("\\n", end):
        return True
    return _COMMENT_AFTER.match(text, end) is not None  # `PASSWORD=word    # a comment`


_COMMENT_AFTER = re.compile(r"[ \t]+#")


def _auth_repl(m: re.Match[str], hits: Counter[str]) -> str:
    """Hide the credential of an `Authorization:`-style header, keeping the scheme."""
    scheme = m.group(3)
    if scheme is None and m.group(4).lower() in {"bearer", "basic", "token"}:
        return m.group(0)
    hits["bearer_token"] += 1
    head = f"{m.group(1)}{m.group(2)}" + (f"{scheme} " if scheme else "")
    return head + _ph("bearer_token")


# --- a credential word followed by its value without `=`/`:` ----------------------------------
# `bugsnag secret 123e4567-…`, `PRIVATE TOKEN AbC…`, `cloudplanSECRET-ABCD…`, `--api-key  oy2…`,
# netrc `password 7cc9…`, `-Password VMware1!`: one or more credential words joined by
# space/`-`/`_`, then a value that looks like key material (judged by `_named_value_is_secret`).
_CRED_CHAIN = (r"(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey|key|private|"
               r"access|auth|credentials?|pat)")
_NAMED = re.compile(
    r"(?i:(" + _CRED_CHAIN + r"(?:[ _.\-]{0,2}(?:" + _CRED_CHAIN + r"|code|id))*))"
    r"([ \t]{1,4}[\"'`]?|[-._])"
    r"(?!\[REDACTED:)([A-Za-z0-9][A-Za-z0-9_+/=.~!@#^*\-]{5,4095}+)")
# `password is 'x'`, `password == "x"`, `creds.Secret != "x"`: a quoted literal compared with
# (or declared as) a credential
_NAMED_QUOTED = re.compile(
    r"(?i:(password|passwd|passphrase|pwd|pass|secret|token|api[_\-]?key|apikey))"
    r"([ \t]{1,4}(?:is|was)[ \t]{1,4}|[ \t]{0,4}(?:===?|!==?)[ \t]{0,4})"
    r"([\"'`])([^\"'`\n]{1,256})\3")


_HEXISH = re.compile(r"[0-9a-fA-F]{20,}")


def _named_repl(m: re.Match[str], hits: Counter[str]) -> str:
    start = m.start(1)
    text = m.string
    if start > 0:
        prev, first = text[start - 1], text[start]
        # `mytoken abc`: the word is the tail of another lowercase word
        tail = prev.isalnum() and not (prev.islower() and first.isupper()) and not (
            prev.isupper() and first.isupper()) and not prev.isdigit()
        # glued to a vendor word (`codatoken-<uuid>`, `shortcutaccess <uuid>`) only with a
        # value no word could be
        v = m.group(3).rstrip(".,;:")
        if tail and not (_UUIDISH.fullmatch(v) or _HEXISH.fullmatch(v)):
            return m.group(0)
    value = m.group(3).rstrip(".,;:")
    if not value or not _named_value_is_secret(m.group(1), value):
        return m.group(0)
    if m.group(2) in "._" and not (_UUIDISH.fullmatch(value) or _HEXISH.fullmatch(value)):
        return m.group(0)  # `token_count`, `secret.value`: names; only hex/uuid glue by `._`
    hits["credential"] += 1
    if m.group(2) in "-._":
        # `cloudplanSECRET-ABCD…`, `tskey-secret-…`: one glued token, replaced whole (the
        # caller splices from m.start(), so the vendor part before it is cut below)
        return _ph("credential") + m.group(3)[len(value):]
    return f"{m.group(1)}{m.group(2)}{_ph('credential')}{m.group(3)[len(value):]}"


def _named_quoted_repl(m: re.Match[str], hits: Counter[str]) -> str:
    start = m.start(1)
    text = m.string
    if start > 0 and text[start - 1].isalpha() and text[start - 1].islower() and text[start].islower():
        return m.group(0)
    value = m.group(4)
    if not value.strip() or _PLACEHOLDER_VALUE.fullmatch(value) or value.startswith(("$", "%")):
        return m.group(0)
    hits["credential"] += 1
    return f"{m.group(1)}{m.group(2)}{m.group(3)}{_ph('credential')}{m.group(3)}"


_KEYWORD_PASSES: tuple[tuple[re.Pattern[str], _Repl], ...] = (
    (_AWS_SECRET, _repl_aws_secret), (_AUTH_HEADER, _auth_repl), (_ASSIGN, _assign_repl),
    (_NAMED_QUOTED, _named_quoted_repl), (_NAMED, _named_repl))
# Every match of a keyword pass starts with one of these (lowercased) literals; the passes
# are tried only at their offsets (a case-insensitive regex scan of the whole text at every
# position is what made prose slow).
_KEYWORD_STARTS = ("pass", "pwd", "secret", "token", "api", "access", "private", "signing",
                   "client", "cred", "auth", "aws", "key", "pat", "login", "account")
# `x-api-key`: the pass tried at `api` matches `api-key`, leaving `x-` in front untouched.
assert all(any(s in k for s in _KEYWORD_STARTS)
           for k in (*_ASSIGN_STARTS, *_AUTH_STARTS, *_AWS_STARTS))


# Longest first; non-overlapping matches give the same offsets as one scan per literal (no
# keyword start lies inside another's match), at a third of the cost of a lookahead scan.
_KEYWORD_AT = re.compile("|".join(map(re.escape, sorted(_KEYWORD_STARTS, key=len, reverse=True))))


# Matches wherever any of the keyword passes could match (their union; `_NAMED_QUOTED`'s
# backreference loosened), so offsets where none can are skipped with one regex call.
# A prefilter, so each pattern is cut after what must follow its keyword (the name and the
# operator, then one value character): matching it is a few steps at an offset, not a scan of
# a 4 KB value, and the backreferences (whose numbers shift in a union) are gone.
_ASSIGN_LOOSE = (_ASSIGN.pattern[:_ASSIGN.pattern.index(r"[ \t]{0,32})(?:(") + len(r"[ \t]{0,32})")]
                 + r"[^\s,;(){}\[\]<>]")
_NAMED_LOOSE = _NAMED.pattern.replace("{5,4095}+)", "{5})")
_AUTH_LOOSE = _AUTH_HEADER.pattern.replace("{8,}+)", "{8})")
_ANY_KEYWORD_PASS = re.compile("|".join(
    f"(?:{p})" for p in (_AWS_SECRET.pattern, _AUTH_LOOSE, _ASSIGN_LOOSE, _NAMED_LOOSE,
                         _NAMED_QUOTED.pattern.replace("\\3", "[\"'`]"))))
assert _NAMED.pattern != _NAMED_LOOSE and _AUTH_HEADER.pattern != _AUTH_LOOSE
assert "\\4" not in _ASSIGN_LOOSE and "\\8" not in _ASSIGN_LOOSE


def _keyword_passes(text: str, hits: Counter[str]) -> str:
    """AWS secrets in context, auth headers and credential assignments, in one left-to-right
    walk over the offsets where a keyword starts."""
    low = text.lower()
    if len(low) != len(text):  # a few Unicode letters change length when lowered
        for pattern, repl in _KEYWORD_PASSES:
            text = pattern.sub(_bind(repl, hits), text)
        return text
    offsets = [m.start() for m in _KEYWORD_AT.finditer(low)]
    if not offsets:
        return text
    out: list[str] = []
    last = 0
    any_at = _ANY_KEYWORD_PASS.match
    for i in offsets:
        if i < last or any_at(text, i) is None:  # one test for all five passes first
            continue
        for pattern, repl in _KEYWORD_PASSES:
            m = pattern.match(text, i)
            if m is not None:
                new = repl(m, hits)
                if new == m.group(0):  # not a credential here: later offsets still count
                    continue
                j = i
                if pattern is _NAMED and m.group(2) == "-":  # the glued token goes whole
                    while j > last and (text[j - 1].isalnum() or text[j - 1] in "_-"):
                        j -= 1
                out.append(text[last:j])
                out.append(new)
                last = m.end()
                break
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
