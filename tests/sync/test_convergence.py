"""Convergence: random ops on three clones and syncs in random order end in identical state."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from looma_git.api import ledger, sync
from looma_git.gitrepo import RepoPaths
from looma_git.ledger.ops import OpDraft
from tests.helpers import git
from tests.sync.util import make_clone, make_remote, op_ids, snapshot, wt

TITLES = st.sampled_from(["OAuth login", "DB pool", "Parser", "Cache", "CI", "Docs"])
FILES = ["a.py", "b.py", "c.py", "d.py"]


def _random_op(data: st.DataObject, paths: RepoPaths, shas: list[str]) -> tuple[OpDraft, str]:
    state = ledger.load_state(paths)
    live = sorted(w for w, wi in state.workitems.items() if wi.live)
    kinds = ["create"]
    if live:
        kinds += ["rename", "split", "link", "link", "undo"]
    if len(live) >= 2:
        kinds += ["merge", "merge"]
    kind = data.draw(st.sampled_from(kinds), label="kind")
    if kind == "create":
        files = data.draw(st.lists(st.sampled_from(FILES), max_size=3, unique=True))
        actor = data.draw(st.sampled_from(["system", "user"]))
        return OpDraft("workitem.create", {"type": "workitem"},
                       {"title": data.draw(TITLES), "files": files}), actor
    wid = data.draw(st.sampled_from(live), label="workitem")
    if kind == "rename":
        return OpDraft("workitem.rename", {"type": "workitem", "id": wid},
                       {"title": data.draw(TITLES) + " v2"}), "user"
    if kind == "merge":
        other = data.draw(st.sampled_from([w for w in live if w != wid]), label="into")
        return OpDraft("workitem.merge", {"type": "workitem", "id": other}, {"from": [wid]}), \
            "user"
    if kind == "split":
        return OpDraft("workitem.split", {"type": "workitem", "id": wid},
                       {"by": "files", "parts": [{"title": "part A", "files": FILES[:2]},
                                                 {"title": "part B", "files": FILES[2:]}]}), \
            "user"
    if kind == "link":
        sha = data.draw(st.sampled_from(shas), label="commit")
        actor = data.draw(st.sampled_from(["system", "user"]))
        return OpDraft("commit.link", {"type": "commit", "id": sha},
                       {"workitem": wid, "confidence": 0.8, "by": "hook",
                        "files": data.draw(st.lists(st.sampled_from(FILES), max_size=2,
                                                    unique=True))}), actor
    ops = [o for o in ledger.log(paths)]
    target = data.draw(st.sampled_from(ops), label="undo")
    return OpDraft("undo", {"type": "op", "id": target.id}, {}, inverse_of=target.id), "user"


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_three_clones_converge(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        bare = make_remote(tmp, commits=3)
        clones = [make_clone(tmp, bare, f"c{i}") for i in range(3)]
        shas = git(wt(clones[0]), "rev-list", "main").split()
        written: set[str] = set()
        for _ in range(data.draw(st.integers(3, 12), label="steps")):
            i = data.draw(st.integers(0, 2), label="clone")
            if data.draw(st.integers(0, 3), label="sync?") == 0:
                sync.sync(clones[i])
                continue
            draft, actor = _random_op(data, clones[i], shas)
            written |= {o.id for o in ledger.append(clones[i], [draft], actor=actor)}
        for _round in range(2):
            for c in clones:
                sync.sync(c)
        snaps = [snapshot(c) for c in clones]
        assert snaps[0] == snaps[1] == snaps[2]
        for c in clones:
            assert written <= op_ids(c)  # no op lost
            assert op_ids(c) == op_ids(clones[0])
            report = ledger.verify(c)
            assert report.ok, report.problems
        assert git(bare, "rev-parse", "refs/looma/ledger^{tree}") == snaps[0]["ledger_tree"]
