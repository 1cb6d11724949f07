"""The ingest run: discover -> read from cursors -> filter, attribute, redact -> store atomically."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from looma_git.errors import LockError
from looma_git.gitrepo import RepoPaths
from looma_git.index import event_stage, storedb
from looma_git.index.event_writer import write_batch
from looma_git.ingest import parallel
from looma_git.ingest.attribution import Attributor, load_identity
from looma_git.ingest.base import Adapter, Cursor, DiscoveryEnv, Skip, Source
from looma_git.ingest.paths import PathResolver
from looma_git.ingest.prepare import MAX_SAMPLES, Prepared, prepare, staged
from looma_git.ingest.prepare import warm as warm_redactor
from looma_git.ingest.registry import AdapterUnavailable, all_adapters, get_adapter

Progress = Callable[[int, int, str], None]

# Sources whose (size, mtime_ns) fully describe a change; directories and databases with
# side files (WAL) are always handed to their adapter, which diffs by content itself.
_STAT_SKIPPABLE = frozenset({"jsonl", "json", "text"})
_MAX_NOTES = 50
# Several small sources share one commit (each commit costs far more than a few rows);
# a source's events and its cursor still always commit together. Event ids are hashes, so
# every commit rewrites most of the id index's pages: a cold run of 145k events spent 0.8
# CPU-s committing every 5,000 events, 0.5 every 25,000 (larger gains little more).
# LOOMA_INGEST_TXN_EVENTS sets it (a test that kills a run between two commits needs a
# history of two batches, not of 50,000 events).
_TXN_EVENTS = int(os.environ.get("LOOMA_INGEST_TXN_EVENTS") or 25_000)
_TXN_SOURCES = 500
# Agents whose adapters keep no state between reads, so a forked worker may read them; and
# how many changed sources make forking worth its start-up cost (a post-commit hook run
# usually sees one or two).
_PARALLEL = frozenset({"claude-code", "codex"})
_MIN_PARALLEL = 16
_CACHE_KIB = 64 * 1024
_CHECKPOINT_PAGES = 10_000


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
        if len(samples) < MAX_SAMPLES:
            samples.append(s.location)

    def skips(self, stats: AgentStats, counts: dict[str, int],
              locations: dict[str, list[str]]) -> None:
        """`skip` for a source's skips given as counts and first locations per reason."""
        for reason, n in counts.items():
            stats.skipped[reason] = stats.skipped.get(reason, 0) + n
            samples = self.skip_samples.setdefault(reason, [])
            for loc in locations.get(reason, ())[:MAX_SAMPLES - len(samples)]:
                samples.append(loc)


@contextlib.contextmanager
def writer_lock(paths: RepoPaths, wait_s: float = 0.0) -> Iterator[int | None]:
    """One ingest writer per clone: an exclusive flock on `<state>/ingest.lock`.

    Yields the locked descriptor (None where flock does not exist) so forked readers can
    close their copy of it.
    """
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    lock_path = paths.state_dir / "ingest.lock"
    try:
        import fcntl
    except ImportError:  # Windows: SQLite's own locking still keeps the store consistent
        yield None
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
        yield fd
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
               progress: Progress | None = None, lock_wait_s: float = 0.0,
               workers: int | None = None) -> RunResult:
    """One pass over every adapter's sources; see DESIGN.md §3 and docs/adapters.md.

    With `workers` > 1 (default: one per CPU) and enough changed sources, sources are read,
    filtered and redacted in forked processes; storing stays in this process, in source
    order, so the store ends up exactly as a sequential run leaves it.
    """
    started = time.monotonic()
    result = RunResult()
    names = agents or all_adapters()
    from looma_git.store.locking import pass_lock

    # Not beside a refinery pass (a drainer's, or another ingest's work model): a pass that
    # read a store being written published the efforts it saw half-stored as WorkItems of its
    # own, and a forked child of it read pages being rewritten ("disk I/O error").
    with writer_lock(paths, lock_wait_s) as lock_fd, pass_lock(paths.state_dir,
                                                               wait=lock_wait_s):
        conn = storedb.connect(paths)
        try:
            storedb.ensure_schema(conn)
            # A bulk run touches many index pages at random (event ids are hashes): a larger
            # page cache and fewer, larger WAL checkpoints cut its store time by ~40%.
            conn.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            conn.execute(f"PRAGMA wal_autocheckpoint={_CHECKPOINT_PAGES}")
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
            items = [runner.item(name, adapter, source)
                     for name, adapter, sources in plan for source in sources]
            n_workers = parallel.default_workers() if workers is None else workers
            runner.run(items, progress, n_workers, (lock_fd,) if lock_fd is not None else ())
            runner.commit()
            if progress is not None:
                progress(len(items), len(items), "done")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()
    result.duration_s = time.monotonic() - started
    return result


