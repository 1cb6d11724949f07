"""One source's ReadResult turned into storable rows: noise filter, attribution, redaction."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from looma_git.index.event_stage import Staged, stage
from looma_git.index.event_writer import (
    CursorRow,
    EventRow,
    Row,
    SessionUpsert,
    extra_json,
    raw_ref,
    withdrawn_of,
)
from looma_git.ingest import noise
from looma_git.ingest.attribution import Attributor
from looma_git.ingest.base import ReadResult, Skip, Source
from looma_git.ingest.ide_common import cursor_slug, cursor_slug_ascii
from looma_git.ingest.paths import PathResolver
from looma_git.model import NormalizedEvent

_FILE_OPS = frozenset({"edit", "write", "read"})
MAX_SAMPLES = 3  # skip locations kept per reason (the run keeps as many, over all sources)


@dataclass
class Prepared:
    """Everything `_Runner` stores for one source, computed without touching the store.

    Pure given the ReadResult, the attribution identity and the set of sessions already known
    to be ours, so it can be computed in a worker process and applied in source order.
    """

    # The adapter's skips as the run reports them: a count per reason (in order of first
    # occurrence) and the first MAX_SAMPLES locations of each. A bulk read skips tens of
    # bookkeeping lines per source: a Skip object each would be shipped from a reader process.
    skip_counts: dict[str, int] = field(default_factory=dict)
    skip_samples: dict[str, list[str]] = field(default_factory=dict)
    noise: dict[str, int] = field(default_factory=dict)  # the adapter's noise counts
    notes: list[str] = field(default_factory=list)
    filter_noise: dict[str, int] = field(default_factory=dict)  # the engine's noise pass
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)  # EventRows; plain tuples once shipped
    redactions: dict[str, int] = field(default_factory=dict)  # hits by kind over all rows
    sessions: dict[str, SessionUpsert] = field(default_factory=dict)
    ours: set[str] = field(default_factory=set)
    not_ours: set[str] = field(default_factory=set)  # judged foreign with the known set used
    unattributed: int = 0
    cursor: CursorRow | None = None
    error: Skip | None = None  # adapter.read raised: nothing else is set
    staged: Staged | None = None  # the rows staged by a reader process (`rows` is empty then)
    written: dict[str, Any] | None = None  # the rows' written-line keys (index/written)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Shipped from a reader process: rows as plain tuples (unpickling a NamedTuple calls
        # its Python-level __new__ per row, ~40% of the parent's unpickling time), and they
        # stay plain tuples there: write_batch reads rows by position, and making each an
        # EventRow again cost the (serial) parent ~0.3 CPU-s per 145k events.
        return (_unpickle, (self.skip_counts, self.skip_samples, self.noise, self.notes,
                            self.filter_noise, self.counts, [tuple(r) for r in self.rows],
                            self.redactions, self.sessions, self.ours, self.not_ours,
                            self.unattributed, self.cursor, self.error, self.staged,
                            self.written))


def _unpickle(skip_counts: dict[str, int], skip_samples: dict[str, list[str]],
              noise_: dict[str, int], notes: list[str], filter_noise: dict[str, int],
              counts: dict[tuple[str, str], int], rows: list[Row],
              redactions: dict[str, int], sessions: dict[str, SessionUpsert], ours: set[str],
              not_ours: set[str], unattributed: int, cursor: CursorRow | None,
              error: Skip | None, staged: Staged | None,
              written: dict[str, Any] | None) -> Prepared:
    return Prepared(skip_counts, skip_samples, noise_, notes, filter_noise, counts,
                    rows, redactions, sessions, ours, not_ours,
                    unattributed, cursor, error, staged, written)


def staged(p: Prepared) -> Prepared:
    """`p` with its rows staged (index/event_stage), as a reader process ships it: the
    storing process then copies them with one INSERT ... SELECT per table instead of
    unpickling and binding every value (a cold ingest: ~145k events and 145k tool rows)."""
    if p.rows:
        # The written-line keys go in the image too (one INSERT ... SELECT each, not a
        # Python loop binding ~50,000 rows per cold history in the storing process).
        p.staged = stage(p.rows, withdrawn_of(p.rows), p.written)
        p.rows = []
        p.written = None
    return p


def prepare(agent: str, source: Source, sig: tuple[int, int] | None, rr: ReadResult,
            attr: Attributor, resolver: PathResolver,
            is_known: Callable[[str, str], bool]) -> Prepared:
    """Filter, attribute and redact one source's events into rows plus its new cursor."""
    p = Prepared(noise=dict(rr.noise), notes=list(rr.notes))
    counts = p.counts
    skip_counts, samples = p.skip_counts, p.skip_samples
    for s in rr.skips:
        reason = s.reason
        n = skip_counts.get(reason, 0)
        skip_counts[reason] = n + 1
        if n < MAX_SAMPLES:
            samples.setdefault(reason, []).append(s.location)
    for reason, n in skip_counts.items():
        counts[("skipped", reason)] = n
    for reason, n in rr.noise.items():
        counts[("noise", reason)] = counts.get(("noise", reason), 0) + n
    events = _filter(rr.events, p)
    if agent == "cursor":
        events = [_slug_root(ev, attr) for ev in events]
    for ev in events:
        sid = ev.session_native_id
        if sid in p.ours:
            continue
        # A session is ours when any of its events' cwd/remote is (cwds can change mid-run).
        if is_known(agent, sid) or attr.attributes(ev.project_root, ev.git_remote):
            p.ours.add(sid)
            p.not_ours.discard(sid)
        else:
            p.not_ours.add(sid)
    spans = []  # each row's raw_spans (the records the reader carried are keyed by them)
    for ev in events:
        if ev.session_native_id not in p.ours:
            p.unattributed += 1
            continue
        p.rows.append(_row(agent, ev, resolver, p.redactions, source))
        spans.append(ev.raw_spans)
        p.sessions[ev.session_native_id] = _session(agent, source, ev,
                                                    p.sessions.get(ev.session_native_id))
    if p.rows:
        # Keyed here, by the reader that has the rows and (mostly) their records as it
        # decoded them, not read back by the work model (index/written.py).
        from looma_git.index.written import keyed_at_read

        p.written = keyed_at_read(p.rows, spans, rr.records)
    c = rr.cursor
    p.cursor = CursorRow(source.source_id, agent, str(source.path), c.offset, c.head_fp,
                         c.content_hash, c.state, sig[0] if sig else None,
                         sig[1] if sig else None)
    return p


