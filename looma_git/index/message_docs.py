"""The full-text docs of stored messages, written as Tantivy JSON by SQLite from store.db rows.

A cold ingest indexes ~100k messages: building a `Doc`, a field dict and a `tantivy.Document`
per message in Python was a sixth of indexing them (2.1G of 14.3G instructions at 77k; the
rest is Tantivy's). SQLite writes each doc's JSON in C instead (the same fields and values
`fulltext_docs.to_tantivy` gives a `Doc` of the row) and the writer parses it in Rust
(`IndexWriter.add_json`): 12.2G in all (Python 0.25G, SQLite ~0.5G more than before)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from looma_git.index.fulltext_docs import check_doc_id

MESSAGE_CHARS = 4000

# The doc without its `ts`; agent and session are left out when empty (as `to_tantivy` leaves
# a falsy field out: a term filter on "" then never matches them).
_HEAD = (
    "'{\"doc_id\":' || json_quote(event_id) || ',\"doc_type\":\"message\",\"title\":' || "
    "json_quote(role) || ',\"body\":' || json_quote(substr(text, 1, ?)) || "
    "CASE WHEN agent != '' THEN ',\"agent\":' || json_quote(agent) ELSE '' END || "
    "CASE WHEN session_id != '' THEN ',\"session\":' || json_quote(session_id) ELSE '' END")

# Its `ts` is added in Python: `isotime.parse_ts` is what every other reader of `ts` uses (and
# costs ~0.05 CPU-s per 100k); SQLite's date functions read other forms and cost more.
_SQL = (
    f"SELECT event_id, {_HEAD} || ',\"ts\":', ts, ingested_at FROM events "
    "WHERE ingested_at > ? AND role IN ('user','assistant') AND text != '' "
    "ORDER BY ingested_at, event_id")


class JsonDoc(NamedTuple):
    """A doc already written as the Tantivy JSON of its fields (`FullTextIndex.apply`)."""

    doc_id: str
    json: str


def message_docs(conn: Any, since: int, mark: list[int]) -> Iterator[JsonDoc]:
    """Message docs of the events ingested after `since`, streamed (never all in memory);
    `mark[0]` ends at the largest `ingested_at` seen."""
    from looma_git.isotime import parse_ts

    mark[:] = [since]
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples: no sqlite3.Row per message
    cur.execute(_SQL, (MESSAGE_CHARS, since))
    while rows := cur.fetchmany(1000):
        for doc_id, head, ts, _ in rows:
            check_doc_id(doc_id)
            yield JsonDoc(doc_id, f"{head}{int(parse_ts(ts or ''))}}}")
        mark[0] = max(mark[0], max(int(r[3] or 0) for r in rows))
