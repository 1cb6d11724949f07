"""One session's windows and their memory candidates: the per-session part of a pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from looma_git.pipeline.clusters import window_order
from looma_git.pipeline.extractor import Extractor, same_evidence
from looma_git.pipeline.heuristics import MemoryCandidate, confirmed_plan
from looma_git.pipeline.inputs import Session
from looma_git.pipeline.signals import WorkSignal, windows_of
from looma_git.pipeline.views import StoredWindow


@dataclass(frozen=True)
class SessionWindows:
    """What segmenting one session gave: its windows in order, each window's candidates
    (reused from the stored window when its signals are the same), the start of the earliest
    window that is new or changed (inf: none) and how many windows were extracted afresh."""

    key: str
    windows: tuple[WorkSignal, ...]
    cands: tuple[tuple[str, tuple[MemoryCandidate, ...]], ...]
    first_change: float
    extracted: int


def segment_session(s: Session, known_paths: frozenset[str], sha_lookup: dict[str, str],
                    prior: Mapping[str, StoredWindow], extractor: Extractor) -> SessionWindows:
    """Segment `s` into windows and extract each new or changed window's candidates.

    Depends only on the session, the repository's paths, the sha lookup and the stored
    windows, so sessions may be segmented in any order or process with the same result."""
    ws = windows_of(s, known_paths, sha_lookup)
    by_event = {e.event_id: e for e in s.events}
    cands: list[tuple[str, tuple[MemoryCandidate, ...]]] = []
    first_change = float("inf")
    extracted = 0
    for w in ws:
        old = prior.get(w.key)
        # (what it wrote is the repository's to say, set afresh for every window later)
        if old is not None and replace(old.signal, wrote=frozenset(), landed="") == w:
            cands.append((w.key, tuple(old.cands)))
            continue
        first_change = min(first_change, window_order(w)[0])
        found: list[MemoryCandidate] = []
        proposed = None  # the agent's last message, until the user answers it
        for eid in w.event_ids:
            ev = by_event[eid]
            found.extend(extractor.extract(ev.text, event_id=ev.event_id, agent=s.agent,
                                           session_id=s.session_id, ts=ev.ts, role=ev.role))
            if ev.role == "user" and proposed is not None:  # "yes, do it": a plan
                found.extend(c for c in confirmed_plan(
                    proposed.text or "", ev.text or "", event_id=proposed.event_id,
                    agent=s.agent, session_id=s.session_id, ts=proposed.ts)
                    if not any(same_evidence(c, k) for k in found))
            proposed = ev if ev.role == "assistant" else (
                None if ev.role == "user" else proposed)
        cands.append((w.key, tuple(found)))
        extracted += 1
    return SessionWindows(s.key, tuple(ws), tuple(cands), first_change, extracted)


def dropped_from(prior_of_session: Sequence[StoredWindow], kept: set[str]) -> float:
    """The start of the earliest stored window a re-segmented session no longer has."""
    return min((window_order(sw.signal)[0] for sw in prior_of_session
                if sw.signal.key not in kept), default=float("inf"))
