"""The LLM extractor against a real local HTTP endpoint: spans, evidence, failures, cache, redaction."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from looma_git.errors import UsageError
from looma_git.gitrepo import find_repo
from looma_git.index import storedb
from looma_git.pipeline.extractor import HeuristicExtractor, build_extractor
from looma_git.pipeline.heuristics import MemoryCandidate
from looma_git.pipeline.llm import BREAKER, MIN_CHARS, LLMExtractor, SqliteLLMCache, cache_key
from looma_git.settings import LLMSettings, llm_settings, load_settings
from tests.helpers import git
from tests.pipeline.fake_llm import quotes_from, serve

MSG = ("We looked at the session store for a while. The refresh tokens live in Redis from now "
       "on, with a one hour TTL. Somebody still has to write the migration for old sessions.")
TABLE = {
    "The refresh tokens live in Redis from now on, with a one hour TTL.": "decision",
    "Somebody still has to write the migration for old sessions.": "todo",
}


def run(ex: LLMExtractor, text: str = MSG, event_id: str = "e1",
        role: str = "assistant") -> list[MemoryCandidate]:
    return ex.extract(text, event_id=event_id, agent="claude-code", session_id="s1",
                      ts="2026-01-02T10:00:00Z", role=role)


def settings(url: str, timeout: float = 5.0, key: str | None = None) -> LLMSettings:
    return LLMSettings(url=url, model="test-model", timeout=timeout, api_key=key)


def test_candidates_carry_exact_spans() -> None:
    with serve(quotes_from(TABLE)) as fake:
        fake.fence = True  # a fenced reply is still understood
        ex = LLMExtractor(settings(fake.url))
        found = run(ex)
    assert fake.count == 1
    assert sorted((c.kind, c.text) for c in found) == sorted((k, q) for q, k in TABLE.items())
    for c in found:
        assert MSG[c.start:c.end] == c.text
        assert (c.event_id, c.agent, c.session_id, c.role) == ("e1", "claude-code", "s1",
                                                                "assistant")
    req = fake.requests[0]
    assert req["model"] == "test-model" and req["temperature"] == 0
    assert MSG in req["messages"][-1]["content"]
    assert ex.errors == 0 and ex.stats["candidates"] == 2


def test_hallucinated_quotes_and_bad_kinds_are_dropped() -> None:
    def respond(message: str) -> list[Any]:
        return [
            {"kind": "decision", "quote": "The refresh tokens live in Memcached from now on."},
            {"kind": "opinion", "quote": "We looked at the session store for a while."},
            {"kind": "todo", "quote": 42},
            "not an item",
            {"kind": "todo", "quote": "Somebody still has to write the migration for old "
                                      "sessions."},
            {"kind": "bug", "quote": "We"},  # too short to be evidence
        ]

    with serve(respond) as fake:
        ex = LLMExtractor(settings(fake.url))
        found = run(ex)
    assert [(c.kind, c.text) for c in found] == [
        ("todo", "Somebody still has to write the migration for old sessions.")]
    assert ex.stats["dropped"] == 5
    assert ex.errors == 0


@pytest.mark.parametrize("mode,counter", [
    ("malformed", "error_malformed"), ("garbage", "error_malformed"), ("500", "error_http")])
def test_bad_replies_give_nothing_and_count(mode: str, counter: str) -> None:
    with serve(quotes_from(TABLE)) as fake:
        fake.mode = mode
        ex = LLMExtractor(settings(fake.url))
        assert run(ex) == []
    assert fake.count == 1
    assert ex.stats[counter] == 1 and ex.errors == 1


def test_timeout_gives_nothing() -> None:
    with serve(quotes_from(TABLE)) as fake:
        fake.mode = "hang"
        ex = LLMExtractor(settings(fake.url, timeout=0.3))
        assert run(ex) == []
    assert ex.stats["error_timeout"] == 1 and ex.errors == 1


def test_unreachable_endpoint_gives_nothing() -> None:
    with socket.socket() as s:  # a port that was just free: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ex = LLMExtractor(settings(f"http://127.0.0.1:{port}/v1", timeout=2))
    assert run(ex) == []
    assert ex.stats["error_network"] == 1


def test_wrong_path_is_an_http_error() -> None:
    with serve(quotes_from(TABLE)) as fake:
        ex = LLMExtractor(settings(fake.url.removesuffix("/v1") + "/nope"))
        assert run(ex) == []
    assert ex.stats["error_http"] == 1


def test_repeated_failures_stop_sending() -> None:
    with serve(quotes_from(TABLE)) as fake:
        fake.mode = "500"
        ex = LLMExtractor(settings(fake.url))
        for i in range(BREAKER + 2):
            assert run(ex, MSG + f" ({i})", event_id=f"e{i}") == []
    assert fake.count == BREAKER
    assert ex.stats["skipped"] == 2


def test_a_success_resets_the_failure_count() -> None:
    with serve(quotes_from(TABLE)) as fake:
        ex = LLMExtractor(settings(fake.url))
        for i in range(2 * BREAKER):
            fake.mode = "500" if i % 2 == 0 else "ok"
            run(ex, MSG + f" ({i})", event_id=f"e{i}")
    assert fake.count == 2 * BREAKER and ex.stats["skipped"] == 0


def test_short_and_tool_messages_are_not_sent() -> None:
    with serve(quotes_from(TABLE)) as fake:
        ex = LLMExtractor(settings(fake.url))
        assert run(ex, "x" * (MIN_CHARS - 1)) == []
        assert run(ex, "   ok, go on   ") == []
        assert run(ex, MSG, role="tool") == []
        assert run(ex, MSG, role="system") == []
        assert run(ex, MSG, role="user")
    assert fake.count == 1


def test_second_run_is_served_from_the_cache(repo: Path) -> None:
    paths = find_repo(repo)
    with serve(quotes_from(TABLE)) as fake:
        conn = storedb.connect(paths)
        try:
            first = run(LLMExtractor(settings(fake.url), SqliteLLMCache(conn)))
        finally:
            conn.close()
        assert fake.count == 1
        # A new process: new connection, new extractor, same store.db.
        conn = storedb.connect(paths)
        try:
            again = LLMExtractor(settings(fake.url), SqliteLLMCache(conn))
            second = run(again)
        finally:
            conn.close()
        assert fake.count == 1, "a cache hit must make no request"
    assert second == first and len(first) == 2
    assert again.stats["cache_hits"] == 1 and again.stats["requests"] == 0
    with sqlite3.connect(paths.store_db) as db:
        rows = db.execute("SELECT key, model, response, created FROM llm_cache").fetchall()
    assert len(rows) == 1
    key, model, response, created = rows[0]
    assert model == "test-model" and created > 0
    assert key == cache_key("test-model", MSG)
    assert json.loads(response)["items"]


def test_cache_is_keyed_by_model_and_text(repo: Path) -> None:
    paths = find_repo(repo)
    with serve(quotes_from(TABLE)) as fake:
        conn = storedb.connect(paths)
        try:
            cache = SqliteLLMCache(conn)
            run(LLMExtractor(settings(fake.url), cache))
            run(LLMExtractor(LLMSettings(url=fake.url, model="other-model"), cache))
            run(LLMExtractor(settings(fake.url), cache), MSG + " And one more sentence.")
            run(LLMExtractor(settings(fake.url), cache))
        finally:
            conn.close()
    assert fake.count == 3


def test_failures_are_not_cached(repo: Path) -> None:
    paths = find_repo(repo)
    with serve(quotes_from(TABLE)) as fake:
        conn = storedb.connect(paths)
        try:
            cache = SqliteLLMCache(conn)
            for mode in ("500", "malformed"):
                fake.mode = mode
                assert run(LLMExtractor(settings(fake.url), cache)) == []
            fake.mode = "ok"
            assert len(run(LLMExtractor(settings(fake.url), cache))) == 2
        finally:
            conn.close()
    assert fake.count == 3


def test_secrets_are_redacted_before_sending() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = f"I exported GITHUB_TOKEN={token} for the CI job. " + MSG
    with serve(quotes_from(TABLE)) as fake:
        ex = LLMExtractor(settings(fake.url, key="local-key"))
        found = run(ex, text)
    assert fake.count == 1
    assert token not in fake.raw[0].decode() and "ghp_A1b2" not in fake.raw[0].decode()
    assert "REDACTED" in fake.raw[0].decode()
    # Spans still index the original message.
    assert {text[c.start:c.end] for c in found} == set(TABLE)
    assert fake.headers[0]["authorization"] == "Bearer local-key"


def test_a_quote_containing_a_placeholder_is_not_evidence() -> None:
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    text = f"Decision: the deploy job reads the token {token} from the vault from now on."
    with serve(lambda m: [{"kind": "decision", "quote": m.split(". ")[0]}]) as fake:
        ex = LLMExtractor(settings(fake.url))
        assert run(ex, text) == []
    assert ex.stats["dropped"] == 1


# --- settings: git config read by the edge ---------------------------------------------

def test_off_by_default_makes_no_request(repo: Path) -> None:
    with serve(quotes_from(TABLE)) as fake:
        git(repo, "config", "looma.llm.model", "test-model")  # a model alone turns nothing on
        s = load_settings(find_repo(repo), {})
        assert s.llm is None
        ex = build_extractor(s.llm, None)
        assert isinstance(ex, HeuristicExtractor)
        ex.extract(MSG, event_id="e1", agent="a", session_id="s", ts="", role="assistant")
    assert fake.count == 0


def test_settings_from_git_config(repo: Path) -> None:
    git(repo, "config", "looma.llm.url", "http://127.0.0.1:9/v1/")
    git(repo, "config", "looma.llm.model", "qwen2.5-coder")
    git(repo, "config", "looma.llm.apiKeyEnv", "MY_LLM_KEY")
    git(repo, "config", "looma.llm.timeout", "7.5")
    llm = load_settings(find_repo(repo), {"MY_LLM_KEY": "k-123"}).llm
    assert llm is not None
    assert llm.endpoint == "http://127.0.0.1:9/v1/chat/completions"
    assert (llm.model, llm.timeout, llm.api_key_env, llm.api_key) == (
        "qwen2.5-coder", 7.5, "MY_LLM_KEY", "k-123")
    assert "k-123" not in repr(llm)


@pytest.mark.parametrize("config", [
    {"looma.llm.url": "file:///etc/passwd", "looma.llm.model": "m"},
    {"looma.llm.url": "http://127.0.0.1:8080/v1"},
    {"looma.llm.url": "http://h/v1", "looma.llm.model": "m", "looma.llm.timeout": "soon"},
    {"looma.llm.url": "http://h/v1", "looma.llm.model": "m", "looma.llm.timeout": "0"},
    {"looma.llm.url": "http://h/v1", "looma.llm.model": "m", "looma.llm.apikeyenv": "NOPE"},
])
def test_bad_settings_are_usage_errors(config: dict[str, str]) -> None:
    with pytest.raises(UsageError):
        llm_settings(config, {})


def test_empty_url_is_off() -> None:
    assert llm_settings({"looma.llm.url": "  ", "looma.llm.model": "m"}, {}) is None


def test_offline_mode_uses_the_cache_and_never_sends(repo: Path) -> None:
    paths = find_repo(repo)
    other = MSG + " Nobody sent this one yet, so it is not cached."
    with serve(quotes_from(TABLE)) as fake:
        conn = storedb.connect(paths)
        try:
            online = run(LLMExtractor(settings(fake.url), SqliteLLMCache(conn)))
            ex = LLMExtractor(settings(fake.url), SqliteLLMCache(conn), offline=True)
            assert run(ex) == online and len(online) == 2
            assert run(ex, other) == []
        finally:
            conn.close()
    assert fake.count == 1
    assert ex.stats["cache_hits"] == 1 and ex.stats["uncached"] == 1 and ex.errors == 0
