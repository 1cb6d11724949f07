"""The ingest run: discover -> read from cursors -> filter, attribute, redact -> store atomically."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from looma_git.errors import LockError
from looma_git.gitrepo import RepoPaths
from looma_git.index import storedb
from looma_git.index.event_writer import CursorRow, EventRow, SessionUpsert, extra_json, write_batch
from looma_git.ingest import noise
from looma_git.ingest.attribution import Attributor, load_identity
from looma_git.ingest.base import Adapter, Cursor, DiscoveryEnv, ReadResult, Skip, Source
from looma_git.ingest.paths import PathResolver
from looma_git.ingest.registry import AdapterUnavailable, all_adapters, get_adapter
from looma_git.model import NormalizedEvent
from looma_git.redact import redact

Progress = Callable[[int, int, str], None]

# Sources whose (size, mtime_ns) fully describe a change; directories and databases with
# side files (WAL) are always handed to their adapter, which diffs by content itself.
_STAT_SKIPPABLE = frozenset({"jsonl", "json", "text"})
_FILE_OPS = frozenset({"edit", "write", "read"})
_MAX_NOTES = 50
# Several small sources share one commit (each commit costs far more than a few rows);
# a source's events and its cursor still always commit together.
_TXN_EVENTS = 5000
_TXN_SOURCES = 200
_MAX_SAMPLES = 3


@dataclass
class AgentStats:
    """Per-agent counters of one run."""

    sources: int = 0
    unchanged: int = 0
    events_added: int = 0
    events_updated: int = 0
    sessions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    noise: dict[str, int] = field(default_factory=dict)


@dataclass
class RunResult:
    """Everything one ingest run did (the api turns it into the IngestReport)."""

    agents: dict[str, AgentStats] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skip_samples: dict[str, list[str]] = field(default_factory=dict)
    redactions: dict[str, int] = field(default_factory=dict)
    unattributed_events: int = 0
    duration_s: float = 0.0
    run_id: int = 0

    def note(self, text: str) -> None:
        if len(self.notes) < _MAX_NOTES:
            self.notes.append(text)

    def skip(self, stats: AgentStats, s: Skip) -> None:
        stats.skipped[s.reason] = stats.skipped.get(s.reason, 0) + 1
        samples = self.skip_samples.setdefault(s.reason, [])
        if len(samples) < _MAX_SAMPLES:
            samples.append(s.location)


@contextlib.contextmanager
def writer_lock(paths: RepoPaths, wait_s: float = 0.0) -> Iterator[None]:
    """One ingest writer per clone: an exclusive flock on `<state>/ingest.lock`."""
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    lock_path = paths.state_dir / "ingest.lock"
    try:
        import fcntl
    except ImportError:  # Windows: SQLite's own locking still keeps the store consistent
        yield
        return
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockError(f"another looma ingest is running ({lock_path})",
                                    hint="wait for it to finish, then retry") from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _stat_sig(source: Source) -> tuple[int, int] | None:
    try:
        st = os.stat(source.path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns


def run_ingest(paths: RepoPaths, env: DiscoveryEnv, *, agents: list[str] | None = None,
               progress: Progress | None = None, lock_wait_s: float = 0.0) -> RunResult:
    """One pass over every adapter's sources; see DESIGN.md §3 and docs/adapters.md."""
    started = time.monotonic()
    result = RunResult()
    names = agents or all_adapters()
    with writer_lock(paths, lock_wait_s):
        conn = storedb.connect(paths)
        try:
            storedb.ensure_schema(conn)
            run_id = int(storedb.get_meta(conn, "ingest_run") or 0) + 1
            conn.execute("BEGIN IMMEDIATE")
            storedb.set_meta(conn, "ingest_run", str(run_id))
            conn.execute("COMMIT")
            result.run_id = run_id
            runner = _Runner(conn, paths, result, run_id)
            plan: list[tuple[str, Adapter, list[Source]]] = []
            for name in names:
                stats = result.agents.setdefault(name, AgentStats())
                try:
                    adapter = get_adapter(name)
                except AdapterUnavailable as exc:
                    result.note(f"{exc} (skipped)")
                    continue
                try:
                    sources = adapter.discover(env)
                except Exception as exc:  # an adapter bug must not abort the other agents
                    result.skip(stats, Skip("adapter_error", f"{name} discover: "
                                                             f"{type(exc).__name__}: {exc}"))
                    continue
                for s in getattr(adapter, "discovery_skips", None) or []:
                    if isinstance(s, Skip):
                        result.skip(stats, s)
                plan.append((name, adapter, sources))
            total = sum(len(s) for _, _, s in plan)
            done = 0
            for name, adapter, sources in plan:
                for source in sources:
                    if progress is not None:
                        progress(done, total, f"{name} {source.path.name}")
                    runner.source(name, adapter, source)
                    done += 1
            runner.commit()
            if progress is not None:
                progress(done, total, "done")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()
    result.duration_s = time.monotonic() - started
    return result


