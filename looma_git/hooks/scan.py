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
- the names in each directory holding sources: a transcript-like file without a cursor (one
  that was empty or unreadable when last scanned) means a scan;
- every source's size and mtime (a few microseconds each: 5,000 sources cost ~25 ms, far
  less than the ingest machinery a scan starts), so an old session appended to is seen too.
When all of that is unchanged the step skips the scan; it misses nothing a full scan would
find. Agents whose sources are databases or directories (Cursor, Windsurf, OpenCode) change
without a new file: with any of those known the step always scans.
"""

from __future__ import annotations

import os

from looma_git.gitrepo import RepoPaths

QUIET_AGENTS = frozenset({"claude-code", "codex", "gemini-cli"})  # plain files: size + mtime
LEVELS = 3
_SUFFIXES = (".jsonl", ".json", ".zst")


def unchanged(paths: RepoPaths) -> str | None:
    """A one-line account of what was checked when no source can have new lines, else None."""
    from looma_git.index import storedb

    if not paths.store_db.exists():
        return None
    conn = storedb.connect(paths)
    try:
        cur = conn.cursor()
        cur.row_factory = None  # plain tuples: 5,000 sqlite3.Row objects cost more than the stats
        rows = cur.execute(
            "SELECT agent, path, size, mtime_ns, updated_at FROM cursors").fetchall()
    except Exception:  # an older or damaged store: the full ingest reports it
        return None
    finally:
        conn.close()
    if not rows:
        return None
    held: dict[str, int] = {}  # directory holding sources -> the newest of their refs
    names: dict[str, set[str]] = {}  # directory holding sources -> their file names
    for agent, path, size, mtime, seen in rows:
        if agent not in QUIET_AGENTS or not isinstance(path, str) or size is None \
                or mtime is None:
            return None
        # `updated_at` has whole seconds: a file created in that second after the run's
        # discovery is caught by the name check below
        ref = max(mtime, (seen + 1) * 1_000_000_000 if isinstance(seen, int) else 0)
        d, _, name = path.rpartition(os.sep)  # os.path.dirname, for a file's absolute path
        if not d:
            d = os.path.dirname(path)
        if held.get(d, -1) < ref:
            held[d] = ref
        names.setdefault(d, set()).add(name)
    dirname = os.path.dirname
    newest: dict[str, int] = {}  # each holding directory and LEVELS - 1 above it (few)
    for d, ref in held.items():
        for level in range(LEVELS):
            if level:
                d = dirname(d)
            if newest.get(d, -1) < ref:
                newest[d] = ref
    stat = os.stat
    try:
        for d, mtime in newest.items():
            if stat(d).st_mtime_ns > mtime:
                return None
        for d, known in names.items():
            for name in os.listdir(d):
                if name.endswith(_SUFFIXES) and name not in known:
                    return None
        for _, path, size, mtime, _ in rows:
            st = stat(path)
            if st.st_size != size or st.st_mtime_ns != mtime:
                return None
    except OSError:  # a source or directory went away: the full scan handles it
        return None
    return f"{len(newest)} directories and {len(rows)} sources unchanged"
