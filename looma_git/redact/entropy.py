"""Redaction pass (b): the Shannon-entropy fallback with its allowlist of ids that survive."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

try:
    from collections import _count_elements  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - other Pythons
    def _count_elements(mapping: dict[str, int], iterable: str) -> None:
        for c in iterable:
            mapping[c] = mapping.get(c, 0) + 1
from functools import lru_cache

PLACEHOLDER = "[REDACTED:{kind}]"
PLACEHOLDER_PREFIX = "[REDACTED:"


def placeholder(kind: str) -> str:
    """What a secret of `kind` is replaced with."""
    return PLACEHOLDER.format(kind=kind)


_TOKEN = re.compile(r"[A-Za-z0-9_+/\-]{24,}+={0,3}")
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# `sha256:<hex>`, `--hash=sha256:`, go.sum's `h1:<base64 sha256>`
_DIGEST_CTX = re.compile(
    r"(?i:(?:sha(?:1|224|256|384|512)|md5|blake2b?|sha3-\d{3}|\bh1)[:\-=]\s{0,2})$")
_DIGEST_NAME = re.compile(r"(?i:sha(?:1|224|256|384|512)|md5|blake2b?|sha3-\d{3}|h1)")
_DIGEST_TOKEN = re.compile(r"(?i:(?:sha(?:1|224|256|384|512)|md5)-)([A-Za-z0-9+/]{20,}={0,2})")
# base64 of sha1, sha256, sha384, sha512 digests, padded and unpadded (ssh fingerprints)
_DIGEST_B64_LENS = {27, 28, 43, 44, 64, 86, 88}
# Record ids that agents write into transcripts (Anthropic message/tool-use ids, OpenAI
# call/response ids, OpenCode ids): opaque but not secret, and needed to dedupe events.
_AGENT_ID = re.compile(
    r"(?:msg|toolu|srvtoolu|req|call|fc|resp|rs|chatcmpl|ses|prt|file|run|thread|asst|item)"
    r"(?:_(?:bdrk|vrtx))?[_\-][A-Za-z0-9]{16,64}")
ENTROPY_MIN_LEN = 24
ENTROPY_MIN_BITS = 4.0


def shannon_entropy(s: str) -> float:
    """Bits per character of `s` (0 for an empty string)."""
    n = len(s)
    if n == 0:
        return 0.0
    # H = log2(n) - sum(c*log2(c))/n : the counts' c*log2(c) looked up, summed in C.
    d: dict[str, int] = {}
    _count_elements(d, s)  # Counter's C loop without Counter's constructor
    counts = d.values()
    if n < len(_CLOG2):
        return math.log2(n) - sum(map(_CLOG2.__getitem__, counts)) / n
    return math.log2(n) - sum(c * math.log2(c) for c in counts if c > 1) / n


_CLOG2 = [0.0] + [c * math.log2(c) for c in range(1, 4097)]


_RUNS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_DIGIT = re.compile(r"[0-9]")
_LOWER = re.compile(r"[a-z]")


def _wordlike(s: str) -> bool:
    """Identifier or prose-ish: long letter runs (camelCase words count) with natural vowels.

    Random base62 has a mean same-case run of ~1.7 letters and ~19% vowels; identifiers
    like `TestOAuthLoginRedirects` or `session_refresh_timeout` have runs of 4+ and ~35%.
    """
    runs = _RUNS.findall(s)
    if not runs:
        return False
    letters = sum(map(len, runs))
    if letters < len(s) * 0.5:
        return False
    return letters / len(runs) >= 3.0 and len(_VOWEL.findall(s)) / letters >= 0.25


_PIECES = re.compile(r"[-_.]")


@lru_cache(maxsize=16384)
def _segment_ok(p: str) -> bool:
    """A path segment that names something: a word, a hash, or words and hashes joined by
    `-_.` (`pack-<sha1>`, `UserCard`, `v2`)."""
    if len(p) < 6 or _wordlike(p) or _HEX.fullmatch(p):
        return True
    pieces = [x for x in _PIECES.split(p) if x]
    return len(pieces) > 1 and all(
        len(x) < 6 or x.isdigit() or _HEX.fullmatch(x) or _wordlike(x) for x in pieces)


def _pathlike(s: str) -> bool:
    """`src/components/UserCard/index`, `.git/objects/pack/pack-<sha1>`: slash-separated,
    every long segment word-like or a hash."""
    # the first 32 segments decide: a listing of thousands of paths glued together is judged
    # once per offset by the keyword passes, and judging it whole each time was quadratic
    parts = [p for p in s.split("/", 32)[:32] if p]
    if len(parts) < 2:
        return False
    return all(_segment_ok(p) for p in parts)


# The base64 body of an OpenSSH public key starts with the encoded key-type name.
_SSH_PUBKEY = ("AAAAB3NzaC1", "AAAAC3NzaC1", "AAAAE2VjZHNh", "AAAAG3NrLWVjZHNh", "AAAAGnNrLXNzaC1")
_PROSE_CH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,.'!?;-")


def _base64_prose(tok: str) -> bool:
    """Base64 of an ordinary sentence (fixtures, encoded commit messages): letters and spaces
    once decoded, words that look like words."""
    if len(tok) < 24:
        return False
    try:
        raw = base64.b64decode(tok + "=" * (-len(tok) % 4), validate=True)
        dec = raw.decode("ascii")
    except (binascii.Error, ValueError):
        return False
    if dec.count(" ") < 2 or dec.count(" ") < len(dec) / 12:
        return False
    if sum(c in _PROSE_CH for c in dec) < 0.9 * len(dec):
        return False
    letters = [c for c in dec if c.isalpha()]
    return len(_VOWEL.findall(dec)) >= 0.28 * len(letters)


def _is_allowed(tok: str) -> bool:
    """On the allowlist: hashes, uuids, agent record ids, digests, paths, identifiers."""
    if _HEX.fullmatch(tok) or _UUID.fullmatch(tok):
        return True
    if _AGENT_ID.fullmatch(tok):
        return True
    if _UUID.search(tok):  # `rollout-2026-05-11T11-26-55-<uuid>`: judge what is around the uuid
        rest = _UUID.sub("", tok)
        return len(rest) < ENTROPY_MIN_LEN or not _looks_random(rest) or _is_allowed(rest)
    d = _DIGEST_TOKEN.fullmatch(tok)
    if d and len(d.group(1)) in _DIGEST_B64_LENS:
        return True
    if tok.startswith(_SSH_PUBKEY):
        return True
    return _pathlike(tok) or _wordlike(tok) or _structured_id(tok) or _base64_prose(tok)


_SEPARATORS = re.compile(r"[-_]")


def _structured_id(tok: str) -> bool:
    """`write_file-1773223425361-n8zctgv4`, `rollout-2026-05-11T11-26-55`: separator-joined
    words, numbers and short random tails; no segment long enough to hold a key by itself."""
    parts = [p for p in _SEPARATORS.split(tok) if p]
    if len(parts) < 3:
        return False
    return all(len(p) < 12 or p.isdigit() or _HEX.fullmatch(p) or _wordlike(p) for p in parts)


def _looks_random(tok: str) -> bool:
    has_digit = _DIGIT.search(tok) is not None
    if tok.islower():
        has_upper, has_lower = False, True
    elif tok.isupper():
        has_upper, has_lower = True, False
    else:
        has_upper = has_lower = _LOWER.search(tok) is not None
    classes = has_digit + has_upper + has_lower
    if classes < 2:
        return False
    bits = shannon_entropy(tok)
    if classes == 3:
        return bits >= ENTROPY_MIN_BITS
    # Two classes only (e.g. lowercase+digits): demand a bit more randomness.
    return bits >= ENTROPY_MIN_BITS + 0.25


def _entropy_repl(m: re.Match[str], hits: Counter[str]) -> str:
    """Hide a long token that looks random and is not on the allowlist."""
    tok = m.group(0)
    if not _suspect(tok):
        return tok
    # Digest context (`sha256:<token>`) depends on the text before the token, not cached.
    if _DIGEST_CTX.search(m.string, max(0, m.start() - 12), m.start()) and (
            _HEX.fullmatch(tok) or len(tok) in _DIGEST_B64_LENS):
        return tok
    hits["high_entropy"] += 1
    return placeholder("high_entropy")


# A suspect token is replaced with everything it is glued to (`dt0c01.<a>.<b>`, `1|<token>`,
# `<x>~<y>`, `%2B`-escapes, `=` padding): a piece left behind is a piece of the secret.
_WIDE_CH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/-.~|%:=!")
_NAME = re.compile(r"[A-Za-z_$@][A-Za-z0-9_.\-]*")


def _namelike(h: str) -> bool:
    """`API_KEY`, `h1`, `password`: a name before `=`/`:`, not the first half of a token."""
    return _NAME.fullmatch(h) is not None and (
        len(h) <= 3 or _wordlike(h) or not any(c.isdigit() for c in h))


# A token glued from pieces by `. ~ | % : =` (`dt0c01.<a>.<b>`, `<a>~<b>`, `1|<b>`): each
# piece may be too short to judge, the whole is judged with the separators taken out.
_GLUED = re.compile(r"[A-Za-z0-9_+/\-.~|%:=]{24,}+")
_SEPS = re.compile(r"%[0-9A-Fa-f]{2}|[.~|:=]")
_GLUE_CH = re.compile(r"[.~|:=%]")
_NAME_END = re.compile(r"[=:]")


@lru_cache(maxsize=8192)
def glued_suspect(tok: str) -> bool:
    """Whether a glued token, less a leading `name=`, is one random-looking token."""
    if len(tok) < ENTROPY_MIN_LEN or tok.count("/") > 1 or _GLUE_CH.search(tok.rstrip("=")) is None:
        # nothing glued: the plain token pass judges it; two slashes make a path or a URL,
        # whose long pieces the plain pass judges too
        return False
    m = _NAME_END.search(tok)  # a leading `name=` / `name:` is not part of the token
    if m is not None:
        i = m.start()
        if _DIGEST_NAME.fullmatch(tok[:i]):  # `SHA256:<base64>` fingerprints, `h1:` sums
            rest = tok[i + 1:].rstrip(".")
            if _HEX.fullmatch(rest) or len(rest) in _DIGEST_B64_LENS:
                return False
            tok = tok[i + 1:]
        elif _namelike(tok[:i]):
            tok = tok[i + 1:]
    body = tok.rstrip("=")
    joined = _SEPS.sub("", body)
    if len(joined) < ENTROPY_MIN_LEN or len(joined) == len(body):
        return False  # nothing glued: the plain token pass judges it (digest contexts too)
    if not _looks_random(joined):
        return False
    if _is_allowed(tok) or all(_segment_ok(p) for p in _SEPS.split(body) for p in p.split("/")):
        return False  # a path, a dotted name, a version: every piece names something
    return not _is_allowed(joined)


def _unit(text: str, s: int, e: int) -> tuple[int, int]:
    """The span to replace for a suspect token at text[s:e]: the whole glued run, less a
    leading `name=` / `name:` / `scheme://host/` and trailing sentence punctuation."""
    n = len(text)
    a = s
    while a > 0 and text[a - 1] in _WIDE_CH:
        a -= 1
    b = e
    while b < n and text[b] in _WIDE_CH:
        b += 1
    while b > e and text[b - 1] in ".:|%~!":
        b -= 1
    head = text[a:s]
    for i, ch in enumerate(head):
        if ch in "=:":
            if _namelike(head[:i]):
                a += i + 1
            break
    if text.startswith("//", a):  # a URL: keep the host and path up to the token's segment
        cut = text.rfind("/", a, s)
        a = cut + 1
        # the token may start with path segments that name things (`com/document/d/<id>`):
        # keep those too, up to the first segment that looks random
        pos = max(a, s)
        for seg in text[pos:e].split("/"):
            if len(seg) >= 12 and _looks_random(seg):
                break
            pos += len(seg) + 1
        if pos < e:
            a = max(a, pos)
    return a, b


# Public key material is not secret: the base64 inside these blocks is left alone.
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?:PGP PUBLIC KEY BLOCK|PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE|PGP SIGNATURE|"
    r"SSH2 PUBLIC KEY)-----.{0,65536}?(?:-----END [A-Z0-9 ]{3,40}-----|$)", re.S)


def redact_entropy_pass(text: str, hits: Counter[str]) -> str:
    """Replace every suspect token, whole, by `[REDACTED:high_entropy]`."""
    found: list[tuple[int, int]] = []
    public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)] if "-----BEGIN" in text else []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if not _suspect(tok):
            continue
        if _DIGEST_CTX.search(text, max(0, m.start() - 12), m.start()) and (
                _HEX.fullmatch(tok) or len(tok) in _DIGEST_B64_LENS):
            continue
        found.append(_unit(text, m.start(), m.end()))
    for m in _GLUED.finditer(text):
        if glued_suspect(m.group(0)):
            found.append(_unit(text, m.start(), m.end()))
    if public:
        found = [(a, b) for a, b in found if not any(p <= a and b <= q for p, q in public)]
    spans: list[tuple[int, int]] = []
    for a, b in sorted(found):
        if spans and a < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
    if not spans:
        return text
    out: list[str] = []
    last = 0
    ph = placeholder("high_entropy")
    for a, b in spans:
        out.append(text[last:a])
        out.append(ph)
        last = b
    out.append(text[last:])
    hits["high_entropy"] += len(spans)
    return "".join(out)


@lru_cache(maxsize=16384)
def run_suspect(run: str) -> bool:
    """Whether a run of token characters (no whitespace, quotes or brackets) holds a suspect
    token, plain or glued: the entropy pass's prefilter, cached per run. Conservative: digest
    contexts are judged by the pass itself."""
    if len(run) < ENTROPY_MIN_LEN:
        return False  # no token of 24+ characters fits
    for tok in _TOKEN.findall(run):
        if not _UUID.fullmatch(tok) and not _HEX.fullmatch(tok) and _suspect(tok):
            return True
    return any(map(glued_suspect, _GLUED.findall(run)))


@lru_cache(maxsize=8192)
def _suspect(tok: str) -> bool:
    """Random-looking and on no allowlist. Cached: transcripts repeat the same ids, paths and
    hashes on every record, and the verdict depends on the token alone."""
    return (_looks_random(tok) and not _is_allowed(tok)) or _prefixed_secret(tok)


# `bkua_<40>`, `gsk_<52>`, `ak_live_<30>`, `nvapi-<64>`, `NF-<32>`: a vendor prefix, then a long
# body of letters and digits. The prefix is the signal, so the body may be less random than the
# plain entropy floor asks (test keys, hex bodies).
_PREFIXED = re.compile(
    r"([a-z]{2,8}|[A-Z]{2,5})((?:[_\-](?:live|test|prod|api|secret|c|pat|sk|pk|v[0-9]))?)([_\-])"
    r"([A-Za-z0-9]{20,}+(?:[_\-][A-Za-z0-9]{4,}+)*)")


def _prefixed_secret(tok: str) -> bool:
    m = _PREFIXED.fullmatch(tok.rstrip("="))
    if m is None or _AGENT_ID.fullmatch(tok):
        return False
    body = m.group(4)
    flat = body.replace("_", "").replace("-", "")
    if m.group(3) == "-" and _HEX.fullmatch(flat) and not m.group(1).isupper():
        return False  # `pack-<sha1>`, `sha-<hex>`: a name and a hash (`NF-<HEX>` is a key)
    digits = sum(c.isdigit() for c in flat)
    if digits < 3 or len(flat) - digits < 3 or shannon_entropy(flat) < 3.0:
        return False
    if _LONG_DIGIT_RUN.search(flat) or len(_MIXED_DIGITS.findall(flat)) >= 2:
        return True  # digits mixed in: no word or name looks like that
    return not any(_wordlike(p) and len(p) >= 6 for p in re.split(r"[_\-]", body))


_LONG_DIGIT_RUN = re.compile(r"[0-9]{4,}")
_MIXED_DIGITS = re.compile(r"(?<=[A-Za-z])[0-9]{2,}(?=[A-Za-z])")
