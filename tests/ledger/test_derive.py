"""Shared WorkItem fields derived in the fold from observations (docs/format.md)."""

from __future__ import annotations

import itertools

from looma_git.ledger.fold import fold
from looma_git.ledger.ops import Actor, Op, OpDraft, build_op

SYSTEM = Actor(kind="system", name="looma", email="looma@localhost")
USER = Actor(kind="user", name="Jane", email="jane@example.com")


def _op(draft: OpDraft, lamport: int, actor: Actor = SYSTEM, clone: str = "c_a") -> Op:
    return build_op(draft, lamport=lamport, ts="2026-04-01T00:00:00Z", actor=actor, clone=clone)


def _obs(sid: str, first: str, files: dict[str, int], prompt: str = "",
         agent: str = "claude-code") -> dict:
    return {"agent": agent, "id": sid, "first": first, "last": first, "days": [first[:10]],
            "files": files, "windows": 1, "branch": None, "prompt": prompt, "readonly": False}


def _create(title: str, obs: list[dict]) -> OpDraft:
    return OpDraft("workitem.create", {"type": "workitem"},
                   {"title": title, "kind": "feature", "confidence": 0.9,
                    "observe": {"sessions": obs}})


def _update(wid: str, obs: list[dict]) -> OpDraft:
    return OpDraft("workitem.update", {"type": "workitem", "id": wid},
                   {"observe": {"sessions": obs}})


def _link(sha: str, wid: str, subject: str, ts: str) -> OpDraft:
    return OpDraft("commit.link", {"type": "commit", "id": sha},
                   {"workitem": wid, "confidence": 0.8, "by": "hook", "subject": subject,
                    "ts": ts, "files": ["billing/csv.py"]})


def test_clones_observations_fold_to_the_same_item_in_any_order() -> None:
    create = _op(_create("Local title of clone A", [
        _obs("s1", "2026-04-01T09:00:00Z", {"billing/csv.py": 2},
             "Stream the invoice CSV export")]), 1)
    wid = "wi_" + create.id[:10]
    ops = [create,
           _op(_update(wid, [_obs("s2", "2026-04-02T09:00:00Z", {"billing/csv.py": 1},
                                  "continue the CSV export", agent="codex")]), 2, clone="c_b"),
           _op(_update(wid, [_obs("s1", "2026-04-01T09:00:00Z", {"billing/invoice.py": 1})]),
               3, clone="c_c"),
           _op(_link("a" * 40, wid, "Bump pandas from 2.1 to 2.2", "2026-04-01T10:00:00Z"), 4),
           _op(_link("b" * 40, wid, "Stream invoice CSV export", "2026-04-01T11:00:00Z"), 5),
           _op(_link("c" * 40, wid, "Fix the CSV header", "2026-04-02T11:00:00Z"), 6)]
    states = [fold(perm).workitems[wid] for perm in itertools.permutations(ops)]
    first = states[0]
    assert all(s == first for s in states)
    assert first.title == "Stream invoice CSV export"  # earliest real commit, not the bump
    assert first.kind == "feature"  # a later "Fix ..." commit does not flip it
    assert first.files == ("billing/csv.py", "billing/invoice.py")
    assert {s["id"] for s in first.sessions} == {"s1", "s2"}
    assert first.features["session_breadth"] > 0 and first.features["agent_breadth"] > 0
    assert "Commits: " in first.summary and "Fix the CSV header" in first.summary


def test_a_user_rename_pins_the_title_and_a_forced_confidence_stays() -> None:
    create = _op(_create("x", [_obs("s1", "2026-04-01T09:00:00Z", {"a.py": 1},
                                    "Add OAuth login")]), 1)
    wid = "wi_" + create.id[:10]
    rename = _op(OpDraft("workitem.rename", {"type": "workitem", "id": wid},
                         {"title": "Google sign-in", "prev": []}), 2, actor=USER)
    later = _op(_link("d" * 40, wid, "Add OAuth client", "2026-04-01T12:00:00Z"), 3)
    wi = fold([create, rename, later]).workitems[wid]
    assert wi.title == "Google sign-in" and wi.pinned_title


def test_work_that_changed_nothing_is_an_investigation() -> None:
    ro = _obs("s9", "2026-04-05T16:00:00Z", {}, "why is GET /orders slow?")
    ro["readonly"] = True
    create = _op(_create("why", [ro, {**ro, "id": "s10"}]), 1)
    wi = fold([create]).workitems["wi_" + create.id[:10]]
    assert wi.kind == "investigation" and wi.confidence <= 0.35


def test_the_commit_the_sessions_wrote_titles_over_an_earlier_file_overlap_link() -> None:
    create = _op(_create("x", [_obs("s1", "2026-04-01T09:00:00Z", {"billing/csv.py": 2},
                                    "finance wants the invoices as a CSV download")]), 1)
    wid = "wi_" + create.id[:10]
    weak = _op(_link("a" * 40, wid, "Speed up the admin report query",
                     "2026-04-01T10:00:00Z"), 2)
    strong = _link("b" * 40, wid, "Stream invoice CSV export", "2026-04-01T11:00:00Z")
    strong.payload["why"] = {"content": 0.9, "lines": 12.0, "files": 1.0}
    wi = fold([create, weak, _op(strong, 3)]).workitems[wid]
    assert wi.title == "Stream invoice CSV export"
    # Without any strongly linked commit the earliest real one still titles (as before).
    assert fold([create, weak]).workitems[wid].title == "Speed up the admin report query"


def test_a_purpose_clause_does_not_make_a_refactor_a_bugfix() -> None:
    create = _op(_create("x", [_obs("s1", "2026-04-01T09:00:00Z", {"config/settings.py": 2},
                                    "Refactor config: migrate settings to pydantic so bad env "
                                    "values fail at startup.")]), 1)
    wid = "wi_" + create.id[:10]
    link = _op(_link("e" * 40, wid, "Migrate settings to pydantic BaseSettings",
                     "2026-04-01T10:00:00Z"), 2)
    wi = fold([create, link]).workitems[wid]
    assert wi.kind == "refactor"
    fix = _op(_link("f" * 40, wid, "Fix a crash when WEBSHOP_DEBUG is empty",
                    "2026-04-01T12:00:00Z"), 3)
    assert fold([create, link, fix]).workitems[wid].kind == "refactor"  # one commit, no flip
