"""A batch of ops redacts each distinct text once (redaction is pure: the ops are the ones
per-string redaction gives, byte for byte)."""

from __future__ import annotations

from pathlib import Path

import pytest

from looma_git.api import ledger as api
from looma_git.ledger.ops import OpDraft
from looma_git.store import ledger_ref
from tests.helpers import make_repo
from tests.store.ledger_helpers import init

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def _drafts() -> list[OpDraft]:
    return [OpDraft("workitem.create", {"type": "workitem"},
                    {"title": f"Rotate the token {SECRET} ({i % 3})",
                     "files": ["src/auth/tokens.py", "src/auth/rotate.py"],
                     "note": f"token {SECRET} leaked"}) for i in range(30)]


def test_a_batch_redacts_each_distinct_text_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import looma_git.redact as redact

    calls: list[str] = []
    text, shared = redact.redact_text, redact.redact_shared

    def counting_text(s: str) -> str:
        calls.append(s)
        return text(s)

    def counting_shared(s: str) -> tuple[str, dict[str, int]]:
        calls.append(s)
        return shared(s)

    monkeypatch.setattr(redact, "redact_text", counting_text)
    monkeypatch.setattr(redact, "redact_shared", counting_shared)
    monkeypatch.setattr(ledger_ref, "utc_now", lambda: "2026-11-29T12:00:00Z")
    paths = init(make_repo(tmp_path / "r"))
    ops = api.append(paths, _drafts(), actor="system")
    # 3 titles, 2 paths, 1 note: 6 distinct (gate, text) pairs in 30 drafts
    assert len(calls) == 6, calls
    for op, d in zip(ops, _drafts(), strict=True):
        assert op.payload == ledger_ref._redact_value(d.payload)  # per string, no batch memo
        assert SECRET not in str(op.payload)
