"""The rules of cross-clone convergence on folded ledgers: who is compared, what a system
merge does, and what a person's undo or split of one means (pipeline/converge.py)."""

from __future__ import annotations

from typing import Any

from looma_git.ledger import corrections
from looma_git.ledger.fold import fold
from looma_git.ledger.ops import Op, OpDraft
from looma_git.ledger.ops.envelope import Actor, build_op
from looma_git.ledger.state import LedgerState
from looma_git.pipeline.converge import plan_merges

SYSTEM = Actor("system", "looma", "looma@localhost")
USER = Actor("user", "Ann", "ann@example.com")


class Ledger:
    """Ops written by named clones, in lamport order, folded on demand."""

    def __init__(self) -> None:
        self.ops: list[Op] = []

    def write(self, draft: OpDraft, clone: str, actor: Actor = SYSTEM) -> Op:
        op = build_op(draft, lamport=len(self.ops) + 1, ts=f"2026-04-0{1 + len(self.ops) % 9}"
                      "T10:00:00Z", actor=actor, clone=clone)
        self.ops.append(op)
        return op

    def create(self, clone: str, title: str, files: list[str], sid: str, prompt: str,
               branch: str | None = None, actor: Actor = SYSTEM) -> str:
        obs = {"agent": "claude-code", "id": sid, "first": "2026-04-01T09:00:00Z",
               "last": "2026-04-01T10:00:00Z", "days": ["2026-04-01"],
               "files": {f: 1 for f in files}, "windows": 1, "branch": branch,
               "prompt": prompt}
        op = self.write(OpDraft("workitem.create", {"type": "workitem"}, {
            "title": title, "files": files, "branch": branch, "aliases": [],
            "evidence": [{"quote": prompt, "agent": "claude-code", "session": sid}],
            "observe": {"sessions": [obs]}}), clone, actor)
        wid = op.created_id()
        assert wid
        return wid

    def state(self) -> LedgerState:
        return fold(self.ops)

    def merge(self, drafts: list[dict[str, Any]], clone: str) -> list[Op]:
        return [self.write(OpDraft(**d), clone) for d in drafts]


def _csv_on_two_clones(ledger: Ledger) -> tuple[str, str]:
    a = ledger.create("c_a", "Stream the invoice CSV export", ["billing/csv.py",
                                                               "billing/invoice.py"],
                      "s-a1", "Stream the invoice CSV export row by row")
    b = ledger.create("c_b", "Write the CSV header row first", ["billing/csv.py"], "s-b1",
                      "continue the CSV export: stream the header row")
    return a, b


def test_one_effort_from_two_clones_merges_into_the_older_and_then_nothing() -> None:
    ledger = Ledger()
    a, b = _csv_on_two_clones(ledger)
    drafts = plan_merges(ledger.state())
    assert [(d["target"]["id"], d["payload"]["from"]) for d in drafts] == [(a, [b])]
    ledger.merge(drafts, "c_b")
    state = ledger.state()
    assert state.workitems[b].merged_into == a
    assert {s["id"] for s in state.workitems[a].sessions} == {"s-a1", "s-b1"}
    assert plan_merges(state) == []  # converged: nothing more to say


def test_a_system_merge_joins_evidence_without_confirming_it() -> None:
    ledger = Ledger()
    a, b = _csv_on_two_clones(ledger)
    ledger.merge(plan_merges(ledger.state()), "c_a")
    wi = ledger.state().workitems[a]
    assert wi.forced is None and wi.confidence < 1.0
    # A person's merge confirms the WorkItem (FORCE_PROMOTE, confidence pinned).
    user = Ledger()
    a, b = _csv_on_two_clones(user)
    user.write(OpDraft("workitem.merge", {"type": "workitem", "id": a}, {"from": [b]}),
               "c_a", USER)
    wi = user.state().workitems[a]
    assert wi.forced == "promote" and wi.confidence == 1.0


def test_the_same_clone_s_workitems_are_never_compared() -> None:
    """What one clone's resolver kept apart stays apart, however alike."""
    ledger = Ledger()
    ledger.create("c_a", "Stream the invoice CSV export", ["billing/csv.py"], "s-a1",
                  "Stream the invoice CSV export row by row")
    ledger.create("c_a", "Write the CSV header row first", ["billing/csv.py"], "s-a2",
                  "continue the CSV export: stream the header row")
    assert plan_merges(ledger.state()) == []


def test_a_person_s_undo_of_a_system_merge_is_never_redone() -> None:
    ledger = Ledger()
    a, b = _csv_on_two_clones(ledger)
    merge = ledger.merge(plan_merges(ledger.state()), "c_b")[0]
    undo = corrections.undo(merge, ledger.ops, "not the same work").op
    ledger.write(undo, "c_a", USER)
    state = ledger.state()
    assert state.workitems[b].live and state.workitems[a].live
    assert plan_merges(state) == []
    # Undoing the undo restores the merge (and keeps nothing apart).
    redo = corrections.undo(ledger.ops[-1], ledger.ops, None).op
    ledger.write(redo, "c_a", USER)
    assert ledger.state().workitems[b].merged_into == a


def test_workitems_a_person_shaped_are_left_alone() -> None:
    ledger = Ledger()
    a, b = _csv_on_two_clones(ledger)
    ledger.write(OpDraft("workitem.rename", {"type": "workitem", "id": b},
                         {"title": "CSV header"}), "c_b", USER)
    assert plan_merges(ledger.state()) == []
    # A split of a merged WorkItem makes parts a person made: nothing is merged again.
    ledger = Ledger()
    a, b = _csv_on_two_clones(ledger)
    ledger.merge(plan_merges(ledger.state()), "c_b")
    ledger.write(OpDraft("workitem.split", {"type": "workitem", "id": a}, {
        "by": "sessions", "parts": [
            {"title": "CSV rows", "sessions": [{"agent": "claude-code", "id": "s-a1"}]},
            {"title": "CSV header", "sessions": [{"agent": "claude-code", "id": "s-b1"}]}]}),
        "c_a", USER)
    assert plan_merges(ledger.state()) == []


def test_a_near_duplicate_of_another_effort_on_its_own_branch_stays_apart() -> None:
    """(Two efforts sharing a file, through the whole pipeline: test_converge_clones.py.)"""
    ledger = Ledger()
    # The teamwork history's near-duplicate (token links by email, sharing two files), in
    # its own words; the reset work is on its own feature branch.
    ledger.create("c_a", "Password reset: request and confirm endpoints",
                  ["app/auth/reset.py", "app/auth/routes.py", "app/emails/templates.py",
                   "tests/test_reset.py"], "s-a2",
                  "forgot password flow: POST /auth/reset with an email sends a link, POST "
                  "/auth/reset/confirm with the token sets the new password",
                  branch="feat/password-reset")
    ledger.create("c_b", "Send a verification email on signup",
                  ["app/api/deps.py", "app/auth/routes.py", "app/auth/verify.py",
                   "app/emails/templates.py", "tests/test_verify.py"], "s-b2",
                  "we get a lot of fake signups with typo'd addresses. send a confirmation "
                  "email on signup and only mark the account verified when they click the link")
    assert plan_merges(ledger.state()) == []