class _Runner:
    """Per-run state: store connection, cursors, attribution caches."""

    def __init__(self, conn: sqlite3.Connection, paths: RepoPaths, result: RunResult,
                 run_id: int) -> None:
        self.conn = conn
        self.result = result
        self.run_id = run_id
        self.attr = Attributor(load_identity(paths))
        self.resolver = PathResolver(self.attr)
        self.cursors = {row["source_id"]: row for row in conn.execute("SELECT * FROM cursors")}
        self.known = {(r[0], r[1]) for r in conn.execute("SELECT agent, session_id FROM sessions")}
        self.now = int(time.time())
        self.txn_events = 0
        self.txn_sources = 0

    def commit(self) -> None:
        """Commit the open multi-source transaction, if any."""
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self.txn_events = self.txn_sources = 0

    def source(self, agent: str, adapter: Adapter, source: Source) -> None:
        stats = self.result.agents[agent]
        stats.sources += 1
        sig = _stat_sig(source)
        row = self.cursors.get(source.source_id)
        if row is not None and sig is not None and source.kind in _STAT_SKIPPABLE \
                and (row["size"], row["mtime_ns"]) == sig:
            stats.unchanged += 1
            return
        cursor = None if row is None else Cursor(
            offset=row["offset"] or 0, head_fp=row["head_fp"] or "",
            content_hash=row["content_hash"] or "", state=row["state"] or "")
        try:
            rr = adapter.read(source, cursor)
        except Exception as exc:  # a broken/locked source is skipped with its location
            self.result.skip(stats, Skip("adapter_error", f"{source.path}: "
                                                          f"{type(exc).__name__}: {exc}"))
            return
        self._store(agent, source, sig, rr, stats)

    def _store(self, agent: str, source: Source, sig: tuple[int, int] | None, rr: ReadResult,
               stats: AgentStats) -> None:
        counts: dict[tuple[str, str], int] = {}
        for s in rr.skips:
            self.result.skip(stats, s)
            counts[("skipped", s.reason)] = counts.get(("skipped", s.reason), 0) + 1
        for reason, n in rr.noise.items():
            stats.noise[reason] = stats.noise.get(reason, 0) + n
            counts[("noise", reason)] = counts.get(("noise", reason), 0) + n
        for n_ in rr.notes:
            self.result.note(n_)
        events = self._filter(rr.events, stats, counts)
        ours = self._attributed_sessions(agent, events)
        rows: list[EventRow] = []
        sessions: dict[str, SessionUpsert] = {}
        for ev in events:
            if ev.session_native_id not in ours:
                self.result.unattributed_events += 1
                continue
            rows.append(self._row(agent, ev, counts))
            sessions[ev.session_native_id] = self._session(agent, source, ev,
                                                           sessions.get(ev.session_native_id))
        c = rr.cursor
        cur = CursorRow(source.source_id, agent, str(source.path), c.offset, c.head_fp,
                        c.content_hash, c.state, sig[0] if sig else None,
                        sig[1] if sig else None)
        count_rows = [(self.run_id, kind, f"{agent}:{key}", n) for (kind, key), n in
                      sorted(counts.items())]
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
        wr = write_batch(self.conn, rows, list(sessions.values()), cur, count_rows, self.now,
                         own_transaction=False)
        self.txn_events += len(rows)
        self.txn_sources += 1
        if self.txn_events >= _TXN_EVENTS or self.txn_sources >= _TXN_SOURCES:
            self.commit()
        stats.events_added += wr.added
        stats.events_updated += wr.updated
        new_sessions = {sid for (_, sid) in wr.sessions_with_new}
        stats.sessions += len(new_sessions)
        self.known.update((agent, sid) for sid in ours)

    def _filter(self, events: list[NormalizedEvent], stats: AgentStats,
                counts: dict[tuple[str, str], int]) -> list[NormalizedEvent]:
        """The engine's own noise pass, applied to every adapter's output."""
        acks = noise.AckFilter()
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
            if reason is None and not ev.tool_calls and ev.role in ("user", "assistant") \
                    and acks.is_repeat(ev.session_native_id, ev.role, text.strip()):
                reason = noise.REPEATED_ACK
            if reason is not None:
                stats.noise[reason] = stats.noise.get(reason, 0) + 1
                counts[("noise", reason)] = counts.get(("noise", reason), 0) + 1
                continue
            kept.append(ev)
        return kept

    def _attributed_sessions(self, agent: str, events: list[NormalizedEvent]) -> set[str]:
        ours: set[str] = set()
        for ev in events:
            sid = ev.session_native_id
            if sid in ours:
                continue
            if (agent, sid) in self.known or self.attr.attributes(ev.project_root, ev.git_remote):
                ours.add(sid)
        return ours

    def _redact(self, text: str) -> str:
        if not text:
            return text
        red = redact(text)
        for kind, n in red.hits.items():
            self.result.redactions[kind] = self.result.redactions.get(kind, 0) + n
        return red.text

    def _row(self, agent: str, ev: NormalizedEvent, counts: dict[tuple[str, str], int]
             ) -> EventRow:
        text = self._redact(ev.text)
        raw = self._redact(ev.raw_json)
        tools = []
        files = []
        for idx, tc in enumerate(ev.tool_calls):
            command = self._redact(tc.command) if tc.command else tc.command
            tools.append((idx, tc.name, tc.kind, command, tc.exit_code, int(tc.is_error),
                          tc.test_outcome))
            if tc.kind in _FILE_OPS:
                for p in tc.paths:
                    files.append((idx, p, self.resolver.relpath(p, ev.project_root), tc.kind))
        extra = extra_json(ev.extra)
        h = hashlib.sha256()
        for part in (ev.role, ev.ts or "", ev.agent_model or "", ev.git_branch or "", text, raw,
                     extra or "", repr(tools), repr(files)):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\x00")
        return EventRow(ev.event_id, agent, ev.session_native_id, ev.seq, ev.ts, ev.role,
                        ev.agent_model, ev.git_branch, text, raw, ev.schema_version, extra,
                        h.hexdigest()[:24], tuple(tools), tuple(files))

    def _session(self, agent: str, source: Source, ev: NormalizedEvent,
                 prev: SessionUpsert | None) -> SessionUpsert:
        extra = dict(ev.extra)
        root = prev.project_root if prev and prev.project_root else ev.project_root
        return SessionUpsert(
            agent=agent, session_id=ev.session_native_id, project_root=root,
            git_remote=ev.git_remote or (prev.git_remote if prev else None),
            git_branch=ev.git_branch or (prev.git_branch if prev else None),
            source_path=prev.source_path if prev else str(source.path),
            parent_session=extra.get("parent_session") or (prev.parent_session if prev else None),
            is_subagent=extra.get("is_subagent") == "1" or bool(prev and prev.is_subagent))


def default_env(home: Path) -> DiscoveryEnv:
    """A DiscoveryEnv with only a home directory (tests, library callers)."""
    return DiscoveryEnv(home=home)
