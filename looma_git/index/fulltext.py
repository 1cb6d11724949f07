"""The Tantivy full-text index over generic documents: opening, safe query building, writes, snippets
(the documents, schema and analyzer are index/fulltext_docs)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looma_git.errors import InvalidDataError, LockError, ReadOnlyError
from looma_git.index.fulltext_docs import (  # noqa: F401  (Doc, Hit, mark_ranges: the API)
    DOC_TYPES,
    Doc,
    Hit,
    build_analyzer,
    build_schema,
    mark_ranges,
    to_tantivy,
)
from looma_git.index.message_docs import JsonDoc
from looma_git.index.meta import file_lock

if TYPE_CHECKING:
    import tantivy

TITLE_BOOST = 3.0
BODY_BOOST = 1.0
SNIPPET_CHARS = 160

# Tantivy needs >= 15 MB heap per writer thread; the heap bounds what a writer buffers before
# it flushes a segment, so it bounds a bulk load's memory whatever the number of docs. At
# 5,000 sessions (258k message docs in one commit) 25 MB peaked 47 MB above the start, 50 MB
# 66 MB, for the same CPU within noise; the docs are the same either way.
_WRITER_HEAP = 25_000_000
# Tantivy's own lock can still be busy briefly after our flock is granted (a writer from a
# process that does not use our lock, or one still dropping): retry this long.
_LOCKBUSY_RETRY_SECONDS = 5.0
# Files Tantivy creates in an index directory; only these are removed on rebuild, so a
# wrong path handed to us can never cost the caller unrelated files.
_TANTIVY_FILE = re.compile(r"^(meta\.json|\.managed\.json|\.tantivy-.*\.lock|[0-9a-f]{32}(\.\d+)?\.\w+)$")


# Stemmed English function words: they match nearly every message and only add noise to
# BM25 and snippets. A query made only of them is still searched as typed.
QUERY_STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do doe for from had ha have how i if in "
    "into is it it' it s its me my no not of on or our so than that the their them then there "
    "these thi they to us wa we were what whi when where which who whom will with would you "
    "your".split())


def _first(doc: tantivy.Document, field: str) -> Any:
    values = doc.to_dict().get(field) or []
    return values[0] if values else None


class FullTextIndex:
    """A Tantivy index in `dir`. Opening never fails on a bad directory: it rebuilds.

    After construction `rebuilt` is True when an existing index was discarded (schema
    mismatch or corruption) and `created` is True when there was none; in either case
    `needs_populate` tells the caller to re-add every document.
    """

    def __init__(self, dir: Path, *, lock_timeout: float = 10.0, writer_threads: int = 1,
                 reset: bool = False) -> None:
        self.dir = Path(dir)
        self.lock_path = self.dir.parent / f"{self.dir.name}.writer.lock"
        self.lock_timeout = lock_timeout
        self.writer_threads = max(1, writer_threads)
        self.rebuilt = False
        self.created = False
        self.rebuild_reason: str | None = None
        self._schema = build_schema()
        self._analyzer = build_analyzer()
        self._index = self._open(reset)

    @property
    def needs_populate(self) -> bool:
        """True when the index is empty because it was just created or rebuilt."""
        return self.rebuilt or self.created

    # -- opening ------------------------------------------------------------------------

    def _open(self, reset: bool) -> tantivy.Index:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # EACCES, EPERM, or EROFS on a read-only file system
            if isinstance(exc, FileExistsError):
                raise
            raise ReadOnlyError(f"cannot create index directory {self.dir}: {exc.strerror}") from exc
        existed = (self.dir / "meta.json").exists()
        if reset:  # `looma reindex`: start from nothing whatever is there
            with file_lock(self.lock_path, self.lock_timeout):
                return self._rebuild("reset requested", reuse_if_valid=False)
        try:
            index = self._open_checked()
        except ValueError as exc:
            # Schema mismatch and corrupt/missing files both surface as ValueError; either
            # way the index is a cache, so discard it under the writer lock and start over.
            with file_lock(self.lock_path, self.lock_timeout):
                index = self._rebuild(str(exc))
        else:
            self.created = not existed
        return index

    def _open_checked(self) -> tantivy.Index:
        import tantivy

        index = tantivy.Index(self._schema, path=str(self.dir))
        searcher = index.searcher()  # opens every segment: catches missing/truncated files
        top = searcher.search(tantivy.Query.all_query(), 1).hits
        if top:  # reads one block of the doc store: catches a damaged store header
            searcher.doc(top[0][1])
        return index

    def _rebuild(self, reason: str, *, reuse_if_valid: bool = True) -> tantivy.Index:
        import tantivy

        if reuse_if_valid:
            try:  # another process may have rebuilt it while we waited for the lock
                index = self._open_checked()
            except ValueError:
                pass
            else:
                self.rebuilt, self.rebuild_reason = True, reason
                return index
        for entry in self.dir.iterdir():
            if entry.is_file() and _TANTIVY_FILE.match(entry.name):
                entry.unlink()
        try:
            index = tantivy.Index(self._schema, path=str(self.dir))
        except ValueError as exc:
            raise InvalidDataError(
                f"cannot rebuild the full-text index in {self.dir}: {exc}",
                hint="remove the directory; it is a cache that `looma reindex` recreates",
            ) from exc
        self.rebuilt, self.rebuild_reason = True, reason
        return index

    # -- writing ------------------------------------------------------------------------

    @contextmanager
    def _writer(self) -> Iterator[tantivy.IndexWriter]:
        """A Tantivy writer held under the looma flock; commits on success, rolls back on error."""
        with file_lock(self.lock_path, self.lock_timeout):
            deadline = time.monotonic() + _LOCKBUSY_RETRY_SECONDS
            while True:
                try:
                    writer = self._index.writer(heap_size=_WRITER_HEAP, num_threads=self.writer_threads)
                    break
                except ValueError as exc:
                    if "LockBusy" not in str(exc) or time.monotonic() >= deadline:
                        if "LockBusy" in str(exc):
                            raise LockError(f"the full-text index in {self.dir} is locked by another writer") from exc
                        raise
                    time.sleep(0.05)
            try:
                yield writer
            except BaseException:
                writer.rollback()
                # wait_merging_threads consumes the writer, releasing Tantivy's lock now
                # rather than whenever a traceback holding this frame is collected.
                writer.wait_merging_threads()
                raise
            writer.commit()
            writer.wait_merging_threads()
        self._index.reload()

    def add_many(self, docs: Iterable[Doc], *, replace: bool = True) -> int:
        """Index `docs` in one writer commit and return how many were added.

        With `replace` (the default) an existing document with the same id is replaced;
        pass False only when the index is known not to hold these ids (a fresh build).
        """
        return self.apply((), docs, replace=replace)

    def apply(self, delete_ids: Iterable[str], docs: Iterable[Doc | JsonDoc], *,
              replace: bool | Iterable[str] = True) -> int:
        """Delete `delete_ids`, then add `docs` (`Doc`s, or `JsonDoc`s already in Tantivy's
        JSON), in ONE writer commit; returns docs added.

        `docs` is consumed lazily (a generator keeps memory bounded however many there are).
        `replace`: True deletes any document with each added id first, False deletes none
        (a fresh build), an iterable of ids deletes only those (ids known to be updates).
        """
        count = 0
        only: frozenset[str] | None = None
        if not isinstance(replace, bool):
            only = frozenset(replace)
        with self._writer() as writer:
            for doc_id in delete_ids:
                writer.delete_documents_by_term("doc_id", doc_id)
            for doc in docs:
                if replace is True or (only is not None and doc.doc_id in only):
                    writer.delete_documents_by_term("doc_id", doc.doc_id)
                if isinstance(doc, JsonDoc):  # a stored message: its fields as JSON already
                    writer.add_json(doc.json)
                else:
                    writer.add_document(to_tantivy(doc))
                count += 1
        return count

    def upsert(self, doc: Doc) -> None:
        """Add `doc`, replacing any document with the same id."""
        self.add_many([doc])

    def delete(self, doc_id: str) -> None:
        """Remove the document with this id (no error if absent)."""
        self.delete_many([doc_id])

    def delete_many(self, doc_ids: Iterable[str]) -> None:
        """Remove these ids in one commit."""
        with self._writer() as writer:
            for doc_id in doc_ids:
                writer.delete_documents_by_term("doc_id", doc_id)

    def clear(self) -> None:
        """Remove every document (the directory and schema stay)."""
        with self._writer() as writer:
            writer.delete_all_documents()

    # -- reading ------------------------------------------------------------------------

    def count(self) -> int:
        """Number of live documents in the latest commit."""
        self._index.reload()
        return int(self._index.searcher().num_docs)

    def terms(self, text: str) -> list[str]:
        """`text` analysed exactly as indexed (en_stem), deduplicated in order; function words
        are dropped unless the query is nothing but function words."""
        seen: dict[str, None] = {}
        for term in self._analyzer.analyze(text or ""):
            seen.setdefault(term, None)
        content = [t for t in seen if t not in QUERY_STOPWORDS]
        return content or list(seen)

    def _query(self, terms: Sequence[str], types: Iterable[str] | None, workitem: str | None) -> tantivy.Query:
        from tantivy import Occur, Query

        # Strategy B (LIBRARIES.md §3): no query language, so no user text can be a syntax
        # error; each term may match title (boosted) or body.
        should = []
        for term in terms:
            should.append((Occur.Should, Query.boost_query(Query.term_query(self._schema, "title", term), TITLE_BOOST)))
            should.append((Occur.Should, Query.boost_query(Query.term_query(self._schema, "body", term), BODY_BOOST)))
        text_q = Query.boolean_query(should)
        must = [(Occur.Must, text_q)]
        if types is not None:
            type_list = sorted(set(types))
            if not type_list:
                return Query.empty_query()
            must.append((Occur.Must, Query.boolean_query(
                [(Occur.Should, Query.term_query(self._schema, "doc_type", t)) for t in type_list])))
        if workitem is not None:
            must.append((Occur.Must, Query.term_query(self._schema, "workitem", workitem)))
        return Query.boolean_query(must) if len(must) > 1 else text_q

    def _advanced_query(self, text: str, types: Iterable[str] | None, workitem: str | None) -> tantivy.Query | None:
        """Tantivy's query language (`"a b"~2`, `title:x`, `a AND NOT b`), or None if it does not parse."""
        from tantivy import Occur, Query

        try:
            parsed = self._index.parse_query(text, ["title", "body"], field_boosts={"title": TITLE_BOOST},
                                             conjunction_by_default=False)
        except ValueError:
            return None
        must = [(Occur.Must, parsed)]
        if types is not None:
            must.append((Occur.Must, Query.boolean_query(
                [(Occur.Should, Query.term_query(self._schema, "doc_type", t)) for t in sorted(set(types))])))
        if workitem is not None:
            must.append((Occur.Must, Query.term_query(self._schema, "workitem", workitem)))
        return Query.boolean_query(must) if len(must) > 1 else parsed

    def search(self, text: str, *, types: Iterable[str] | None = None, workitem: str | None = None,
               limit: int = 20, offset: int = 0, advanced: bool = False) -> list[Hit]:
        """BM25 search of title (boosted) and body; [] when `text` has no searchable terms.

        By default `text` is never parsed as a query language: `what's`, `k8s: deploy`, `(x`,
        `NOT safe` are all just words. `advanced=True` tries Tantivy's query language first and
        falls back to plain words when it does not parse. `types` restricts doc_type,
        `workitem` restricts to one WorkItem.
        """
        terms = self.terms(text)
        if not terms or limit <= 0:
            return []
        if types is not None and not set(types):
            return []
        query = (self._advanced_query(text, types, workitem) if advanced else None) or \
            self._query(terms, types, workitem)
        try:
            return self._run(query, limit, offset)
        except ValueError as exc:
            # Files damaged after we opened them: the index is a cache, so say how to rebuild.
            raise InvalidDataError(f"the full-text index in {self.dir} is unreadable: {exc}",
                                   hint="run `looma reindex`") from exc

    def _run(self, query: tantivy.Query, limit: int, offset: int) -> list[Hit]:
        import tantivy

        self._index.reload()  # pick up commits made by other processes
        searcher = self._index.searcher()
        result = searcher.search(query, limit, count=False, offset=max(0, offset))
        if not result.hits:
            return []
        body_gen = tantivy.SnippetGenerator.create(searcher, query, self._schema, "body")
        body_gen.set_max_num_chars(SNIPPET_CHARS)
        hits: list[Hit] = []
        for score, address in result.hits:
            doc = searcher.doc(address)
            hits.append(Hit(
                doc_id=str(_first(doc, "doc_id")),
                doc_type=str(_first(doc, "doc_type")),
                workitem=_first(doc, "workitem"),
                session=_first(doc, "session"),
                agent=_first(doc, "agent"),
                title=str(_first(doc, "title") or ""),
                score=float(score),
                snippet=self._snippet(body_gen, doc),
                ts=int(_first(doc, "ts") or 0),
            ))
        return hits

    def _snippet(self, body_gen: tantivy.SnippetGenerator, doc: tantivy.Document) -> str:
        snippet = body_gen.snippet_from_doc(doc)
        ranges = [(h.start, h.end) for h in snippet.highlighted()]
        if ranges:
            return mark_ranges(snippet.fragment(), ranges)
        # The match was in the title only: show the head of the body, unmarked.
        body = str(_first(doc, "body") or "")
        if len(body) <= SNIPPET_CHARS:
            return body
        return body[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
