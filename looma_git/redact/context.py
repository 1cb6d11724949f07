"""Context-window passes: a secret near a vendor name or a credential word, also across lines."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from functools import lru_cache

from looma_git.redact.catalog import _CATALOG_TOKEN, _splice, _trie_regex, _widen
from looma_git.redact.entropy import _pathlike
from looma_git.redact.entropy import placeholder as _ph
from looma_git.redact.values import (
    _DOTTED_IDENT,
    _ENV_REF,
    _PLACEHOLDER_VALUE,
    _UUIDISH,
    _filler,
    _words,
)
from looma_git.redact.vendors import VENDORS

# Most scanners' rules describe a secret as a context word, a short window of anything (line
# breaks included) and a value of a given shape: `\b(?:wandb)(?:.|[\n\r]){0,40}?([0-9a-f]{40})`
# (Kingfisher, trufflehog), `vendor … (SECRET|KEY|TOKEN) … value`. The passes before this one
# need an operator or a single space between name and value; this one covers the rest:
#   `blazemeter 123e4567-…`, `findl=<uuid>`, `postmark: "<uuid>"`, `refiner-<uuid>`  (vendor)
#   `restpack foo SECRET bar <hex>`, `visualcrossing\nKEY\n<v>`, `graphhopperSECRETyo-<v>`,
#   `eventbrite private access key\n<v>`, `mailmodo ACCESS-<v>`                (credential word)
# The value must be key material (a UUID, 32+ hex, or 16+ characters with letters and digits
# and no words), and the window between word and value is short and nearly empty: at most one
# other word, two line breaks. Hex ids and UUIDs (git SHAs, request ids) need a vendor or
# credential word right before them (an operator, a quote or one word of 1-3 letters between).
_CRED = r"secret|private|access|token|key|passw(?:or)?d|pwd|apikey|credential"
_VENDOR_AT = re.compile(r"(?<![a-z0-9])(?:" + _trie_regex(sorted(VENDORS)) + r")")
_CRED_AT = re.compile(_CRED)
# a value candidate: starts at a token boundary, letters/digits/`-_+/=`
_VALUE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9][A-Za-z0-9_\-+/=]{11,4095}+")
_WINDOW = 40
_HEXISH = re.compile(r"[0-9a-fA-F]{32,}")
_DIGIT = re.compile(r"[0-9]")
_ALPHA = re.compile(r"[A-Za-z]")
_GAP_WORD = re.compile(r"[A-Za-z]+")
_LETTER_WORD = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")  # `CamelCaseName`, a word
_COLON_LINE = re.compile(r"[^\n.!?\"'`]{0,48}:[ \t]*\n(?:[ \t]*\n)?[ \t]*")
_NAME_THEN_OP = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,40}[\"'`]?[ \t]*(?::=|=>|[:=])[ \t]*[\"'`]?")
_PLAIN_OP = re.compile(r"[ \t\"'`]*(?::=|=>|[:=,])?[ \t\"'`]*")
# Bundler's per-host credentials: `BUNDLE_GEMS__CONTRIBSYS__COM=user:pass` (Sidekiq Pro/Ent,
# private gem servers): the variable names a host, its value is `user:password`.
_BUNDLER = re.compile(
    r"\b(BUNDLE_[A-Z0-9_]*__[A-Z0-9]+)([ \t]*[:=][ \t]*)([\"']?)(?!\[REDACTED:)"
    r"([^\s\"':;&]{1,256}:[^\s\"';&]{1,256})")


# Kingfisher's weak-password rule (generic.yml, `kingfisher.weak_password.1`): the common
# passwords people use with a digit suffix, found anywhere. `password1`/`password2` are left
# out (Django's form fields); `password12` and longer count.
_WEAK_PW = re.compile(
    r"(?i)\b(?:blink\d{3,6}|correcthorsebatterystaple\d{0,6}|letmein\d{1,6}|newpass\d{1,6}|"
    r"p@ssw0rd\d{0,6}|pa55word\d{0,6}|pass4now\d{0,6}|password\d{2,6}|qwer\d{4,6}|qwerty\d{3,6}|"
    r"trustno\d{1,6})\b")
# lowercase literals one of which every weak password holds (the prefilter scans for them)
WEAK_PW_STARTS = ("blink", "correcthorse", "letmein", "newpass", "p@ssw0rd", "pa55word",
                  "pass4now", "password", "qwer", "trustno")
_ALTERNATIONS = re.compile(r"[A-Za-z][0-9]|[0-9][A-Za-z]")


def _weak_pw_pass(text: str, hits: Counter[str]) -> str:
    def repl(m: re.Match[str]) -> str:
        hits["weak_password"] += 1
        return _ph("weak_password")
    return _WEAK_PW.sub(repl, text)


@lru_cache(maxsize=16384)
def _material(v: str) -> str | None:
    """The kind of key material `v` is ("id": a UUID or hex, "token": mixed), or None."""
    v = v.rstrip("=-_")
    n = len(v)
    if n < 12:
        return None
    # cheapest tests first: most candidates are paths and names without digits
    if _UUIDISH.fullmatch(v) or _HEXISH.fullmatch(v):
        kind = "id"
    else:
        if _DIGIT.search(v) is None or _ALPHA.search(v) is None:
            return None
        if n < 16 and not (len(_DIGIT.findall(v)) >= 4 and len(_ALPHA.findall(v)) >= 4):
            return None
        kind = "token"
    if "[REDACTED" in v or _filler(v) or _PLACEHOLDER_VALUE.fullmatch(v) or _ENV_REF.fullmatch(v):
        return None
    if kind == "token":
        if _pathlike(v) or _DOTTED_IDENT.fullmatch(v):
            return None
        # `ABC123DEF456`: letters and digits alternating three times is no word or name
        if _words(v) and len(_ALTERNATIONS.findall(v)) < 3:
            return None
    return kind


def _alone(text: str, v: re.Match[str]) -> bool:
    """A letters-only value of 20+ characters alone on its line (no word is that long)."""
    val = v.group(0)
    if len(val) < 20 or not val.isalpha() or not val.isupper():
        return False
    line_end = text.find("\n", v.end())
    rest = text[v.end():] if line_end < 0 else text[v.end():line_end]
    return not rest.strip() and _LETTER_WORD.fullmatch(val) is None


def _line_rest_empty(text: str, i: int) -> bool:
    j = text.find("\n", i)
    return not (text[i:] if j < 0 else text[i:j]).strip()


def _gap_ok(gap: str, kind: str, cred: bool) -> bool:
    """Whether the text between the context word and the value keeps them together."""
    if gap.count("\n") > 2 or "[REDACTED" in gap:
        return False
    if cred:
        if gap[:1] == "s" and not gap[1:2].isalnum():
            gap = gap[1:]  # `Secrets:`, `--recv-keys`: the plural of the word
        if "\n" not in gap and (_PLAIN_OP.fullmatch(gap) or _NAME_THEN_OP.fullmatch(gap)):
            # `name = value`, `IceSSL.KeyFile=<v>`: an assignment to a name the assignment
            # passes judged already
            return False
    words = _GAP_WORD.findall(gap)
    if cred and _COLON_LINE.fullmatch(gap):
        return True  # `use the following password to proceed:\n\n<v>` (value alone: caller)
    if (cred or kind == "id") and any(w.lower().endswith(("id", "ids")) for w in words):
        return False  # `kms_key_id`, `credentialsId`, `account_id: <uuid>`: it names an id
    if kind == "id":
        # hex/uuid: an operator, quotes, a line break, or one short word (`parseur x <hex>`);
        # after a credential word also a glued tail (`SECRETyo-`, `KEYversioneye-`)
        if cred and words and gap[:1].isalnum() and len(words) == 1 and " " not in gap.strip():
            return True
        return len(words) == 0 or (len(words) == 1 and len(words[0]) <= 3)
    # one other word at most (`SECRET bar <v>`, `XYZK <v>`, `_ID:   "`), no sentence punctuation
    # (after a vendor word an operator or a quote is no word: `TWITTER_ID:   "<v>"`; after a
    # credential word it ends the name the assignment passes judged: `key_vault_name": "`)
    pieces = [p for p in gap.split() if cred or _GAP_WORD.search(p)]
    return len(pieces) <= 1 and all(len(w) <= 10 for w in words) and not any(
        c in gap for c in ".,;()!?")


# Where a value may start inside a token run: its start and after each `- _ = : , .`.
_PIECE_SPLIT = re.compile(r"[=:,.]")
_SUBSTART = re.compile(r"[_\-]")
_UPPER20 = re.compile(r"[A-Z]{20}")


@lru_cache(maxsize=16384)
def _run_material(run: str) -> bool:
    """Whether a token run holds anything the pass could hide (cached: transcripts repeat
    their tokens, and most runs hold none, so most texts skip the pass after this test)."""
    if _DIGIT.search(run) is None and _UPPER20.search(run) is None and _HEXISH.search(run) is None:
        return False  # paths and names: no digit, no long capitals, no hex
    for piece in _PIECE_SPLIT.split(run):
        if len(piece) < 12:
            continue
        if _DIGIT.search(piece) is None:
            if len(piece) >= 20 and piece.isalpha() and piece.isupper():
                return True  # maybe a letters-only value alone on its line
            if _HEXISH.search(piece) is None:
                continue
        if _material(piece):
            return True
        for i, m in enumerate(_SUBSTART.finditer(piece)):
            if i == 6 or len(piece) - m.end() < 12:
                break
            if _material(piece[m.end():]):
                return True
    return False


def _context_pass(text: str, hits: Counter[str], toks: list[str] | None = None) -> str:
    if toks is not None and not any(map(_run_material, toks)):
        return text
    runs = [(m.start(), m.end()) for m in _CATALOG_TOKEN.finditer(text) if _run_material(m.group(0))]
    if not runs:
        return text
    low = text.lower()
    if len(low) != len(text):
        return text
    ends = [e for _, e in runs]
    spans: list[tuple[int, int, str]] = []
    # one scan per word list over the text; a word counts only when a run holding key
    # material overlaps the window after it (found by bisection, no scan per run)
    for rx, cred in ((_VENDOR_AT, False), (_CRED_AT, True)):
        for m in rx.finditer(low):
            e = m.end()
            j = bisect_right(ends, e)
            if j == len(runs) or runs[j][0] > e + _WINDOW:
                continue
            if not cred and text[e:e + 1].islower() and _CRED_AT.match(low, e) is None:
                continue  # `boxes`, `lineage`: the head of another word (`uclassifykey` counts)
            a, b = runs[j]
            v = _VALUE.search(text, max(e, a), min(b, e + _WINDOW + 64))
            if v is None or v.start() - e > _WINDOW:
                continue
            gap = text[e:v.start()]
            if "[REDACTED" in gap or gap.count("\n") > 2:
                continue
            kind = _material(v.group(0))
            if kind is None and cred and "\n" in gap and _alone(text, v):
                kind = "token"  # `KEY\n<ABCDEFGHIJKLMNOPQRSTUVWXY>\n`: alone on its line
            if kind is None or not _gap_ok(gap, kind, cred):
                continue
            if "\n" in gap and _COLON_LINE.fullmatch(gap) and not _line_rest_empty(text, v.end()):
                continue  # after prose ending in `:`, only a value alone on its line
            # the whole token goes: what follows glued by `.`/`:`/`~` is part of it
            # (`front.token.<a>.<b>`); the name before it stays
            end = _widen(text, v.end(), v.end())[1]
            spans.append((v.start(), end, "credential" if cred else "vendor_secret"))
    if not spans:
        return text
    return _splice(text, spans, hits)


def _bundler_repl(m: re.Match[str], hits: Counter[str]) -> str:
    if m.group(4).startswith(("$", "%")):
        return m.group(0)
    hits["credential"] += 1
    return f"{m.group(1)}{m.group(2)}{m.group(3)}{_ph('credential')}"


def _bundler_pass(text: str, hits: Counter[str]) -> str:
    if "BUNDLE_" not in text:
        return text
    return _BUNDLER.sub(lambda m: _bundler_repl(m, hits), text)
