"""The optional LLM extractor: an OpenAI-compatible endpoint, evidence-checked, cached in store.db."""

from __future__ import annotations

import hashlib
import http.client
import json
import sqlite3
import time
import urllib.error
import urllib.request
from collections import Counter
from typing import Protocol

from looma_git.index import schema
from looma_git.pipeline.heuristics import KINDS, MemoryCandidate
from looma_git.redact import redact_text
from looma_git.settings import LLMSettings

# Bump when the prompt or the request changes: old cache entries then stop matching.
PROMPT_VERSION = "1"
MIN_CHARS = 40  # shorter messages ("ok", "go on") never hold a decision worth a request
MAX_CHARS = 8000  # what is sent per message (after redaction)
MIN_QUOTE = 8
MAX_QUOTE = 600
MAX_ITEMS = 20
MAX_RESPONSE_BYTES = 1_000_000
MAX_TOKENS = 1024
BREAKER = 3  # consecutive failures after which the rest of the run sends nothing

SYSTEM_PROMPT = (
    "You extract durable project knowledge from one message of a conversation between a "
    "developer and a coding agent. Find statements that are: a decision (a choice that was "
    "made), a todo (work that still has to be done), a bug (a defect that was observed) or "
    "architecture (how the system is structured). Ignore questions, hypotheticals, "
    "pleasantries and code. Reply with JSON only, exactly of the form "
    '{"items": [{"kind": "decision|todo|bug|architecture", "quote": "<exact substring of the '
    'message>"}]}. Each quote must be copied character for character from the message, one '
    "sentence or less. Reply {\"items\": []} when there is nothing."
)

CACHE_SCHEMA = schema.LLM_CACHE  # every store.db table is declared in index/schema.py


class LLMCache(Protocol):
    """Where raw model replies are kept, keyed by `cache_key`."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, model: str, response: str) -> None: ...


class SqliteLLMCache:
    """The `llm_cache` table of store.db (created on first use)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(CACHE_SCHEMA)

    def get(self, key: str) -> str | None:
        row = self.conn.execute("SELECT response FROM llm_cache WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, model: str, response: str) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO llm_cache(key, model, response, created) "
                              "VALUES (?,?,?,?)", (key, model, response, int(time.time())))


def cache_key(model: str, sent_text: str) -> str:
    """sha256 of model, prompt version and the exact text that is (or would be) sent."""
    return hashlib.sha256(
        f"{model}\x00{PROMPT_VERSION}\x00{sent_text}".encode("utf-8", "replace")).hexdigest()