def _filter(events: list[NormalizedEvent], p: Prepared) -> list[NormalizedEvent]:
    """The engine's own noise pass, applied to every adapter's output.

    Nothing is dropped for repeating an earlier text: a prompt typed again in a later turn
    ("continue" … "continue") is a new event. Streaming splits and double streams are merged by
    the adapters through their record ids, and the store dedupes by event id.
    """
    kept: list[NormalizedEvent] = []
    for ev in events:
        reason: str | None = None
        text = ev.text or ""
        if ev.role == "user" and text:
            clean, _ = noise.clean_text(text)
            reason = noise.classify_prompt(clean) if clean else noise.WRAPPER_TAG
            if reason is None and clean != text:
                ev = dataclasses.replace(ev, text=clean)
                text = clean
        elif not text.strip() and not ev.tool_calls:
            reason = noise.EMPTY
        if reason is not None:
            p.filter_noise[reason] = p.filter_noise.get(reason, 0) + 1
            p.counts[("noise", reason)] = p.counts.get(("noise", reason), 0) + 1
            continue
        kept.append(ev)
    return kept


def _slug_root(ev: NormalizedEvent, attr: Attributor) -> NormalizedEvent:
    """A Cursor agent transcript whose `projects/<slug>/` names no folder Cursor recorded gets
    the root of this repository (or of one of its worktrees) whose slug is that one."""
    if ev.project_root is not None:
        return ev
    slug = next((v for k, v in ev.extra if k == "project_slug"), None)
    if not slug:
        return ev
    root = attr.root_for_slug(slug, cursor_slug) or attr.root_for_slug(slug, cursor_slug_ascii)
    return dataclasses.replace(ev, project_root=root) if root else ev


