"""Evidence: a bounded transcript quote with its source; the only transcript text that reaches git."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looma_git.domain.session import SessionRef


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


@dataclass(frozen=True)
class Evidence:
    """A quote (redacted, bounded) from one event of one session; `hash` names its text and
    `start`/`end` its span in the event (0, 0 when unknown)."""

    quote: str
    agent: str
    session: str
    event: str
    hash: str
    start: int = 0
    end: int = 0

    @property
    def session_ref(self) -> SessionRef:
        return SessionRef(self.agent, self.session)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> Evidence:
        """Read a ledger evidence mapping; missing or mistyped fields read as empty."""
        return cls(quote=_str(raw.get("quote")), agent=_str(raw.get("agent")),
                   session=_str(raw.get("session")), event=_str(raw.get("event")),
                   hash=_str(raw.get("hash")), start=_int(raw.get("start")),
                   end=_int(raw.get("end")))
