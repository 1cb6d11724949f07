"""Structural credential contexts: XML key/value attributes and elements, `curl -u`, `-u … -p`."""

from __future__ import annotations

import re
from collections import Counter

from looma_git.redact.entropy import PLACEHOLDER_PREFIX as _PLACEHOLDER_PREFIX
from looma_git.redact.entropy import placeholder as _ph
from looma_git.redact.values import _PLACEHOLDER_VALUE, _randomish, _value_is_secret

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


# `curl -H 'Jenkins-Crumb: <v>'`, `-H "X-Vault-Token: <v>"`: a header whose name says it holds
# a credential, in a `-H`/`--header` flag
_CURL_HEADER = re.compile(
    r"(?<!\S)(?:-H|--header)[ \t]{1,4}([\"'])([A-Za-z][A-Za-z0-9\-]{0,40}"
    r"(?i:token|crumb|key|secret|password|auth|session|cookie|signature))[ \t]*:[ \t]*"
    r"(?!\[REDACTED:)([^\s\"'$%{<][^\"'\n]{5,2048}?)\1")
# `psexec \\host -u Administrator -p dev_admin`, `mysql -u root -pS3cret`: the password flag
# after a user flag
_USER_PASS_FLAGS = re.compile(
    r"(?<!\S)-u[ \t]{0,4}[^\s\"']{1,128}[ \t]{1,4}-p(?:[ \t]{1,4}|(?=[^\s-]))([\"']?)([^\s\"']{3,256})\1")


# Gradle/Groovy/Ruby DSL lines: `password 'secret'`, `password "SOME_PASSWORD"` (a method call
# without parentheses), the credential word alone at the start of its line
_DSL_QUOTED = re.compile(
    r"(?im:^[ \t]*(password|passwd|passphrase|pwd|secret)[ \t]{1,8}([\"'])([^\"'\n]{1,256})\2"
    r"(?=[ \t]*(?:[,;)}]|$)))")
# prose: `the password for user 'postgres' is 'admin'`, `The default password … is "pyne".`
_PROSE_QUOTED = re.compile(
    r"(?i:\b(password|passwd|passphrase)\b([^\n.!?\"'`]{0,48}?[\"'][^\"'\n]{1,40}[\"'][^\n.!?\"'`]{0,24}?|"
    r"[^\n.!?\"'`]{0,48}?)\b(?:is|was)[ \t]{1,4}([\"'])([^\"'\n]{1,64})\3)")
_PROSE_NOT_SECRET = frozenset({"required", "optional", "empty", "set", "wrong", "incorrect",
                               "invalid", "correct", "missing", "null", "none", "hidden",
                               "masked", "redacted", "changed", "expired", "weak", "strong"})
# constructors taking a user and a password: the password argument, when a string literal
_CRED_CALL = re.compile(
    r"\b(NetworkCredential|DirectoryEntry|PasswordAuthentication|UsernamePasswordCredentials?|"
    r"UsernamePasswordAuthenticationToken|HTTPBasicAuth|HTTPDigestAuth|BasicAuth|"
    r"PasswordCredential|SqlCredential)[ \t]*\(")
_ARG = re.compile(r"\s*(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|[^,()\"']+(?:\([^()]*\))?)\s*([,)])")
_CRED_CALL_HINTS = ("Credential", "DirectoryEntry", "PasswordAuth", "BasicAuth", "DigestAuth")
_PW_ARG = {"DirectoryEntry": 2}  # (path, user, password); the others: (user, password, …)


def _cred_call_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for m in _CRED_CALL.finditer(text):
        pos = m.end()
        args: list[tuple[int, int, str]] = []
        while len(args) < 4:
            a = _ARG.match(text, pos)
            if a is None:
                break
            args.append((a.start(1), a.end(1), a.group(1)))
            pos = a.end()
            if a.group(2) == ")":
                break
        i = _PW_ARG.get(m.group(1), 1)
        if len(args) > i and args[i][2][:1] in "\"'" and args[i - 1][2][:1] in "\"'":
            a0, b0, lit = args[i]
            v = lit[1:-1]
            if v and not v.startswith(("$", "%", _PLACEHOLDER_PREFIX)) and not (
                    _PLACEHOLDER_VALUE.fullmatch(v)):
                spans.append((a0 + 1, b0 - 1))
    return spans


