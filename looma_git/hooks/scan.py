"""The drain's quick look at transcripts: whether any source may hold new lines, from few stats.

A full ingest stats every transcript source (5,000 of them for a heavy user) to find the few
that grew; after a commit, almost always none did, or only the session that is still running.
So before its ingest step the drainer checks, against the cursors store.db keeps for every
source (its size and mtime when last read):
- every directory holding sources, up to three levels up (`projects/<slug>`, a Codex day,
  its month and year): a new file (a new session, a resumed one, a subagent) makes a
  directory newer than the last ingest that stored a cursor beneath it (a cursor's
  `updated_at`, the start of that run, or the source's mtime when later: file times may be
  set back, as Codex's rollouts are by some tools and by the scale benchmark's generator);
- the names in each directory holding sources: a file the agent's discovery would list that
  has no cursor (one that was empty or unreadable when last scanned) means a scan; files it
  never lists (a subagent's `.meta.json`, `history.jsonl`, an index file) do not;
- every source's size and mtime (a few microseconds each: 5,000 sources cost ~25 ms, far
  less than the ingest machinery a scan starts), so an old session appended to is seen too.
When all of that is unchanged the step skips the scan; it misses nothing a full scan would
find. Agents whose sources are databases or directories (Cursor, Windsurf, OpenCode) change
without a new file: with any of those known the step always scans.

What the cursors say is kept in `<git-common-dir>/looma/scan-cursors` (a marshal of the
directories, names and signatures above), keyed by store.db's `ingest_run`, the cursor table's
largest rowid and row count and store.db's inode: only an ingest run writes cursors, and every
write moves the rowid (INSERT OR REPLACE; a run rewriting the newest row moves `ingest_run`).
After an ingest only the rows from the cached largest rowid on are read and folded in (a new
session's few of 5,000); a row count other than what that gives means a full read. Reading
5,000 cursor rows and building the view cost ~30 ms, the file ~3 ms. A key that matches stale
rows can only make the check fail (a source differs from what the file says: a scan), never
pass.
"""

from __future__ import annotations

import contextlib
import marshal
import os

from looma_git.gitrepo import RepoPaths
from looma_git.ingest.names import listed

QUIET_AGENTS = frozenset({"claude-code", "codex", "gemini-cli"})  # plain files: size + mtime
LEVELS = 3
CACHE = "scan-cursors"
_FORMAT = 2


# What the check compares against: directory -> the newest ref of its sources, directory ->
# (agents, file names) of its sources, source path -> (size, mtime_ns, ref).
Base = tuple[dict[str, int], dict[str, tuple[list[str], set[str]]],
             dict[str, tuple[int, int, int]]]


def _merge(base: Base, rows: list[tuple[object, ...]], *, later: bool = False) -> bool:
    """Fold these cursor rows into `base` (new sources, or newer cursors of known ones);
    False when one is not a plain file of a quiet agent (then every drain scans) or, for
    rows written `later` than the base, would make a source's ref older (a full build
    decides then)."""
    held, names, sources = base
    for agent, path, size, mtime, seen in rows:
        if agent not in QUIET_AGENTS or not isinstance(path, str) or not isinstance(size, int) \
                or not isinstance(mtime, int):
            return False
        # `updated_at` has whole seconds: a file created in that second after the run's
        # discovery is caught by the name check below
        ref = max(mtime, (seen + 1) * 1_000_000_000 if isinstance(seen, int) else 0)
        old = sources.get(path)
        if old is not None and old[2] > ref:
            if later:
                return False
            continue
        sources[path] = (size, mtime, ref)
        d, _, name = path.rpartition(os.sep)  # os.path.dirname, for a file's absolute path
        if not d:
            d = os.path.dirname(path)
        if held.get(d, -1) < ref:
            held[d] = ref
        known = names.get(d)
        if known is None:
            names[d] = ([str(agent)], {name})
        else:
            if agent not in known[0]:
                known[0].append(str(agent))
            known[1].add(name)
    return True


