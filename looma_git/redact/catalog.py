"""The public-catalog pass (pass c): provider token shapes from redact.rules, found by keyword."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from looma_git.redact.entropy import placeholder as _ph
from looma_git.redact.entropy import shannon_entropy
from looma_git.redact.values import _ENV_REF, _PLACEHOLDER_VALUE, _filler

# --- pass (c): provider token shapes from the public catalog (looma_git/redact/rules.py) ------
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
    from looma_git.redact.rules import CATALOG
    from looma_git.redact.rules_extra import EXTRA

    by_kw: dict[str, list[_CatalogRule]] = {}
    for rule_id, family, keywords, regex, entropy in (*CATALOG, *EXTRA):
        rule = _CatalogRule(rule_id, family, re.compile(regex), entropy)
        for kw in keywords:
            by_kw.setdefault(kw, []).append(rule)
    return re.compile(_trie_regex(sorted(by_kw))), by_kw


_CATALOG_KW, _CATALOG_BY_KW = _load_catalog()
assert not any("/" in k for k in _CATALOG_BY_KW)  # paths are looked up by segment below
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
# (anchored at a run's start: a short word fails once, not once per character of it)
_CATALOG_TOKEN = re.compile(r"(?<![^\s\"'`<>(){}\[\],;])[^\s\"'`<>(){}\[\],;]{16,}+")
_CATALOG_SPACED = tuple(k for k in _CATALOG_BY_KW if re.search(r"[\s\"'`<>(){}\[\],;]", k))
assert all(k.startswith("<") for k in _CATALOG_SPACED)  # the pass tests `"<" in text` first


# Keywords so short they occur in most paths and words (`utils.py` holds `s.`): each counts only
# where its rules' own regex could start (they are case-sensitive there, with a `\b` before).
_WEAK_KW = {
    "s.": re.compile(r"(?<![A-Za-z0-9_])(?:hvs|s)\."),    # vault-service-token
    "ey": re.compile(r"(?<![A-Za-z0-9_])ey[A-Za-z0-9]{17}"),  # jwt
    "pat": re.compile(r"(?<![A-Za-z0-9_])pat[A-Za-z0-9]{14}\."),  # airtable
    "sk": re.compile(r"SK[0-9a-fA-F]{32}"),  # twilio-api-key
    # redact/rules_extra.py
    "-us": re.compile(r"[0-9a-f]{32}-us[0-9]"),  # mailchimp
    "nf-": re.compile(r"(?<![A-Za-z0-9_])NF-[0-9A-Za-z]{32}"),  # nightfall
    "1000.": re.compile(r"(?<![A-Za-z0-9_])1000\.[0-9a-f]{32}\."),  # zoho
    "age1": re.compile(r"(?<![A-Za-z0-9_])age1[02-9ac-hj-np-z]{58}"),  # age recipient
    "oy2": re.compile(r"(?<![A-Za-z0-9_])oy2[0-9a-z]{43}"),  # nuget
    "azdo": re.compile(r"[0-9A-Za-z]{76}AZDO"),  # azure devops
}


@lru_cache(maxsize=16384)
def _token_keywords(tok: str) -> frozenset[str]:
    """The catalog keywords inside one token (cached: transcripts repeat their tokens)."""
    if len(tok) > 48 and "/" in tok:
        # a path: no keyword spans a `/`, and its segments repeat across paths (cached)
        parts = _NO_KW.union(*map(_token_keywords, tok.split("/")))
        return parts if parts else _NO_KW
    kws = _CATALOG_KW.findall(tok.lower())
    if not kws:
        return _NO_KW
    found = set(kws)
    for kw in found & _WEAK_KW.keys():
        if _WEAK_KW[kw].search(tok) is None:
            found.discard(kw)
    return frozenset(found)


_NO_KW: frozenset[str] = frozenset()


def _catalog_pass(text: str, hits: Counter[str], toks: list[str] | None = None,
                  low: str | None = None) -> str:
    if toks is None:
        toks = _CATALOG_TOKEN.findall(text)
    # the verdict per token is cached, and most texts have no keyword at all: `any` in C first
    found = _NO_KW.union(*map(_token_keywords, toks)) if any(map(_token_keywords, toks)) else _NO_KW
    spaced: set[str] = set()
    if "<" in text:  # every spaced keyword is `<add key=`-like
        low = text.lower() if low is None else low
        spaced = {k for k in _CATALOG_SPACED if k in low}
    if not found and not spaced:
        return text
    n = len(text)
    # where each found keyword occurs: rules run on those tokens (a margin of two characters
    # each side for their boundary tests), not over the whole text
    tok_spans = [(m.start(), m.end(), kws) for m in _CATALOG_TOKEN.finditer(text)
                 if (kws := _token_keywords(m.group(0)))]
    spans: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for kw in sorted(found | spaced):
        windows = [(0, n)] if kw in spaced else [
            (max(0, a - 2), min(n, b + 2)) for a, b, kws in tok_spans if kw in kws]
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
                            _ENV_REF.fullmatch(secret)) or _filler(secret):
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