def _name_is_credential(name: str) -> tuple[bool, bool]:
    """(credential name?, weak name needing a random-looking value?)"""
    m = _CRED_WORD.search(name)
    if m is None:
        return False, False
    word = m.group(0).lower().rstrip("0123456789_.-")
    return True, word == "key"


def _structural(text: str, hits: Counter[str]) -> str:
    """XML key/value attributes and elements, DSL and prose password literals, credential
    constructors, and `curl -u user:pass`."""
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
    pw_word = "ass" in text or "ASS" in text  # password, passwd, passphrase, any case
    if pw_word or "wd" in text or "WD" in text or "ecret" in text or "ECRET" in text:
        def dsl(m: re.Match[str]) -> str:
            v = m.group(3)
            if v.startswith(("$", "%", _PLACEHOLDER_PREFIX)) or _PLACEHOLDER_VALUE.fullmatch(v):
                return m.group(0)
            hits["credential"] += 1
            return m.group(0)[:m.start(3) - m.start(0)] + _ph("credential") + m.group(2)
        text = _DSL_QUOTED.sub(dsl, text)
    if pw_word and (" is " in text or " was " in text):
        def prose(m: re.Match[str]) -> str:
            v = m.group(4)
            if v.lower() in _PROSE_NOT_SECRET or v.startswith(("$", "%", _PLACEHOLDER_PREFIX)) or (
                    _PLACEHOLDER_VALUE.fullmatch(v)):
                return m.group(0)
            hits["credential"] += 1
            return m.group(0)[:m.start(4) - m.start(0)] + _ph("credential") + m.group(3)
        text = _PROSE_QUOTED.sub(prose, text)
    if "(" in text and any(w in text for w in _CRED_CALL_HINTS):
        spans = _cred_call_spans(text)
        for a, b in reversed(spans):
            hits["credential"] += 1
            text = text[:a] + _ph("credential") + text[b:]
    if "-H" in text or "--header" in text:
        def header(m: re.Match[str]) -> str:
            v = m.group(3)
            if _PLACEHOLDER_VALUE.fullmatch(v) or v.lower().startswith(("bearer [", "basic [")):
                return m.group(0)
            hits["credential"] += 1
            return m.group(0)[:m.start(3) - m.start(0)] + _ph("credential") + m.group(1)
        text = _CURL_HEADER.sub(header, text)
    if "-u" in text or "--user" in text:
        def curl(m: re.Match[str]) -> str:
            v = m.group(4)
            if v.startswith(("$", "%", _PLACEHOLDER_PREFIX)) or _PLACEHOLDER_VALUE.fullmatch(v):
                return m.group(0)
            if len(set(v)) == 1 and len(set(m.group(2))) == 1:
                return m.group(0)  # `xxx:yyy`: a stand-in pair
            hits["credential"] += 1
            # `user:pass` goes whole: the pair is the credential (a mail address as user too)
            return (m.group(0)[:m.start(2) - m.start(0)] + _ph("credential") + m.group(3)
                    + m.group(1))
        text = _CURL_USER.sub(curl, text)

        def user_pass(m: re.Match[str]) -> str:
            v = m.group(2)
            if v.startswith(("$", "%", _PLACEHOLDER_PREFIX)) or _PLACEHOLDER_VALUE.fullmatch(v):
                return m.group(0)
            hits["credential"] += 1
            return m.group(0)[:m.start(2) - m.start(0)] + _ph("credential")
        text = _USER_PASS_FLAGS.sub(user_pass, text)
    return text