# looma_git.redact.redact_into, imported on first use: its rules compile on import (~0.3 CPU-s),
# and a run that finds nothing new (every hook drain after a commit) never needs them.
_REDACT: list[Callable[[str, dict[str, int]], str]] = []


def warm() -> None:
    """Import the redactor now (before forking readers, so each does not import it)."""
    if not _REDACT:
        from looma_git.redact import redact_into

        _REDACT.append(redact_into)


def _redact(text: str, hits: dict[str, int]) -> str:
    if not text:
        return text
    if not _REDACT:
        warm()
    return _REDACT[0](text, hits)


def _row(agent: str, ev: NormalizedEvent, resolver: PathResolver,
         hits: dict[str, int], source: Source) -> EventRow:
    text = _redact(ev.text, hits)
    # A raw record kept by reference is not copied, so there is nothing to redact here: it is
    # redacted when read back (index/events.raw_record), like everything else that leaves.
    raw = _redact(ev.raw_json, hits)
    ref = raw_ref(str(source.path), ev.raw_spans) if ev.raw_spans else None
    tools = []
    files = []
    if ev.tool_calls:
        for idx, tc in enumerate(ev.tool_calls):
            command = _redact(tc.command, hits) if tc.command else tc.command
            tools.append((idx, tc.name, tc.kind, command, tc.exit_code, int(tc.is_error),
                          tc.test_outcome))
            if tc.kind in _FILE_OPS:
                for path in tc.paths:
                    files.append((idx, path, resolver.relpath(path, ev.project_root),
                                  tc.kind))
    extra = extra_json(ev.extra)
    # One encode + one update: the same digest as updating part by part, NUL-terminated.
    blob = "\x00".join((ev.role, ev.ts or "", ev.agent_model or "", ev.git_branch or "", text,
                        raw, extra or "", repr(tools), repr(files), ref or ""))
    sig = hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return _new_row(EventRow, (ev.event_id, agent, ev.session_native_id, ev.seq, ev.ts,
                               ev.role, ev.agent_model, ev.git_branch, text, raw,
                               ev.schema_version, extra, sig, ref, tuple(tools), tuple(files)))


# EventRow(...) in all 16 fields, without the NamedTuple's argument-parsing __new__ (one per
# stored event).
_new_row = tuple.__new__


def _session(agent: str, source: Source, ev: NormalizedEvent,
             prev: SessionUpsert | None) -> SessionUpsert:
    parent: str | None = None
    sub = False
    for key, value in ev.extra:  # as dict(ev.extra) reads them: the last one wins
        if key == "parent_session":
            parent = value
        elif key == "is_subagent":
            sub = value == "1"
    if prev is None:
        return SessionUpsert(agent=agent, session_id=ev.session_native_id,
                             project_root=ev.project_root, git_remote=ev.git_remote or None,
                             git_branch=ev.git_branch or None, source_path=str(source.path),
                             parent_session=parent or None, is_subagent=sub)
    root = prev.project_root or ev.project_root
    remote = ev.git_remote or prev.git_remote
    branch = ev.git_branch or prev.git_branch
    parent = parent or prev.parent_session
    sub = sub or prev.is_subagent
    if (root, remote, branch, parent, sub) == (prev.project_root, prev.git_remote,
                                               prev.git_branch, prev.parent_session,
                                               prev.is_subagent):
        return prev  # the usual case: a session's events agree; no new object per event
    return SessionUpsert(agent=agent, session_id=ev.session_native_id, project_root=root,
                         git_remote=remote, git_branch=branch, source_path=prev.source_path,
                         parent_session=parent, is_subagent=sub)
