"""Clustering rules on a real repository with real Claude Code sessions: a side fix made in the
same session on the same branch stays with the work unless the user says the topic changed;
work months apart is apart unless its branch says otherwise; a sweeping cluster does not absorb
what touches one of its many files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipeline.repo_sessions import Project, Turn, at, links, of_session

NEXT = "    def next(self):\n        return self.page + 1\n"
NEXT_FIXED = ("    def next(self):\n        max_per_page = self._query_args['max_per_page']\n"
              "        return self._query_items(page=self.page + 1, max_per_page=max_per_page)\n")
SEP = "def test_run_path():\n    assert run('a/b') == 'a/b'\n"
SEP_FIXED = ("def test_run_path():\n    expected = os.path.join('a', 'b')\n"
             "    assert run(os.path.join('a', 'b')) == expected\n")
BADGE = "Docs\n"
BADGE_NEW = "Docs\n\n.. image:: https://img.shields.io/pypi/v/pkg.svg\n   :target: https://pypi.org\n"


@pytest.mark.slow
def test_a_side_fix_on_the_same_branch_stays_with_the_work_unless_the_user_switches(
        tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.commit(at(-48), "Initial import", {"src/pkg/pagination.py": "class P:\n" + NEXT,
                                         "tests/test_cli.py": SEP, "README.rst": BADGE})
    p.branch("fix-pagination-next")
    p.session("s-side", at(0), [
        Turn("Pagination.next() forgets max_per_page from the first query: the second page "
             "comes back with the default page size",
             [("Edit", "src/pkg/pagination.py", NEXT, NEXT_FIXED),
              ("Bash", "pytest tests/test_pagination.py -q")]),
        Turn("the windows job on the pull request is red: test_run_path compares with a "
             "forward slash separator, build expected via os.path.join",
             [("Edit", "tests/test_cli.py", SEP, SEP_FIXED),
              ("Bash", "pytest tests/test_cli.py -q")]),
        Turn("different thing now: add a pypi version badge image to the readme",
             [("Edit", "README.rst", BADGE, BADGE_NEW)]),
    ], branch="fix-pagination-next")
    fix = p.commit(at(0.3), "Keep max_per_page in Pagination.next()",
                   {"src/pkg/pagination.py": "class P:\n" + NEXT_FIXED})
    side = p.commit(at(0.6), "Fix a test that cannot run correctly on windows",
                    {"tests/test_cli.py": SEP_FIXED})
    badge = p.commit(at(0.8), "Add a PyPI badge", {"README.rst": BADGE_NEW})
    p.checkout("main")
    p.merge(at(2), "fix-pagination-next", "Merge pull request #12 from ada/fix-pagination-next")
    wi = p.run()
    holding = [w for w in wi if any(s["id"] == "s-side" for s in w["sessions"])]
    got = links(wi)
    assert got.get(fix) and got.get(fix) == got.get(side), (got, [w["title"] for w in wi])
    # The user said the badge is another topic: it is not the pagination work.
    assert got.get(badge) != got[fix], got
    assert len(holding) == 2, [w["title"] for w in holding]


QUERY = '''def get_or_404(session, entity, ident):
    value = session.get(entity, ident)
    if value is None:
        abort(404)
    return value
'''
TYPED = '''def get_or_404(session, entity: type[T], ident: t.Any) -> T:
    value = session.get(entity, ident)
    if value is None:
        abort(404)
    return value
'''
KWARGS = '''def get_or_404(session, entity: type[T], ident: t.Any, **kwargs: t.Any) -> T:
    value = session.get(entity, ident, **kwargs)
    if value is None:
        abort(404)
    return value
'''
DESCRIBED = '''def get_or_404(session, entity: type[T], ident: t.Any, *, description=None,
               **kwargs: t.Any) -> T:
    value = session.get(entity, ident, **kwargs)
    if value is None:
        abort(404, description=description)
    return value
'''


@pytest.mark.slow
def test_work_months_apart_is_apart_unless_its_branch_carries_it_on(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.commit(at(-48), "Initial import", {"src/pkg/query.py": QUERY,
                                         "tests/test_query.py": "def test_get():\n    pass\n"})
    p.branch("typed-get-or-404")
    p.session("s-typed", at(0), [
        Turn("get_or_404 should be typed: the entity type in, the instance out",
             [("Edit", "src/pkg/query.py", QUERY, TYPED)])], branch="typed-get-or-404")
    p.commit(at(0.5), "Type get_or_404", {"src/pkg/query.py": TYPED})
    p.checkout("main")
    p.merge(at(1), "typed-get-or-404", "Merge pull request #3 from ada/typed-get-or-404")
    # Four months later on the trunk, in the same function, in much the same words: other work.
    p.session("s-kwargs", at(24 * 120), [
        Turn("get_or_404 should pass extra keyword arguments through to session.get",
             [("Edit", "src/pkg/query.py", TYPED, KWARGS)])])
    kwargs = p.commit(at(24 * 120 + 0.5), "get_or_404 passes kwargs to session.get",
                      {"src/pkg/query.py": KWARGS})
    # Two months after that, a session picks the typed work up again on its branch.
    p.branch("typed-get-or-404")
    p.session("s-typed-again", at(24 * 180), [
        Turn("the get_or_404 typing again: add a description for the 404 and keep the types",
             [("Edit", "src/pkg/query.py", KWARGS, DESCRIBED)])], branch="typed-get-or-404")
    wi = p.run()
    typed = of_session(wi, "s-typed")
    assert of_session(wi, "s-typed-again") == typed, [w["title"] for w in wi]
    assert of_session(wi, "s-kwargs") != typed, [w["title"] for w in wi]
    assert links(wi).get(kwargs) == of_session(wi, "s-kwargs")


@pytest.mark.slow
def test_a_sweeping_cluster_does_not_absorb_a_fix_in_one_of_its_many_files(
        tmp_path: Path) -> None:
    p = Project(tmp_path)
    mods = {f"src/pkg/m{i:02d}.py": f"from pkg.db import db\n\nTABLE_{i} = db.table('t{i}')\n"
            for i in range(30)}
    p.commit(at(-48), "Initial import", mods)
    renamed = {f: t.replace("from pkg.db import db", "from pkg.extension import sa_ext")
               .replace("db.table", "sa_ext.table") for f, t in mods.items()}
    p.session("s-sweep", at(0), [
        Turn("rename the db object to sa_ext everywhere, the old name clashes with flask's",
             [("Edit", f, mods[f], renamed[f]) for f in sorted(mods)])])
    p.commit(at(2), "Rename db to sa_ext", renamed)
    fixed = renamed["src/pkg/m17.py"] + "TABLE_17.info['bind_key'] = 'reports'\n"
    p.session("s-bind", at(5), [
        Turn("reports rows land in the default database: the reports table needs its bind key",
             [("Edit", "src/pkg/m17.py", renamed["src/pkg/m17.py"], fixed)])])
    p.commit(at(5.5), "Bind the reports table to its database", {"src/pkg/m17.py": fixed})
    wi = p.run()
    assert of_session(wi, "s-bind") != of_session(wi, "s-sweep"), [w["title"] for w in wi]
