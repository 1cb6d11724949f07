"""Secret redaction's public entry point: re-exports the API and the passes of this package."""

from __future__ import annotations

# The work lives in this package's modules, split by what each part owns:
#   shapes             hand-written credential shapes and PEM keys (pass a)
#   keywords           credential-named assignments, auth headers, bare `name value` pairs
#   structural         XML key/value attributes and elements, `curl -u`, `-u … -p`
#   values             value judgement: stand-ins/placeholders, code references, key material
#   catalog            provider token shapes from the public catalog (pass c)
#   entropy            the Shannon-entropy fallback and its allowlist
#   context            vendor names / credential words, a window, a key-material value
#   vendors            vendor names from Kingfisher's rules (generated)
#   rules_extra        prefix shapes the gitleaks port (rules) lacks
#   api                redact / redact_into / redact_text / redact_obj / family_of / Redaction
#   gate               redact_shared, the stricter gate for text bound for git
# Callers import from here; every name below is re-exported for them and the benches.
from looma_git.redact.api import (  # noqa: F401
    _HAND_FAMILIES,
    _MIN_SECRET_LEN,
    Redaction,
    _known_shapes,
    family_of,
    has_suspect,
    redact,
    redact_into,
    redact_obj,
    redact_text,
)
from looma_git.redact.catalog import (  # noqa: F401
    _CATALOG_BY_KW,
    _CATALOG_KW,
    _CATALOG_SPACED,
    _CATALOG_TOKEN,
    _TOKEN_CH,
    _TOKEN_JOIN,
    _catalog_pass,
    _CatalogRule,
    _load_catalog,
    _splice,
    _trie_regex,
    _widen,
)
from looma_git.redact.entropy import _DIGEST_CTX as _DIGEST_CTX_SHARED  # noqa: F401
from looma_git.redact.entropy import (  # noqa: F401
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
from looma_git.redact.entropy import PLACEHOLDER_PREFIX as _PLACEHOLDER_PREFIX  # noqa: F401
from looma_git.redact.entropy import _looks_random as _looks_random_any  # noqa: F401
from looma_git.redact.entropy import _pathlike as _pathlike_any  # noqa: F401
from looma_git.redact.entropy import placeholder as _ph  # noqa: F401
from looma_git.redact.gate import (  # noqa: F401
    _SHARED_TOKEN,
    SHARED_MIN_BITS,
    _shared_suspect,
    redact_shared,
)
from looma_git.redact.keywords import (  # noqa: F401
    _ASSIGN,
    _ASSIGN_STARTS,
    _AUTH_HEADER,
    _AUTH_STARTS,
    _AWS_STARTS,
    _KEYWORD_PASSES,
    _KEYWORD_STARTS,
    _WEAK_NAMES,
    _assign_repl,
    _auth_repl,
    _keyword_passes,
)
from looma_git.redact.shapes import (  # noqa: F401
    _ANTHROPIC,
    _AWS_ID,
    _AWS_SECRET,
    _BEARER,
    _GATES,
    _GITHUB,
    _GOOGLE,
    _JWT,
    _OPENAI,
    _PEM_BEGIN,
    _PEM_BODY,
    _PEM_END,
    _PEM_MAX,
    _RULES,
    _SLACK_HOOK,
    _SLACK_TOKEN,
    _STRIPE,
    _URL_PASSWORD,
    _bind,
    _redact_pem,
    _Repl,
    _repl_aws_secret,
    _repl_bearer,
    _repl_url,
    _Rule,
)
from looma_git.redact.structural import (  # noqa: F401
    _CRED_WORD,
    _CURL_USER,
    _XML_ELEM,
    _XML_KV,
    _name_is_credential,
    _structural,
)
from looma_git.redact.values import (  # noqa: F401
    _DOTTED_IDENT,
    _ENV_REF,
    _PLACEHOLDER_VALUE,
    _TYPEISH,
    _randomish,
    _value_is_secret,
)