class _Failure(Exception):
    """A request or reply that yields nothing; `kind` names the counter."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _post(settings: LLMSettings, sent_text: str) -> str:
    """One chat completion; returns the reply's message content or raises _Failure."""
    body = json.dumps({
        "model": settings.model, "temperature": 0, "max_tokens": MAX_TOKENS, "stream": False,
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": "Message:\n<<<\n" + sent_text + "\n>>>"}],
    }).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": "looma-git"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    req = urllib.request.Request(settings.endpoint, data=body, headers=headers, method="POST")
    # No proxies: the core reads no environment, and the usual endpoint is local.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + settings.timeout
    try:
        with opener.open(req, timeout=settings.timeout) as resp:
            chunks: list[bytes] = []
            size = 0
            while True:
                # The socket timeout bounds each read; the deadline bounds a trickling reply.
                chunk = resp.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise _Failure("error_malformed")
                if time.monotonic() > deadline:
                    raise _Failure("error_timeout")
                chunks.append(chunk)
    except urllib.error.HTTPError as exc:
        exc.close()
        raise _Failure("error_http") from exc
    except urllib.error.URLError as exc:
        kind = "error_timeout" if isinstance(exc.reason, TimeoutError) else "error_network"
        raise _Failure(kind) from exc
    except TimeoutError as exc:
        raise _Failure("error_timeout") from exc
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _Failure("error_network") from exc
    try:
        reply = json.loads(b"".join(chunks).decode("utf-8"))
        content = reply["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _Failure("error_malformed") from exc
    if not isinstance(content, str):
        raise _Failure("error_malformed")
    return content


def parse_items(content: str) -> list[tuple[str, str]]:
    """(kind, quote) pairs from a reply; tolerates a ```json fence; raises ValueError if bad."""
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the reply")
    data = json.loads(content[start:end + 1])
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ValueError('the reply has no "items" list')
    out: list[tuple[str, str]] = []
    for item in data["items"][:MAX_ITEMS]:
        if isinstance(item, dict):
            kind, quote = item.get("kind"), item.get("quote")
            out.append((kind if isinstance(kind, str) else "",
                        quote if isinstance(quote, str) else ""))
        else:
            out.append(("", ""))
    return out


class LLMExtractor:
    """Candidates whose quotes the model copied exactly from the message; never raises.

    Replies are cached by content hash, so a second pass over the same messages makes no
    request and gives the same candidates. Failures yield no candidates and bump `stats`.
    """

    name = "llm"

    def __init__(self, settings: LLMSettings, cache: LLMCache | None = None, *,
                 offline: bool = False) -> None:
        self.settings = settings
        self.cache = cache
        # Offline: cached replies only (for latency-bound callers such as git hooks).
        self.offline = offline
        self.stats: Counter[str] = Counter()
        self._failures = 0

    @property
    def errors(self) -> int:
        """Failed requests and unusable replies so far."""
        return sum(n for k, n in self.stats.items() if k.startswith("error_"))

    def extract(self, text: str, *, event_id: str, agent: str, session_id: str, ts: str,
                role: str) -> list[MemoryCandidate]:
        """Candidates from one message (user/assistant, at least MIN_CHARS long)."""
        if role not in ("user", "assistant") or len(text.strip()) < MIN_CHARS:
            return []
        sent = redact_text(text)[:MAX_CHARS]  # redact first: truncation could split a secret
        key = cache_key(self.settings.model, sent)
        content = self._cached(key)
        if content is None:
            if self.offline:
                self.stats["uncached"] += 1
                return []
            if self._failures >= BREAKER:
                self.stats["skipped"] += 1
                return []
            content = self._request(sent)
            if content is None:
                return []
            items = self._parse(content)
            if items is None:
                return []
            self._store(key, content)
        else:
            self.stats["cache_hits"] += 1
            items = self._parse(content)
            if items is None:
                return []
        return self._candidates(items, text, event_id=event_id, agent=agent,
                                session_id=session_id, ts=ts, role=role)

    def _cached(self, key: str) -> str | None:
        if self.cache is None:
            return None
        try:
            return self.cache.get(key)
        except sqlite3.Error:
            self.stats["cache_errors"] += 1
            return None

    def _store(self, key: str, content: str) -> None:
        if self.cache is None:
            return
        try:
            self.cache.put(key, self.settings.model, content)
        except sqlite3.Error:
            self.stats["cache_errors"] += 1

    def _request(self, sent: str) -> str | None:
        self.stats["requests"] += 1
        try:
            content = _post(self.settings, sent)
        except _Failure as exc:
            self.stats[exc.kind] += 1
            self._failures += 1
            return None
        return content

    def _parse(self, content: str) -> list[tuple[str, str]] | None:
        try:
            items = parse_items(content)
        except ValueError:  # json.JSONDecodeError included
            self.stats["error_malformed"] += 1
            self._failures += 1
            return None
        self._failures = 0
        return items

    def _candidates(self, items: list[tuple[str, str]], text: str,
                    **src: str) -> list[MemoryCandidate]:
        out: list[MemoryCandidate] = []
        seen: set[tuple[str, int]] = set()
        for kind, raw in items:
            quote = raw.strip()
            # The evidence rule: only an exact substring of the original message is a quote.
            start = text.find(quote) if MIN_QUOTE <= len(quote) <= MAX_QUOTE else -1
            if kind not in KINDS or start < 0:
                self.stats["dropped"] += 1
                continue
            if (kind, start) in seen:
                continue
            seen.add((kind, start))
            shown = quote[:300]
            out.append(MemoryCandidate(
                kind=kind, text=shown, event_id=src["event_id"], start=start,
                end=start + len(quote),
                content_hash=hashlib.sha256(shown.encode("utf-8", "replace")).hexdigest()[:16],
                agent=src["agent"], session_id=src["session_id"], ts=src["ts"],
                role=src["role"]))
        self.stats["candidates"] += len(out)
        return out

    def summary(self) -> dict[str, int]:
        """Counters for reports (requests, cache_hits, candidates, dropped, errors...)."""
        base = dict.fromkeys(("requests", "cache_hits", "candidates", "dropped", "skipped"), 0)
        return {**base, **dict(sorted(self.stats.items())), "errors": self.errors}