@dataclass(frozen=True)
class _Item:
    """One source of the run with what its turn needs: stat signature and stored cursor."""

    agent: str
    adapter: Adapter
    source: Source
    sig: tuple[int, int] | None
    cursor: Cursor | None
    unchanged: bool


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
        self.items: list[_Item] = []

    def commit(self) -> None:
        """Commit the open multi-source transaction, if any."""
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self.txn_events = self.txn_sources = 0

    def item(self, agent: str, adapter: Adapter, source: Source) -> _Item:
        """Stat a source and decide whether its stored cursor already covers it."""
        sig = _stat_sig(source)
        row = self.cursors.get(source.source_id)
        unchanged = row is not None and sig is not None and source.kind in _STAT_SKIPPABLE \
            and (row["size"], row["mtime_ns"]) == sig
        cursor = None if row is None else Cursor(
            offset=row["offset"] or 0, head_fp=row["head_fp"] or "",
            content_hash=row["content_hash"] or "", state=row["state"] or "")
        return _Item(agent, adapter, source, sig, cursor, unchanged)

    def run(self, items: list[_Item], progress: Progress | None, workers: int,
            close_fds: tuple[int, ...]) -> None:
        """Read and store every item in order, reading in worker processes when it pays."""
        self.items = items
        par = [i for i, it in enumerate(items) if not it.unchanged and it.agent in _PARALLEL]
        pooled = workers > 1 and len(par) >= _MIN_PARALLEL and parallel.fork_available()
        task = self.prepare_item
        if pooled:
            warm_redactor()
            if event_stage.AVAILABLE:
                event_stage.attach(self.conn)
                task = self.prepare_staged
        results = parallel.ordered_map(task, par, workers, close_fds) if pooled else None
        with contextlib.ExitStack() as stack:
            if results is not None:
                stack.callback(results.close)
            for i, it in enumerate(items):
                if progress is not None:
                    progress(i, len(items), f"{it.agent} {it.source.path.name}")
                stats = self.result.agents[it.agent]
                stats.sources += 1
                if it.unchanged:
                    stats.unchanged += 1
                    continue
                if results is not None and it.agent in _PARALLEL:
                    j, prep = next(results)
                    assert j == i, "worker results out of order"
                    if any((it.agent, sid) in self.known for sid in prep.not_ours):
                        # A session became ours earlier in this run, after the fork.
                        prep = self.prepare_item(i)
                else:
                    prep = self.prepare_item(i)
                self._apply(it, prep, stats)

    def prepare_item(self, i: int) -> Prepared:
        """Read item `i` and turn it into rows (pure: runs in a worker or here)."""
        it = self.items[i]
        try:
            rr = it.adapter.read(it.source, it.cursor)
        except Exception as exc:  # a broken/locked source is skipped with its location
            return Prepared(error=Skip("adapter_error", f"{it.source.path}: "
                                                        f"{type(exc).__name__}: {exc}"))
        return prepare(it.agent, it.source, it.sig, rr, self.attr, self.resolver,
                       lambda agent, sid: (agent, sid) in self.known)

    def prepare_staged(self, i: int) -> Prepared:
        """`prepare_item` with the rows staged: what a reader process ships."""
        return staged(self.prepare_item(i))

    def _apply(self, it: _Item, p: Prepared, stats: AgentStats) -> None:
        """Count one prepared source and store its rows and cursor together."""
        if p.error is not None:
            self.result.skip(stats, p.error)
            return
        self.result.skips(stats, p.skip_counts, p.skip_samples)
        for reason, n in p.noise.items():
            stats.noise[reason] = stats.noise.get(reason, 0) + n
        for n_ in p.notes:
            self.result.note(n_)
        for reason, n in p.filter_noise.items():
            stats.noise[reason] = stats.noise.get(reason, 0) + n
        self.result.unattributed_events += p.unattributed
        red = self.result.redactions
        source_red = p.redactions
        for kind, n in source_red.items():
            red[kind] = red.get(kind, 0) + n
        assert p.cursor is not None
        count_rows = [(self.run_id, kind, f"{it.agent}:{key}", n) for (kind, key), n in
                      sorted(p.counts.items())]
        # Redaction hits are kept like noise and skips: `status --health` reports them.
        count_rows += [(self.run_id, "redaction", f"{it.agent}:{kind}", n)
                       for kind, n in sorted(source_red.items())]
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
        wr = write_batch(self.conn, p.rows, list(p.sessions.values()), p.cursor, count_rows,
                         self.now, own_transaction=False, staged=p.staged,
                         written=p.written)
        self.txn_events += p.staged.rows if p.staged is not None else len(p.rows)
        self.txn_sources += 1
        if self.txn_events >= _TXN_EVENTS or self.txn_sources >= _TXN_SOURCES:
            self.commit()
        stats.events_added += wr.added
        stats.events_updated += wr.updated
        new_sessions = {sid for (_, sid) in wr.sessions_with_new}
        stats.sessions += len(new_sessions)
        self.known.update((it.agent, sid) for sid in p.ours)


def default_env(home: Path) -> DiscoveryEnv:
    """A DiscoveryEnv with only a home directory (tests, library callers)."""
    return DiscoveryEnv(home=home)
