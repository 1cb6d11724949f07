"""Clustering rules on a real repository with real Claude Code sessions: a side fix made in the
same session on the same branch, shipped in the same pull request, stays with the work unless
the user says the topic changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipeline.repo_sessions import Project, Turn, at, links

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
