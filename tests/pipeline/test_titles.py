"""A system title comes from the effort's own words: of its implementing commits, the one that
created the work is the earliest strongly linked one whose subject speaks the words of its
opening request or branch (pipeline/text.creating_first), in the ledger fold as in the pass."""

from __future__ import annotations

import itertools

from looma_git.ledger.fold import fold
from looma_git.ledger.ops import Actor, Op, OpDraft, build_op
from looma_git.pipeline.text import creating_first, own_words, speaks_for

SYSTEM = Actor(kind="system", name="looma", email="looma@localhost")


def _op(draft: OpDraft, lamport: int, clone: str = "c_a") -> Op:
    return build_op(draft, lamport=lamport, ts="2026-04-01T00:00:00Z", actor=SYSTEM,
                    clone=clone)


def _obs(sid: str, first: str, prompt: str, branch: str | None) -> dict:
    return {"agent": "claude-code", "id": sid, "first": first, "last": first,
            "days": [first[:10]], "files": {"billing/csv.py": 2}, "windows": 1,
            "branch": branch, "prompt": prompt, "readonly": False}


def _link(sha: str, wid: str, subject: str, ts: str, files: list[str]) -> OpDraft:
    return OpDraft("commit.link", {"type": "commit", "id": sha},
                   {"workitem": wid, "confidence": 0.9, "by": "hook", "subject": subject,
                    "ts": ts, "files": files, "why": {"content": 0.8, "lines": 9.0}})


def test_own_words_are_the_request_and_the_branch() -> None:
    own = own_words("finance wants the invoices as a CSV download", "feature/stream-export")
    assert {"finance", "invoice", "csv", "download", "stream", "export"} <= own
    assert speaks_for("Stream invoice CSV export", own)
    assert speaks_for("feat(billing): CSV download", own)
    # A step on the way names none of it: a lint pass, tests first, a tooling move.
    assert not speaks_for("Yamllint", own)
    assert not speaks_for("Add failing test cases", own)
    assert not speaks_for("Move mypy from pre-commit to tox", own)
    assert not speaks_for("anything", frozenset())


def test_the_subject_that_speaks_for_the_effort_creates_it_strong_links_first() -> None:
    own = own_words("the invoice CSV export times out", "csv-export")
    subjects = ["Add failing test cases", "Stream the invoice CSV export", "Fix mypy"]
    assert creating_first(subjects, [True, True, True], own) == [1, 0, 2]
    # A weakly linked commit (files and time) never comes before a strong one...
    assert creating_first(subjects, [True, False, True], own) == [0, 2, 1]
    # ... and with nothing to compare with, the earliest strong one creates the work.
    assert creating_first(subjects, [True, True, True], frozenset()) == [0, 1, 2]


def test_the_fold_titles_after_the_commit_that_speaks_for_the_effort_in_any_order() -> None:
    create = _op(OpDraft("workitem.create", {"type": "workitem"}, {
        "title": "Local title", "kind": "feature", "confidence": 0.9,
        "observe": {"sessions": [_obs("s1", "2026-04-01T09:00:00Z",
                                      "the invoice CSV export gives an empty file, should be "
                                      "one row per line item", "csv-export")]}}), 1)
    wid = "wi_" + create.id[:10]
    ops = [create,
           _op(_link("a" * 40, wid, "Add passing test cases", "2026-04-01T10:00:00Z",
                     ["tests/test_csv.py"]), 2, clone="c_b"),
           _op(_link("b" * 40, wid, "Yamllint", "2026-04-01T10:30:00Z",
                     [".github/workflows/lint.yml"]), 3),
           _op(_link("c" * 40, wid, "Write one row per invoice line item",
                     "2026-04-01T11:00:00Z", ["billing/csv.py"]), 4, clone="c_c")]
    states = [fold(list(p)).workitems[wid] for p in itertools.permutations(ops)]
    assert all(s == states[0] for s in states)
    assert states[0].title == "Write one row per invoice line item"
    assert states[0].kind == "bugfix"  # "gives ..., should be ...": a bug report
    # Until a commit that speaks for it is linked, the earliest strong one titles, as before.
    assert fold(ops[:3]).workitems[wid].title == "Add passing test cases"
