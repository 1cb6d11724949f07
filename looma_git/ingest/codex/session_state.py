"""The Codex replay's cross-record memory as the cursor's state: what a later read needs to
resume exactly where the previous one stopped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from looma_git.ingest.agent_text import as_dict, as_list, as_str

if TYPE_CHECKING:
    from looma_git.ingest.codex.records import CodexSession


def dump(session: CodexSession) -> str:
    """The session's cross-record memory as compact JSON (stored in the cursor)."""
    return json.dumps({
        "sid": session.sid, "meta": session.meta_seen, "cwd": session.cwd, "branch": session.branch,
        "remote": session.remote, "model": session.model, "ts": session.last_ts, "era": session.era,
        "facts": session.facts, "texts": list(session.texts.items()),
        "pending": list(session.pending.items()), "resolved": list(session.resolved),
        "procs": list(session.procs.items()), "turn": session.turn,
    }, separators=(",", ":"))


def load(session: CodexSession, state: str) -> None:
    """Restore what `dump` wrote into `session`; a damaged state leaves its defaults."""
    try:
        data = json.loads(state)
    except (ValueError, RecursionError):
        return
    if not isinstance(data, dict):
        return
    session.sid = as_str(data.get("sid")) or session.sid
    session.meta_seen = bool(data.get("meta"))
    session.cwd, session.branch = as_str(data.get("cwd")), as_str(data.get("branch"))
    session.remote, session.model = as_str(data.get("remote")), as_str(data.get("model"))
    session.last_ts, session.era = as_str(data.get("ts")), as_str(data.get("era")) or session.era
    session.facts = {k: v for k, v in as_dict(data.get("facts")).items() if isinstance(v, str)}
    for pair in as_list(data.get("texts")):
        if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], list):
            session.texts[str(pair[0])] = [int(x) for x in pair[1][:2]]
    for pair in as_list(data.get("pending")):
        if isinstance(pair, list) and len(pair) == 2:
            session.pending[str(pair[0])] = pair[1]
    for key in as_list(data.get("resolved")):
        session.resolved[str(key)] = 1
    session.turn = as_str(data.get("turn")) or ""
    for pair in as_list(data.get("procs")):
        if isinstance(pair, list) and len(pair) == 2:
            session.procs[str(pair[0])] = str(pair[1])
