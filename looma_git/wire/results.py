"""Wire models of init/refine/reindex and the hooks, share/sync, relink and ingest results."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class InitOut(BaseModel):
    """`looma init --json`."""

    state_dir: str
    clone_id: str
    created: bool  # False: it was already initialized
    config_changed: list[str]
    ledger_created: bool


class RefineOut(BaseModel):
    """`looma reprocess --json` / `looma backfill --json` (one refinery pass)."""

    sessions: int
    windows: int
    workitems: int
    promoted: int
    candidates: int
    memories: int
    links: int
    ops_written: int
    ops: dict[str, int] = Field(default_factory=dict)
    llm: dict[str, int] = Field(default_factory=dict)


class ReindexOut(BaseModel):
    """`looma reindex --json`."""

    workitems: int
    memories: int
    messages: int
    vectors: int
    vectors_pending: int
    embedder: str | None
    embedder_reason: str | None
    ledger_commit: str | None
    merged_remotes: list[str]
    rebuilt: bool
    duration_s: float


class AgentIngestOut(BaseModel):
    sources: int
    unchanged: int
    sessions: int
    events_added: int
    events_updated: int
    skipped: dict[str, int]
    noise: dict[str, int]


class IngestOut(BaseModel):
    """`looma ingest --json`: what was read, and the refinery pass that followed (or None)."""

    agents: dict[str, AgentIngestOut]
    sources_scanned: int
    sources_unchanged: int
    events_added: int
    events_updated: int
    unattributed_events: int
    sessions: dict[str, int]  # agent -> sessions that received new events
    skipped: dict[str, int]
    skip_samples: dict[str, list[str]]  # reason -> a few locations
    noise: dict[str, int]
    redactions: dict[str, int]
    notes: list[str]
    duration_s: float  # reading the transcripts
    elapsed_s: float  # the whole command, work model included
    refine: RefineOut | None


class HookChangeOut(BaseModel):
    name: str
    path: str
    action: str
    detail: str = ""


class InstallResult(BaseModel):
    hooks_dir: str
    changes: list[HookChangeOut]


class HookOut(BaseModel):
    name: str
    path: str
    state: str  # installed | outdated | foreign | absent
    chained: bool
    python: str | None = None
    python_exists: bool | None = None
    manager: str | None = None  # pre-commit | lefthook | husky, when one owns the hook file
    shim_path: str | None = None  # where looma's shim is (the hook path or the manager's slot)


class DrainStepOut(BaseModel):
    """One step of a drain pass (ingest, rewrites, link): how it ended and in how long."""

    name: str
    status: str  # ok | skipped | failed
    ms: float
    detail: str = ""


class LastDrainOut(BaseModel):
    """The last drain, as hooks-state.json records it."""

    at: str
    duration_ms: float
    passes: int = 0
    commits: int = 0
    rewrites: int = 0
    requeued: int = 0
    dropped: int = 0
    steps: list[DrainStepOut] = Field(default_factory=list)


class DrainErrorOut(BaseModel):
    """The last failed drain step, as hooks-state.json records it."""

    at: str
    step: str
    message: str


class HooksStatus(BaseModel):
    """`looma hooks status --json`."""

    hooks_dir: str
    hooks: list[HookOut]
    queue_length: int
    rewrites_length: int
    drainer_running: bool
    last_drain: LastDrainOut | None = None
    last_error: DrainErrorOut | None = None  # from hooks-state.json (a failed drain step)
    log_error: str | None = None  # the last error line in hooks.log (shim, drainer, traceback)
    latency: dict[str, dict[str, float]] = {}
    notes_rewrite_ref: str | None = None
    problems: list[str] = []


class DrainResult(BaseModel):
    ran: bool
    passes: int
    commits: int
    rewrites: int
    requeued: int
    dropped: int
    duration_ms: float
    steps: list[DrainStepOut]


class PrepushOut(BaseModel):
    """What the pre-push step did: pushed | skipped | failed."""

    status: str
    remotes: list[str] = []
    message: str = ""


class ShareChangeOut(BaseModel):
    """What `share enable`/`disable` changed in the repository config."""

    remote: str
    url: str | None
    added: list[str] = []
    removed: list[str] = []


class SharedRemoteOut(BaseModel):
    """A remote that `share enable` set up to carry looma's refs."""

    remote: str
    url: str | None


class ShareStatusOut(BaseModel):
    """Remotes that carry looma's refs, and curation redirections (remote -> curation)."""

    enabled: list[SharedRemoteOut]
    curation: dict[str, str]


class ConflictOpOut(BaseModel):
    id: str
    op: str
    lamport: int
    actor: str
    clone: str
    ts: str
    payload: dict[str, Any]


class ConflictOut(BaseModel):
    """Concurrent user intents on one target; the later one by (lamport, id) won."""

    target: str
    kind: str
    winner: str
    ops: list[ConflictOpOut]


class ConflictsOut(BaseModel):
    conflicts: list[ConflictOut]


class RejectedOut(BaseModel):
    path: str
    op_id: str
    reason: str


class SyncOut(BaseModel):
    """`looma sync --json`: the stable contract."""

    remote: str
    url: str
    ops_in: int
    ops_out: int
    kept_in: int
    conflicts: list[ConflictOut]
    new_conflicts: int
    pushed: bool
    fetched: bool
    retries: int
    rejected: list[RejectedOut]
    remote_dropped: int
    ledger: str | None
    notes: str | None
    warnings: list[str]


class RelinkMatchOut(BaseModel):
    """One orphaned commit and the reachable commit its links moved to."""

    old: str
    new: str
    how: str  # patch-id | squash-subject | squash-lines
    workitems: list[str]


class RelinkMissOut(BaseModel):
    """An orphaned commit nothing replaces: its links are left as they are."""

    sha: str
    workitems: list[str]
    reason: str


class RelinkReport(BaseModel):
    """`looma relink --json`."""

    linked_commits: int = 0
    orphaned: int = 0
    matched: list[RelinkMatchOut] = []
    unmatched: list[RelinkMissOut] = []
    ops_written: int = 0


class AgentSummary(BaseModel):
    """One agent's share of an ingest run."""

    sources: int = 0
    unchanged: int = 0
    sessions: int = 0
    events_added: int = 0
    events_updated: int = 0
    skipped: dict[str, int] = Field(default_factory=dict)
    noise: dict[str, int] = Field(default_factory=dict)


class IngestReport(BaseModel):
    """What `looma ingest` did (also its `--json` output)."""

    events_added: int
    events_updated: int = 0
    sessions: dict[str, int]  # agent -> sessions that received new events
    skipped: dict[str, int]  # reason -> records/sources skipped (all agents)
    noise: dict[str, int]  # reason -> records dropped as noise (all agents)
    notes: list[str] = Field(default_factory=list)
    sources_scanned: int = 0
    sources_unchanged: int = 0
    redactions: dict[str, int] = Field(default_factory=dict)
    unattributed_events: int = 0  # events of sessions that belong to other repositories
    skip_samples: dict[str, list[str]] = Field(default_factory=dict)  # reason -> locations
    agents: dict[str, AgentSummary] = Field(default_factory=dict)
    duration_s: float = 0.0
