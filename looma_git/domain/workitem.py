"""WorkItem, Memory and CommitLink: the units of work, what was said about them and their commits."""

from __future__ import annotations

from dataclasses import dataclass

from looma_git.domain.evidence import Evidence
from looma_git.domain.session import SessionRef


@dataclass(frozen=True)
class CommitLink:
    """A commit that implements a WorkItem, with how sure looma is and why.

    `by` says what linked it (vocab.LINK_BY); `by_user` that a person did, so no system op
    can replace or remove it; `why` the evidence it rests on (e.g. `content`: the share of
    its added lines the WorkItem's sessions wrote). `subject`/`ts` are the commit's, `title`
    the WorkItem's."""

    sha: str
    workitem: str
    confidence: float
    by: str
    files: tuple[str, ...] = ()
    branch: str | None = None
    patch_id: str | None = None
    why: tuple[tuple[str, float], ...] = ()
    by_user: bool = False
    subject: str = ""
    ts: str = ""
    title: str = ""


@dataclass(frozen=True)
class Memory:
    """A decision, todo, bug or architecture note (vocab.MEMORY_KINDS) with its provenance.

    `decision` is what a person decided (vocab.DECISIONS), `said_at` when the transcript
    said it; `promoted` that it is in the ledger (False: a local, unshared proposal)."""

    id: str
    kind: str
    text: str
    workitem: str | None
    confidence: float
    band: str
    lifecycle: str = "active"
    superseded_by: str | None = None
    evidence: tuple[Evidence, ...] = ()
    said_at: str = ""
    features: tuple[tuple[str, float], ...] = ()
    decision: str | None = None
    false_positive: bool = False
    promoted: bool = True

    @property
    def live(self) -> bool:
        """Shown anywhere: not marked a false positive and not rejected by a person."""
        return not self.false_positive and self.decision != "reject"


@dataclass(frozen=True)
class WorkItem:
    """One unit of work (a feature, fix, refactor, ...): what it is, where it happened, how
    sure looma is, and what people decided about it.

    `promoted`: it is in the ledger (False: a local proposal of this clone not yet shared).
    `decision`: a person's promote or reject (vocab.DECISIONS); `pinned_title`: a person chose
    the title. `merged_into`/`split_from`/`split_into`: lineage from corrections. `commits` and
    `memories` are its live links and notes; `ops` the ledger ops that shaped it (blame)."""

    id: str
    title: str
    kind: str
    status: str
    summary: str = ""
    files: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    branch: str | None = None
    confidence: float = 0.0
    band: str = "low"
    features: tuple[tuple[str, float], ...] = ()
    sessions: tuple[SessionRef, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    commits: tuple[CommitLink, ...] = ()
    memories: tuple[Memory, ...] = ()
    last_active: str = ""  # when the work itself last moved (a session or a commit)
    updated: str = ""  # when the ledger last changed it
    decision: str | None = None
    pinned_title: bool = False
    false_positive: bool = False
    merged_into: str | None = None
    split_from: str | None = None
    split_into: tuple[str, ...] = ()
    promoted: bool = True
    ops: tuple[str, ...] = ()

    @property
    def live(self) -> bool:
        """Not a false positive and not merged away (as in the ledger: a WorkItem split up is
        live, `abandoned`, with `split_into`; listings leave it out)."""
        return not self.false_positive and self.merged_into is None

    @property
    def session_keys(self) -> frozenset[str]:
        """`agent:id` of each session, as resolution and observations key sessions."""
        return frozenset(s.key for s in self.sessions)
