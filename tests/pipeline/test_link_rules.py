"""The linking rules that generalise beyond the tuned benchmarks, each in the shape of a failure
seen on untuned real history, on a real repository with real Claude Code sessions: release and
changelog commits no session wrote are chores, a teammate's commit sharing only boilerplate lines with a session
is not its work, a commit that removes what a session removed is that session's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipeline.repo_sessions import Project, Turn, at, links, of_session

PAGINATION = '''class Pagination:
    def __init__(self, page, per_page, total):
        self.page = page
        self.per_page = per_page
        self.total = total

    def next(self, error_out=False):
        return self._query_items(page=self.page + 1, per_page=self.per_page)
'''
NEXT_FIXED = '''    def next(self, error_out=False):
        max_per_page = self._query_args.get("max_per_page")
        return self._query_items(page=self.page + 1, per_page=self.per_page,
                                 max_per_page=max_per_page, error_out=error_out)
'''
CHANGES = "Version 3.0.4\n-------------\n\nUnreleased\n\n"
ENTRY = "-   ``Pagination.next()`` keeps ``max_per_page`` of the first page. :issue:`1220`\n"
INIT = '__version__ = "3.0.4.dev"\n\nfrom .pagination import Pagination\n'
INIT_EXPORT = ('__version__ = "3.0.4.dev"\n\nfrom .pagination import Pagination\n'
               'from .pagination import QueryPagination\n\n__all__ = ["Pagination", '
               '"QueryPagination"]\n')


@pytest.mark.slow
def test_release_commits_are_never_linked_though_they_touch_the_efforts_files(
        tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.commit(at(-48), "Initial import", {"src/pkg/__init__.py": INIT,
                                         "src/pkg/pagination.py": PAGINATION,
                                         "CHANGES.rst": CHANGES})
    fixed = PAGINATION.replace(PAGINATION[PAGINATION.index("    def next"):], NEXT_FIXED)
    p.session("s-page", at(0), [
        Turn("per_page gets the wrong value after calling next() on a pagination: it forgets "
             "max_per_page. fix it and export QueryPagination too",
             [("Edit", "src/pkg/pagination.py", PAGINATION[PAGINATION.index("    def next"):],
               NEXT_FIXED),
              ("Edit", "src/pkg/__init__.py", INIT, INIT_EXPORT),
              ("Edit", "CHANGES.rst", "Unreleased\n\n", "Unreleased\n\n" + ENTRY)])])
    work = p.commit(at(1), "Fix per_page after calling next() on a pagination",
                    {"src/pkg/pagination.py": fixed, "src/pkg/__init__.py": INIT_EXPORT})
    # The changelog entry the session wrote, committed on its own (the effort's: its lines are
    # the session's); then the release, which dates the changelog and sets the version in
    # __init__.py (both files the effort edited): never the effort's.
    log = p.commit(at(1.5), "Update CHANGES", {"CHANGES.rst": CHANGES + ENTRY})
    release = p.commit(at(3), "release version 3.0.4",
                       {"CHANGES.rst": (CHANGES + ENTRY).replace("Unreleased",
                                                                 "Released 2026-03-02"),
                        "src/pkg/__init__.py": INIT_EXPORT.replace('3.0.4.dev', '3.0.4')})
    start = p.commit(at(3.2), "start version 3.0.5",
                     {"src/pkg/__init__.py": INIT_EXPORT.replace('3.0.4.dev', '3.0.5.dev')})
    # A changelog commit whose lines no session wrote, off any branch: a chore, not linked on
    # the files it shares with the effort.
    other = p.commit(at(3.4), "Update CHANGES",
                     {"CHANGES.rst": (CHANGES + ENTRY).replace("Unreleased",
                                                               "Released 2026-03-02")
                      + "\nVersion 3.0.5\n-------------\n\nUnreleased\n"})
    wi = p.run()
    got = links(wi)
    assert got.get(work) == of_session(wi, "s-page"), got
    assert got.get(log) == got[work], got
    for sha in (release, start, other):
        assert sha not in got, (sha, got)
    [item] = [w for w in wi if w["id"] == got[work]]
    assert item["title"].startswith("Fix per_page"), item["title"]


BIND = '''import sqlalchemy as sa
from flask import current_app


def _clause_to_engine(clause, engines):
    table = None
    if clause is not None:
        if isinstance(clause, sa.Table):
            table = clause
    if table is not None and "bind_key" in table.metadata.info:
        return engines[table.metadata.info["bind_key"]]
    return None


@property
def engines(self):
    return current_app.extensions["sqlalchemy"].engines
'''
# A teammate's function in the same module: its imports, decorator and `return None` are the
# session's too, and nothing else is.
TEAMMATE = '''import sqlalchemy as sa
from flask import current_app


@property
def metadata_tables(self):
    found = current_app.config.get("SQLALCHEMY_RECORD_QUERIES")
    if found is None:
        return None
    return [t.name for t in self.metadata.sorted_tables if t.name not in found]
'''
PAIRED = '''def get_or_404(session, entity, ident, description=None):
    value = session.get(entity, ident)
    if value is None:
        abort(404, description=description)
    return value
'''


@pytest.mark.slow
def test_a_teammates_commit_sharing_only_boilerplate_with_a_session_is_not_its_work(
        tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.commit(at(-48), "Initial import", {"src/pkg/session.py": "# end\n",
                                         "src/pkg/query.py": "# end\n",
                                         "src/pkg/models.py": "# end\n",
                                         "src/pkg/cli.py": "# end\n"})
    p.session("s-bind", at(0), [
        Turn("get_bind ignores the bind key of the table for polymorphic models, find the "
             "engine from the clause's table metadata",
             [("Edit", "src/pkg/session.py", "# end\n", BIND)])])
    p.session("s-404", at(0.5), [
        Turn("add a get_or_404 helper that aborts with a description when the row is missing",
             [("Edit", "src/pkg/query.py", "# end\n", PAIRED)])])
    # The repository's other modules import the same things (the history says how common
    # those lines are); Priya, who has no session here, adds her function to the module the
    # session is editing, before Ada commits the session's work.
    p.commit(at(0.2), "Record queries in the models", {
        "src/pkg/models.py": "import sqlalchemy as sa\nfrom flask import current_app\n\n"
                             "RECORD = current_app.config.get('SQLALCHEMY_ECHO')\n"})
    p.commit(at(0.3), "A cli to create tables", {
        "src/pkg/cli.py": "import sqlalchemy as sa\nfrom flask import current_app\n\n"
                          "def create_all():\n    current_app.extensions['db'].create_all()\n"})
    theirs = p.commit(at(0.4), "List the tables not recorded",
                      {"src/pkg/session.py": TEAMMATE}, author="Priya")
    mine = p.commit(at(1), "Find the bind key from the clause's table",
                    {"src/pkg/session.py": BIND + "\n\n" + TEAMMATE.split("\n\n\n", 1)[1]})
    # Omar (no session either) commits what the 404 session wrote, pairing: its lines are
    # plainly the session's.
    paired = p.commit(at(5), "get_or_404 with a description", {"src/pkg/query.py": PAIRED},
                      author="Omar")
    wi = p.run()
    got = links(wi)
    assert got.get(mine) == of_session(wi, "s-bind"), got
    assert theirs not in got, got
    assert got.get(paired) == of_session(wi, "s-404"), got


SESSION_PY = '''import sqlalchemy as sa


def get_engine(app, bind=None):
    return app.extensions["sqlalchemy"].engines[bind]
'''
PY37 = '''

if sys.version_info < (3, 8):
    from importlib_metadata import version as _metadata_version
    warnings.warn("Python 3.7 support is deprecated", DeprecationWarning, stacklevel=2)
'''


@pytest.mark.slow
def test_a_commit_that_only_removes_what_a_session_removed_is_its_work(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.commit(at(-48), "Initial import", {
        "src/pkg/session.py": SESSION_PY + PY37,
        "src/pkg/_compat37.py": "def cached_property_37(func):\n    return property(func)\n",
        "src/pkg/models.py": "class Model:\n    query_class = None\n"})
    p.session("s-drop", at(0), [
        Turn("drop python 3.7: remove the version check in session.py and the _compat37 "
             "module, nothing uses them any more",
             [("Edit", "src/pkg/session.py", PY37, "\n"),
              ("Bash", "git rm src/pkg/_compat37.py"),
              ("Bash", "pytest -q")])])
    p.session("s-model", at(1), [
        Turn("the query class of a model should default to the Query of the extension",
             [("Edit", "src/pkg/models.py", "    query_class = None\n",
               "    query_class = Query\n")])])
    # Committed two days later, off any branch: only what it removes says whose work it is.
    drop = p.commit(at(50), "Drop Python 3.7", {"src/pkg/session.py": SESSION_PY + "\n",
                                                "src/pkg/_compat37.py": None})
    wi = p.run()
    got = links(wi)
    assert got.get(drop) == of_session(wi, "s-drop"), got
