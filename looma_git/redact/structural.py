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


# `psexec \\host -u Administrator -p dev_admin`, `mysql -u root -pS3cret`: the password flag
# after a user flag
_USER_PASS_FLAGS = re.compile(
    r"(?<!\S)-u[ \t]{0,4}[^\s\"']{1,128}[ \t]{1,4}-p(?:[ \t]{1,4}|(?=[^\s-]))([\"']?)([^\s\"']{3,256})\1")


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