def _newest(held: dict[str, int]) -> dict[str, int]:
    """Each directory holding sources and LEVELS - 1 above it (few), with its newest ref."""
    dirname = os.path.dirname
    newest: dict[str, int] = {}
    for d, ref in held.items():
        for level in range(LEVELS):
            if level:
                d = dirname(d)
            if newest.get(d, -1) < ref:
                newest[d] = ref
    return newest


_COLUMNS = "agent, path, size, mtime_ns, updated_at"


def _load(paths: RepoPaths) -> Base | None:
    """The view of store.db's cursors: the state dir's file while its key holds, the cursors
    written since folded into it when only rows were added or replaced (an ingest after a
    session: a few rows of 5,000), else read whole (and the file written)."""
    from looma_git.index import storedb

    if not paths.store_db.exists():
        return None
    conn = storedb.connect(paths)
    try:
        cur = conn.cursor()
        cur.row_factory = None  # plain tuples: 5,000 sqlite3.Row objects cost more than the stats
        meta = cur.execute("SELECT value FROM meta WHERE key='ingest_run'").fetchone()
        # the largest rowid moves with every INSERT OR REPLACE (a replaced newest row keeps
        # it, and its run moves `ingest_run`); the count tells a row removed
        top, count = cur.execute("SELECT max(rowid), count(*) FROM cursors").fetchone()
        key = [_FORMAT, str(meta[0]) if meta else "", int(top or 0), int(count or 0),
               os.stat(paths.store_db).st_ino]
        cached = _read_cache(paths)
        if cached is not None and cached[0] == key:
            return cached[1]
        base: Base | None = None
        since = cached[0][2] if cached is not None else None
        if cached is not None and cached[0][4] == key[4] and isinstance(since, int) \
                and since <= int(top or 0):
            base = cached[1]
            rows = cur.execute(f"SELECT {_COLUMNS} FROM cursors WHERE rowid >= ?",
                               (since,)).fetchall()
            if not _merge(base, rows, later=True) or len(base[2]) != key[3]:
                base = None
        if base is None:
            rows = cur.execute(f"SELECT {_COLUMNS} FROM cursors").fetchall()
            if not rows:
                return None
            base = ({}, {}, {})
            if not _merge(base, rows):
                return None
    except Exception:  # an older or damaged store: the full ingest reports it
        return None
    finally:
        conn.close()
    _write_cache(paths, key, base)
    return base


def _read_cache(paths: RepoPaths) -> tuple[list[object], Base] | None:
    try:
        data = marshal.loads((paths.state_dir / CACHE).read_bytes())
        if not isinstance(data, tuple) or len(data) != 4 or not isinstance(data[0], list) \
                or len(data[0]) != 5 or data[0][0] != _FORMAT:
            return None
        held, names, sources = data[1], data[2], data[3]
        if not (isinstance(held, dict) and isinstance(names, dict)
                and isinstance(sources, dict)):
            return None
        return data[0], (held, {d: (list(a), set(n)) for d, (a, n) in names.items()}, sources)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _write_cache(paths: RepoPaths, key: list[object], base: Base) -> None:
    """Best effort (a cache that cannot be written costs the query next time)."""
    sd = paths.state_dir
    if not sd.is_dir():
        return
    tmp = sd / f"{CACHE}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError, ValueError):
        tmp.write_bytes(marshal.dumps((key, *base)))
        os.replace(tmp, sd / CACHE)
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)


def unchanged(paths: RepoPaths) -> str | None:
    """A one-line account of what was checked when no source can have new lines, else None."""
    base = _load(paths)
    if base is None:
        return None
    held, names, sources = base
    newest = _newest(held)
    stat = os.stat
    try:
        for d, mtime in newest.items():
            if stat(d).st_mtime_ns > mtime:
                return None
        for d, (agents, known) in names.items():
            for name in os.listdir(d):
                if name not in known and any(listed(a, name) for a in agents):
                    return None
        for path, (size, mtime, _) in sources.items():
            st = stat(path)
            if st.st_size != size or st.st_mtime_ns != mtime:
                return None
    except OSError:  # a source or directory went away: the full scan handles it
        return None
    return f"{len(newest)} directories and {len(sources)} sources unchanged"
