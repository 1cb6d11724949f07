"""SessionRef: one agent session as looma names it, in the one shape every layer can share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class SessionRef:
    """An agent session: `agent` (one of looma_git.ingest.registry.AGENTS) and its native `id`.

    Sessions are also written as `(agent, id)` tuples, `{"agent", "id"}` mappings (ledger
    files) and `"agent:id"` keys (resolution, observations); the constructors below read each
    of those, `key` and `as_dict` write the last two."""

    agent: str
    id: str

    @property
    def key(self) -> str:
        """`agent:id`, the session's key in observations and resolution."""
        return f"{self.agent}:{self.id}"

    def as_dict(self) -> dict[str, str]:
        """The mapping the ledger files and the wire carry."""
        return {"agent": self.agent, "id": self.id}

    @classmethod
    def from_key(cls, key: str) -> SessionRef:
        """Read `agent:id` (the id may itself hold colons)."""
        agent, _, sid = key.partition(":")
        return cls(agent, sid)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> SessionRef | None:
        """Read `{"agent": ..., "id": ...}` from ledger data; None when either is missing."""
        agent, sid = raw.get("agent"), raw.get("id")
        if not isinstance(agent, str) or not isinstance(sid, str) or not agent or not sid:
            return None
        return cls(agent, sid)
