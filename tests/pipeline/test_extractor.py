"""The Extractor interface: heuristic default, heuristic + LLM deduplicated, refine() with both."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import replace
from pathlib import Path

from looma_git.gitrepo import find_repo
from looma_git.index import storedb
from looma_git.pipeline import heuristics
from looma_git.pipeline.extractor import (
    CombinedExtractor,
    HeuristicExtractor,
    build_extractor,
    extractor_stats,
    same_evidence,
)
from looma_git.pipeline.inputs import Event, Session, ToolUse
from looma_git.pipeline.llm import LLMExtractor, SqliteLLMCache
from looma_git.pipeline.refine import RefineInput, refine
from looma_git.settings import LLMSettings
from tests.helpers import cli as looma
from tests.helpers import git
from tests.pipeline.fake_llm import quotes_from, serve

PKCE = "Let's use PKCE instead of the implicit flow because it is safer."
REDIS = "The refresh tokens live in Redis from now on, with a one hour TTL."
MIGRATE = "Somebody still has to write the migration for old sessions."
MSG = f"{PKCE} We looked at the session store for a while. {REDIS} {MIGRATE}"
SRC = {"event_id": "e1", "agent": "claude-code", "session_id": "s1",
       "ts": "2026-01-02T10:00:00Z", "role": "assistant"}


def llm(url: str, cache: SqliteLLMCache | None = None) -> LLMExtractor:
    return LLMExtractor(LLMSettings(url=url, model="test-model", timeout=5), cache)


def test_heuristic_extractor_is_heuristics_extract() -> None:
    ex = HeuristicExtractor()
    assert ex.name == "heuristic"
    assert ex.extract(MSG, **SRC) == heuristics.extract(MSG, **SRC)
    assert build_extractor(None).name == "heuristic"
    assert extractor_stats(ex) == {}


def test_combined_adds_only_what_the_heuristics_missed() -> None:
    table = {
        PKCE: "architecture",  # the same sentence under another kind: a duplicate
        "use PKCE instead of the implicit flow": "decision",  # inside the heuristic span
        REDIS: "decision",
        MIGRATE: "todo",
    }
    with serve(quotes_from(table)) as fake:
        ex = CombinedExtractor(HeuristicExtractor(), llm(fake.url))
        found = ex.extract(MSG, **SRC)
    assert ex.name == "heuristic+llm"
    assert [(c.kind, c.text) for c in found] == [
        ("decision", PKCE), ("decision", REDIS), ("todo", MIGRATE)]
    for c in found:
        assert MSG[c.start:c.end] == c.text
    stats = extractor_stats(ex)
    assert stats["requests"] == 1 and stats["candidates"] == 4 and stats["errors"] == 0


def test_same_evidence_rules() -> None:
    base = heuristics.extract(MSG, **SRC)[0]
    other_event = replace(base, event_id="e2")
    assert same_evidence(base, replace(base, kind="architecture"))
    assert not same_evidence(base, other_event)
    tail = replace(base, start=base.end - 5, end=base.end + 40, content_hash="x")
    assert not same_evidence(base, tail)  # 5 shared characters of a 45-character span
    inner = replace(base, start=base.start + 4, end=base.end - 4, content_hash="y")
    assert same_evidence(base, inner)


def test_combined_survives_a_dead_endpoint() -> None:
    with serve(quotes_from({REDIS: "decision"})) as fake:
        fake.mode = "500"
        ex = CombinedExtractor(HeuristicExtractor(), llm(fake.url))
        found = ex.extract(MSG, **SRC)
    assert [(c.kind, c.text) for c in found] == [("decision", PKCE)]
    assert extractor_stats(ex)["errors"] == 1


def _sessions() -> tuple[Session, ...]:
    edit = ToolUse(kind="edit", name="Edit", command=None, exit_code=None, is_error=False,
                   test_outcome=None, files=("auth/tokens.py",))
    events = (
        Event("e1", 1, "2026-01-02T10:00:00Z", "user", "Move the refresh tokens out of the "
              "cookie session please, it keeps expiring.", "main", ()),
        Event("e2", 2, "2026-01-02T10:01:00Z", "assistant", MSG, "main", (edit,)),
        Event("e3", 3, "2026-01-02T10:02:00Z", "tool", REDIS, "main", ()),
    )
    return (Session("claude-code", "s1", "main", events),)


def _input(extractor: object = None) -> RefineInput:
    return RefineInput(sessions=_sessions(), commits=(), known_paths=frozenset({"auth/tokens.py"}),
                       sha_lookup={}, extractor=extractor)  # type: ignore[arg-type]


def test_refine_defaults_to_the_heuristic_extractor() -> None:
    assert refine(_input()) == refine(_input(HeuristicExtractor()))


def test_refine_with_the_llm_extractor_is_deterministic_from_the_cache(repo: Path) -> None:
    paths = find_repo(repo)
    table = {REDIS: "decision", MIGRATE: "todo"}
    with serve(quotes_from(table)) as fake:
        results, stats = [], []
        for _ in range(2):
            conn = storedb.connect(paths)
            try:
                ex = CombinedExtractor(HeuristicExtractor(), llm(fake.url, SqliteLLMCache(conn)))
                results.append(refine(_input(ex)))
                stats.append(extractor_stats(ex))
            finally:
                conn.close()
        assert fake.count == 2  # two user/assistant messages, each sent once in all
    first, second = results
    assert first == second
    assert stats[0]["requests"] == 2 and stats[1]["requests"] == 0
    assert stats[1]["cache_hits"] == 2
    texts = {(m.kind, m.text) for m in first.memories}
    assert {("decision", PKCE), ("decision", REDIS), ("todo", MIGRATE)} <= texts
    heuristic_only = {(m.kind, m.text) for m in refine(_input()).memories}
    assert ("decision", REDIS) not in heuristic_only
    mem = next(m for m in first.memories if m.text == REDIS)
    assert mem.evidence[0].event == "e2" and MSG[mem.evidence[0].start:mem.evidence[0].end] == REDIS


# --- the edges: git config -> settings -> refine_and_publish ---------------------------

def _store_events(repo: Path) -> None:
    paths = find_repo(repo)
    conn = storedb.connect(paths)
    try:
        storedb.ensure_schema(conn)
        conn.execute("INSERT INTO sessions(agent, session_id, project_root, git_branch, first_ts, "
                     "last_ts, event_count) VALUES ('claude-code','s1',?,'main',?,?,3)",
                     (str(repo), "2026-01-02T10:00:00Z", "2026-01-02T10:02:00Z"))
        for ev in _sessions()[0].events:
            conn.execute("INSERT INTO events(event_id, agent, session_id, seq, ts, role, text, "
                         "branch) VALUES (?,?,?,?,?,?,?,?)",
                         (ev.event_id, "claude-code", "s1", ev.seq, ev.ts, ev.role, ev.text,
                          ev.branch))
    finally:
        conn.close()


def _local_memories(repo: Path) -> set[str]:
    with sqlite3.connect(find_repo(repo).store_db) as db:
        return {json.loads(r[0])["text"] for r in db.execute("SELECT json FROM refine_memories")}


def test_backfill_cli_uses_the_configured_endpoint(repo: Path) -> None:
    _store_events(repo)
    with serve(quotes_from({REDIS: "decision"})) as fake:
        off = json.loads(looma(repo, "backfill", "--json").stdout)
        assert fake.count == 0 and off["llm"] == {}
        assert REDIS not in _local_memories(repo)

        git(repo, "config", "looma.llm.url", fake.url)
        git(repo, "config", "looma.llm.model", "test-model")
        git(repo, "config", "looma.llm.apiKeyEnv", "LOOMA_TEST_LLM_KEY")
        missing = looma(repo, "backfill", check=False)
        assert missing.returncode == 2 and "LOOMA_TEST_LLM_KEY" in missing.stderr
        assert fake.count == 0

        env = dict(os.environ, LOOMA_TEST_LLM_KEY="sekrit")
        on = json.loads(looma(repo, "backfill", "--json", env=env).stdout)
        assert fake.count == 2
        assert fake.headers[0]["authorization"] == "Bearer sekrit"
        assert on["llm"]["requests"] == 2 and on["llm"]["errors"] == 0
        assert REDIS in _local_memories(repo)

        again = looma(repo, "backfill", env=env).stdout
        assert fake.count == 2, "the second run is served from the cache"
        assert "LLM extractor: 0 requests, 2 cached" in again
