"""The linking rules that generalise beyond the tuned benchmarks, each in the shape of a failure
seen on untuned real history, on a real repository with real Claude Code sessions: release and
changelog commits are chores, a teammate's commit sharing only boilerplate lines with a session
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
def test_release_and_changelog_commits_are_never_linked_though_they_touch_the_efforts_files(
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
    # The changelog entry the session wrote, committed on its own; then the release, which
    # dates the changelog and sets the version in __init__.py (both files the effort edited).
    log = p.commit(at(1.5), "Update CHANGES", {"CHANGES.rst": CHANGES + ENTRY})
    release = p.commit(at(3), "release version 3.0.4",
                       {"CHANGES.rst": (CHANGES + ENTRY).replace("Unreleased",
                                                                 "Released 2026-03-02"),
                        "src/pkg/__init__.py": INIT_EXPORT.replace('3.0.4.dev', '3.0.4')})
    start = p.commit(at(3.2), "start version 3.0.5",
                     {"src/pkg/__init__.py": INIT_EXPORT.replace('3.0.4.dev', '3.0.5.dev')})
    wi = p.run()
    got = links(wi)
    assert got.get(work) == of_session(wi, "s-page"), got
    for sha in (log, release, start):
        assert sha not in got, (sha, got)
    [item] = [w for w in wi if w["id"] == got[work]]
    assert item["title"].startswith("Fix per_page"), item["title"]
