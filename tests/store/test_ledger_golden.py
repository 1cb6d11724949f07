"""A fixed op workload gives fixed ledger and notes tree ids (regenerate: LOOMA_UPDATE_GOLDEN=1).

The golden ids were produced by the first ledger writer (dulwich Trees, asdict projections)
and matched by the optimised one, so any change in bytes written shows up here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from looma_git.api import ledger as api
from looma_git.ledger.ops import OpDraft
from looma_git.store import ledger_ref
from tests.golden import check_text
from tests.helpers import git, make_repo
from tests.store.ledger_helpers import init

GOLDEN = Path(__file__).parent / "golden" / "ledger_trees.txt"


def test_fixed_workload_gives_golden_tree_ids(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_ref, "utc_now", lambda: "2026-11-29T12:00:00Z")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1700000000 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1700000000 +0000")
    repo = make_repo(tmp_path / "r")
    head = git(repo, "rev-parse", "HEAD")
    paths = init(repo)
    (paths.state_dir / "clone-id").write_text("c_" + "7" * 16 + "\n")
    wids: list[str] = []
    undo_target = ""
    for b in range(12):
        creates = 12 if not wids else 3
        drafts = [OpDraft("workitem.create", {"type": "workitem"},
                          {"title": f"W {b}-{i}: yes", "files": [f"f{i}.py"],
                           "confidence": 0.5 + i / 100}) if i < creates else
                  OpDraft("workitem.update", {"type": "workitem", "id": wids[(b * 7 + i) % len(wids)]},
                          {"summary": f"s {b}-{i}", "evidence": [{"agent": "claude",
                                                                    "session": f"s{b}"}]})
                  for i in range(12)]
        if b % 3 == 1:
            drafts.append(OpDraft("memory.promote", {"type": "memory"},
                                  {"kind": "decision", "text": f"decide {b}", "workitem": wids[0]}))
        if b % 4 == 3:
            drafts.append(OpDraft("commit.link", {"type": "commit", "id": head},
                                  {"workitem": wids[b], "confidence": 0.7}))
        ops = api.append(paths, drafts, actor="system")
        wids += ["wi_" + o.id[:10] for o in ops if o.op == "workitem.create"]
        if b % 4 == 2:
            user = api.append(paths, [
                OpDraft("workitem.rename", {"type": "workitem", "id": wids[b]}, {"title": f"u {b}"}),
                OpDraft("workitem.merge", {"type": "workitem", "id": wids[b]},
                        {"from": [wids[b + 1]]})], actor="user")
            undo_target = user[0].id
        if b == 9:
            api.append(paths, [OpDraft("undo", {"type": "op", "id": undo_target},
                                       inverse_of=undo_target)], actor="user")
    got = git(repo, "log", "--format=%T", "refs/looma/ledger") + "\nnotes " + \
        git(repo, "rev-parse", "refs/notes/looma^{tree}") + "\n"
    git(repo, "fsck", "--strict", "--no-dangling")
    check_text(GOLDEN, got, "the bytes looma writes changed (if intended, e.g. a new "
               "projection field)")
