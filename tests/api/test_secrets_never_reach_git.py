"""Ground rule 6: planted secrets never reach any git object looma writes (nor store.db)."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.api.scenario_env import add_claude_session, build
from tests.helpers import cli as looma
from tests.helpers import git

SECRETS = {
    "github": "ghp_" + "R3aLlyS3cr3tT0k3nV4lu3xYz0123456789",
    "aws": "AKIA" + "Z7Q4RT2M9XPL3KVB",
    "anthropic": "sk-ant-api03-" + "q8Zr2LmN4vP7xK1cT9bW3yH6jD5fG0sA2eR8uI4oP1lK7mN3bV6cX9zQ",
    "openai": "sk-proj-" + "Xh3kL9mP2qR7tV4wY8zB1cD5fG6jN0sA",
}


def test_planted_secrets_never_reach_git_objects(scenario: Any) -> None:
    repo, env, _ = scenario  # built once per session, copied per test
    prompt = (f"Continue the OAuth work. Use token {SECRETS['github']} for the GitHub API and "
              f"AWS key {SECRETS['aws']}. We decided to use the key {SECRETS['anthropic']} "
              f"for the assistant. TODO: rotate {SECRETS['openai']} before release.")
    add_claude_session(repo, env, "secret-sess-1", prompt, ["auth/oauth.py", "auth/routes.py"])
    looma(repo, "ingest", env=env)
    looma(repo, "reprocess", env=env)
    looma(repo, "correct", "rename", "wi_", "x", env=env, check=False)  # harmless failure
    # Everything reachable from looma's refs, object by object, through the git binary.
    objs = git(repo, "rev-list", "--objects", "refs/looma/ledger", "refs/notes/looma").split()
    shas = [o for o in objs if len(o) == 40]
    assert shas
    batch = subprocess.run(["git", "cat-file", "--batch"], cwd=repo, input=("\n".join(shas) + "\n").encode(),
                           capture_output=True, check=True).stdout
    # ...and every object in the object database, loose or packed.
    everything = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo,
                                capture_output=True, check=True).stdout
    state = repo / ".git" / "looma"
    store = b"".join(p.read_bytes() for p in state.rglob("*") if p.is_file())
    for name, secret in SECRETS.items():
        needle = secret.encode()
        assert needle not in batch, f"{name} secret reached looma's refs"
        assert needle not in everything, f"{name} secret reached the object database"
        assert needle not in store, f"{name} secret reached looma's local state"
    # The session was still ingested and used: its redacted evidence is in the ledger.
    assert b"[REDACTED:" in batch
    assert git(repo, "fsck", "--strict") == ""

    health = json.loads(looma(repo, "status", "--health", "--json", env=env).stdout)["health"]
    assert health["redaction_hits"] >= len(SECRETS)


# --- every secret of the public corpus, planted into sessions of all five agents -------------
CORPUS = json.loads((Path(__file__).resolve().parents[1] / "redact_public_corpus.json").read_text())
INDEPENDENT = json.loads(
    (Path(__file__).resolve().parents[1] / "redact_independent_corpus.json").read_text())
CHUNK = 12
# Both corpora: looma's own generated samples and the independent one (public rule sets' own
# examples). Independent secrets shorter than CHUNK are left out here (`admin`, `pass123`: a
# word that may occur in the scenario itself); tests/test_redact.py measures those.
SAMPLES = [s for r in CORPUS["rules"] for s in r["samples"]] + [
    s for s in INDEPENDENT["true_positives"] if len(s["secret"]) >= CHUNK]


def _plant(sessions: list[Any]) -> list[Any]:
    """The scenario's sessions with every corpus sample (secret in its context) added to user
    prompts, assistant prose (memory-labelled decisions included) and command output."""
    from fixtures.scenario.story import Bash, Say, User

    slots = [(i, j) for i, s in enumerate(sessions) for j, t in enumerate(s.turns)
             if isinstance(t, (User, Say, Bash))]
    extra: dict[tuple[int, int], list[str]] = {}
    for k, sample in enumerate(SAMPLES):
        extra.setdefault(slots[k % len(slots)], []).append(sample["text"])
    out = []
    for i, s in enumerate(sessions):
        turns = list(s.turns)
        for j, t in enumerate(turns):
            add = extra.get((i, j))
            if not add:
                continue
            blob = "\n".join(add)
            if isinstance(t, Bash):
                turns[j] = dataclasses.replace(t, output=f"{t.output}\n{blob}")
            else:
                turns[j] = dataclasses.replace(t, text=f"{t.text} Note: {blob}")
        out.append(dataclasses.replace(s, turns=turns))
    return out


def _chunks() -> dict[str, int]:
    """Every CHUNK-character piece of every planted secret -> the sample it came from."""
    out: dict[str, int] = {}
    for k, s in enumerate(SAMPLES):
        sec = s["secret"]
        for i in range(max(1, len(sec) - CHUNK + 1)):
            out.setdefault(sec[i:i + CHUNK], k)
    return out


def _leaked_alone(sample: dict[str, str]) -> bool:
    """Whether a 12-character piece of the secret survives redacting its own text."""
    from looma_git.redact import redact_text

    out, sec = redact_text(sample["text"]), sample["secret"]
    return any(sec[i:i + CHUNK] in out for i in range(max(1, len(sec) - CHUNK + 1)))


_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")


def _leaks(data: bytes, chunks: dict[str, int]) -> set[int]:
    # looma's own placeholders are not a leak (`[REDACTED:digitalocean]` holds the 12
    # characters `digitalocean` of a planted `….ondigitalocean.com` connection URI)
    text = _PLACEHOLDER.sub("[REDACTED]", data.decode("utf-8", errors="replace"))
    found: set[int] = set()
    for i in range(len(text) - CHUNK + 1):
        k = chunks.get(text[i:i + CHUNK])
        if k is not None:
            found.add(k)
    return found


def _objects(repo: Path, refs: list[str]) -> bytes:
    objs = git(repo, "rev-list", "--objects", *refs).split()
    shas = [o for o in objs if len(o) == 40]
    assert shas
    return subprocess.run(["git", "cat-file", "--batch"], cwd=repo,
                          input=("\n".join(shas) + "\n").encode(), capture_output=True,
                          check=True).stdout


def test_every_corpus_secret_in_all_five_agents_never_reaches_git(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fixtures.scenario.generate as generate

    planted = _plant(list(generate.SESSIONS))
    assert {s.agent for s in planted} == {"claude-code", "codex", "gemini-cli", "cursor",
                                          "opencode"}
    monkeypatch.setattr(generate, "SESSIONS", planted)
    repo, env, _ = build(tmp_path / "s")  # init, ingest, backfill
    items = json.loads(looma(repo, "work", "--json", env=env).stdout)["workitems"]
    assert items
    # A correction whose title and message carry secrets (user-typed text bound for git).
    title_secret = SAMPLES[0]["secret"]
    looma(repo, "correct", "rename", items[0]["id"], f"OAuth login {title_secret}", env=env)
    if len(items) > 2:
        looma(repo, "correct", "merge", items[1]["id"], items[2]["id"], "-m",
              f"same effort, see {SAMPLES[1]['text']}", env=env)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "--initial-branch=main", str(remote))
    git(repo, "remote", "add", "team", str(remote))  # the scenario's origin is not reachable
    looma(repo, "share", "enable", "team", env=env)
    looma(repo, "sync", "team", env=env)
    refs = [r for r in git(repo, "for-each-ref", "--format=%(refname)").split()
            if r.startswith(("refs/looma/", "refs/notes/looma"))]
    assert "refs/looma/ledger" in refs and "refs/notes/looma" in refs
    local = _objects(repo, refs)
    remote_refs = [r for r in git(remote, "for-each-ref", "--format=%(refname)").split()
                   if r.startswith(("refs/looma/", "refs/notes/looma"))]
    assert remote_refs, "the sync pushed nothing"
    pushed = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=remote,
                            capture_output=True, check=True).stdout
    chunks = _chunks()
    leaked = _leaks(local, chunks) | _leaks(pushed, chunks)
    # Nothing the redactor catches on its own leaks through any path (titles, summaries,
    # memories, evidence quotes, notes, the pushed remote); what it misses on its own may
    # still be stopped by the shared gate, and is reported.
    missed = {k for k, s in enumerate(SAMPLES) if _leaked_alone(s)}
    through = sorted(leaked - missed)
    assert not through, [(SAMPLES[k]["text"][:80], SAMPLES[k]["secret"]) for k in through][:20]
    # The sessions were still ingested and used: redacted evidence reached the ledger.
    assert b"[REDACTED:" in local
    report = json.loads(looma(repo, "status", "--health", "--json", env=env).stdout)
    # every sample the redactor catches on its own was counted at least once
    assert report["health"]["redaction_hits"] >= len(SAMPLES) - len(missed)
    fams = report["redaction_by_family"]
    assert fams.get("credential", 0) > 0 and len(fams) >= 20, fams
    assert sum(fams.values()) == report["health"]["redaction_hits"]
    shown = looma(repo, "status", "--health", env=env).stdout
    assert "redaction by family" in shown and f"credential {fams['credential']}" in shown
