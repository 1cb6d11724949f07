"""What the per-commit linker scores against, kept in store.db (`refine_targets` and their
file/branch/session keys): written by a pass, read by the drain's link step."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from looma_git.pipeline.linking import Target as LinkTarget

_FEW_TARGETS = 32  # more changed targets than this: their keys are rewritten whole


def save_targets(conn: sqlite3.Connection, targets: Iterable[LinkTarget],
                 ledger_ids: dict[str, str], creates: dict[str, dict[str, Any]],
                 keep: frozenset[str] = frozenset()) -> None:
    """What the per-commit linker scores against, indexed by file, branch and session; only
    the targets that changed are rewritten (with their keys). `keep`: targets whose stored
    rows are this pass's already (a WorkItem the pass reused whole): not serialised again."""
    have = {r[0]: tuple(r) for r in conn.execute(
        "SELECT id, ledger_id, json, create_json FROM refine_targets")}
    targets = list(targets)
    keep = keep & set(have) & {t.id for t in targets}
    rows, keys = {k: have[k] for k in keep}, {}
    for t in targets:
        if t.id not in keep:
            rows[t.id] = (t.id, ledger_ids.get(t.id), json.dumps({
                "id": t.id, "title": t.title, "files": sorted(t.files),
                "branches": sorted(t.branches), "spans": [list(s) for s in t.spans],
                "terms": [list(x) for x in t.terms],
                "windows": [list(w) for w in t.windows]}, sort_keys=True),
                json.dumps(creates[t.id], sort_keys=True) if t.id in creates else None)
        keys[t.id] = ([("f:" + f, t.id) for f in sorted(t.files)]
                      + [("b:" + b, t.id) for b in sorted(t.branches)]
                      + [("s:" + s, t.id) for s in sorted({w[0] for w in t.windows})])
    stale = [(k,) for k, r in have.items() if rows.get(k) != r]
    fresh = [k for k, r in rows.items() if have.get(k) != r]
    conn.executemany("DELETE FROM refine_targets WHERE id=?", stale)
    conn.executemany("INSERT INTO refine_targets(id, ledger_id, json, create_json) "
                     "VALUES (?,?,?,?)", [rows[k] for k in fresh])
    if len(stale) > _FEW_TARGETS:  # (the keys have no index by id: one scan per delete)
        conn.execute("DELETE FROM refine_target_keys")
        fresh = list(rows)
    else:
        conn.executemany("DELETE FROM refine_target_keys WHERE id=?", stale)
    conn.executemany("INSERT INTO refine_target_keys(key, id) VALUES (?,?)",
                     [kv for k in fresh for kv in keys[k]])


def targets_near(conn: sqlite3.Connection, files: Iterable[str], branches: Iterable[str],
                 sessions: Iterable[str] = ()
                 ) -> list[tuple[LinkTarget, str | None, dict[str, Any] | None]]:
    """Targets sharing a file, a branch or a session: (target, ledger id, create payload if
    unpublished)."""
    keys = sorted({"f:" + f for f in files} | {"b:" + b for b in branches}
                  | {"s:" + s for s in sessions})
    if not keys:
        return []
    ids: set[str] = set()
    for i in range(0, len(keys), 500):
        part = keys[i:i + 500]
        ids.update(r[0] for r in conn.execute(
            f"SELECT DISTINCT id FROM refine_target_keys WHERE key IN "
            f"({','.join('?' * len(part))})", part))
    out = []
    for tid in sorted(ids):
        row = conn.execute("SELECT json, ledger_id, create_json FROM refine_targets WHERE id=?",
                           (tid,)).fetchone()
        if row is None:
            continue
        d = json.loads(row[0])
        out.append((LinkTarget(id=d["id"], title=d["title"], files=frozenset(d["files"]),
                           branches=frozenset(d["branches"]),
                           spans=tuple((float(a), float(b)) for a, b in d["spans"]),
                           terms=tuple((t, int(n)) for t, n in d["terms"]),
                           windows=tuple((str(k), float(a), float(b))
                                         for k, a, b in d.get("windows", ()))),
                    row[1], json.loads(row[2]) if row[2] else None))
    return out


def pass_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """One value the last pass recorded (`refine_meta`; `index.workmodel.get_meta` without
    importing the work model's types, which the drain's link step does not need)."""
    row = conn.execute("SELECT value FROM refine_meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_target_ledger_id(conn: sqlite3.Connection, local: str, ledger_id: str) -> None:
    conn.execute("UPDATE refine_targets SET ledger_id=?, create_json=NULL WHERE id=?",
                 (ledger_id, local))
