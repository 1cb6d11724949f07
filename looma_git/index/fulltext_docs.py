"""What the full-text index holds: its documents and hits, the Tantivy schema and analyzer they
are indexed with, and the «» marking of highlighted ranges."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from looma_git.errors import InvalidDataError

if TYPE_CHECKING:
    import tantivy

DOC_TYPES = frozenset({"message", "workitem", "memory", "session"})
MARK_OPEN, MARK_CLOSE = "«", "»"


@dataclass(frozen=True)
class Doc:
    """One document to index. `doc_id` is the unique key; `ts` is a Unix timestamp."""

    doc_id: str
    doc_type: str
    title: str = ""
    body: str = ""
    ts: int = 0
    workitem: str | None = None
    agent: str | None = None
    session: str | None = None


@dataclass(frozen=True)
class Hit:
    """One search result; `snippet` is plain text with matched terms wrapped in «»."""

    doc_id: str
    doc_type: str
    workitem: str | None
    session: str | None
    title: str
    score: float
    snippet: str
    ts: int = 0
    agent: str | None = None


def build_schema() -> tantivy.Schema:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("doc_type", stored=True, tokenizer_name="raw")
    sb.add_text_field("workitem", stored=True, tokenizer_name="raw")
    sb.add_text_field("agent", stored=True, tokenizer_name="raw")
    sb.add_text_field("session", stored=True, tokenizer_name="raw")
    sb.add_text_field("title", stored=True, tokenizer_name="en_stem")
    sb.add_text_field("body", stored=True, tokenizer_name="en_stem")
    sb.add_integer_field("ts", stored=True, indexed=True, fast=True)
    return sb.build()


def build_analyzer() -> tantivy.TextAnalyzer:
    """The same pipeline as Tantivy's built-in `en_stem`, so query terms equal indexed terms."""
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def check_doc_id(doc_id: object) -> None:
    """A document id is a non-empty string (InvalidDataError otherwise)."""
    if not isinstance(doc_id, str) or not doc_id:
        raise InvalidDataError(f"document id must be a non-empty string, got {doc_id!r}")


def check_doc(doc: Doc) -> None:
    check_doc_id(doc.doc_id)
    if doc.doc_type not in DOC_TYPES:
        raise InvalidDataError(
            f"document {doc.doc_id!r} has unknown type {doc.doc_type!r}",
            hint=f"one of {', '.join(sorted(DOC_TYPES))}",
        )


def to_tantivy(doc: Doc) -> tantivy.Document:
    import tantivy

    check_doc(doc)
    fields: dict[str, Any] = {
        "doc_id": doc.doc_id,
        "doc_type": doc.doc_type,
        "title": doc.title or "",
        "body": doc.body or "",
        "ts": int(doc.ts),
    }
    # Absent keys stay absent (not ""), so a term filter on "" never matches them.
    for key in ("workitem", "agent", "session"):
        value = getattr(doc, key)
        if value:
            fields[key] = value
    return tantivy.Document(**fields)


def mark_ranges(text: str, ranges: Iterable[tuple[int, int]]) -> str:
    """Wrap the UTF-8 byte ranges Tantivy reports as highlighted in «» (plain text out)."""
    raw = text.encode("utf-8")
    out: list[bytes] = []
    pos = 0
    for start, end in sorted(ranges):
        if start < pos or end <= start or end > len(raw):
            continue
        out += [raw[pos:start], MARK_OPEN.encode(), raw[start:end], MARK_CLOSE.encode()]
        pos = end
    out.append(raw[pos:])
    return b"".join(out).decode("utf-8", errors="replace")
