"""Ground rule 6: planted secrets never reach any git object looma writes (nor store.db)."""

from __future__ import annotations

import subprocess

from tests.api.scenario_env import add_claude_session
from tests.helpers import cli as looma
from tests.helpers import git

SECRETS = {
    "github": "ghp_" + "R3aLlyS3cr3tT0k3nV4lu3xYz0123456789",
    "aws": "AKIA" + "Z7Q4RT2M9XPL3KVB",
    "anthropic": "sk-ant-api03-" + "q8Zr2LmN4vP7xK1cT9bW3yH6jD5fG0sA2eR8uI4oP1lK7mN3bV6cX9zQ",
    "openai": "sk-proj-" + "Xh3kL9mP2qR7tV4wY8zB1cD5fG6jN0sA",
}


def test_planted_secrets_never_reach_git_objects(scenario) -> None:
    repo, env, _ = scenario
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
    import json

    health = json.loads(looma(repo, "status", "--health", "--json", env=env).stdout)["health"]
    assert health["redaction_hits"] >= len(SECRETS)
