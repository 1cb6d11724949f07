"""The refinery's input and output types: what a pass reads and what it produces (pure data)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from looma_git.domain import Evidence  # re-exported: the one quote-with-source type
from looma_git.pipeline import confidence as conf
from looma_git.pipeline.clusters import Seed
from looma_git.pipeline.extractor import Extractor
from looma_git.pipeline.heuristics import MemoryCandidate
from looma_git.pipeline.inputs import Session
from looma_git.pipeline.link_content import Content
from looma_git.pipeline.linking import Link, Target
from looma_git.pipeline.signals import WorkSignal
from looma_git.store.gitfacts import CommitInfo

if TYPE_CHECKING:
    from looma_git.pipeline.segment import SessionWindows

QUOTE_MAX = 500


@dataclass(frozen=True)
class StoredWindow:
    """A window from an earlier pass: its signals, candidates and where resolution put it."""

    signal: WorkSignal
    cands: Sequence[MemoryCandidate]  # a tuple, or the store's lazily decoded sequence
    cluster: str
    related: tuple[tuple[str, float], ...] = ()
    events: int = 0
    # What the decision was made from: the clusters it was scored against (None: a seed's
    # sessions routed it, nothing was compared), and whether it founded its cluster.
    scored: tuple[str, ...] | None = None
    founded: bool = False


@dataclass(frozen=True)
class RefineInput:
    """Everything one pass reads.

    Full pass: every session in `sessions`, no `prior`. Incremental pass: only new or grown
    sessions in `sessions` (any iterable: they are read one at a time), every other session's
    windows in `prior`; with `replay` and `prior_seeds` (the seeds `prior` was resolved
    against), a stored decision is kept without scoring while nothing it was made from
    differs (pipeline/replay.py), and `memo` (the last pass's per-cluster results) is reused
    for every cluster whose inputs are the same: the result is exactly the full pass's on the
    same inputs."""

    sessions: Iterable[Session]
    commits: tuple[CommitInfo, ...]
    known_paths: frozenset[str]
    sha_lookup: dict[str, str]
    seeds: tuple[Seed, ...] = ()
    forbidden_links: frozenset[tuple[str, str]] = frozenset()  # user unlinks
    ledger_links: frozenset[tuple[str, str]] = frozenset()  # (sha, wi) live in the ledger
    overrides: tuple[tuple[str, str], ...] = ()  # (wi id, override) from user ops
    extractor: Extractor | None = None  # None: the heuristic extractor
    prior: tuple[StoredWindow, ...] = ()
    replay: bool = False
    dirty_from: float = float("inf")  # earliest start of a window that vanished since `prior`
    local_authors: frozenset[str] = frozenset()  # this clone's git identity (commit authors)
    content: Content | None = None  # what sessions wrote vs what commits add (linking)
    prior_seeds: tuple[Seed, ...] | None = None  # None: `seeds` (the caller says unchanged)
    memo: Any = None  # cluster id -> ClusterMemo of the last pass (None: compute every one)
    # The sessions already segmented (pipeline/segment_pool.py), in `sessions`' order; None:
    # `sessions` is segmented in this process.
    segmented: Iterable[SessionWindows] | None = None
    # The kept resolver state (pipeline/resolve_state.py) with `load(cluster ids, window
    # keys)`, the stored windows of those clusters and those windows (None, None: every
    # stored window): a pass that only appends new sessions reads no other window; any
    # other pass loads `prior` from it.
    state: Any = None
    load: Any = None
    state_code: str = ""  # the code the result's kept state is written by ("": none kept)
    # An appending pass reads content evidence only for the commits it links again:
    # `content_of(shas)` (None: every commit) with `content` None; `new_writes(sessions)`
    # every write of the lines those sessions wrote that a commit adds; `links_memo` the
    # last pass's links (pipeline/resolve_links.py).
    content_of: Any = None
    new_writes: Any = None
    links_memo: Any = None


@dataclass(frozen=True)
class MemoryView:
    """A memory candidate attached (or not) to a WorkItem."""

    id: str
    kind: str
    text: str
    workitem: str | None
    confidence: conf.Confidence
    lifecycle: str
    superseded_by: str | None
    evidence: tuple[Evidence, ...]
    sessions: tuple[str, ...]
    ts: str = ""  # when it was first said


@dataclass(frozen=True)
class WorkItemView:
    """A resolved WorkItem (promoted or still a local candidate)."""

    id: str
    seed_id: str | None
    title: str
    kind: str
    status: str
    summary: str
    files: tuple[str, ...]
    aliases: tuple[str, ...]
    branch: str | None
    confidence: conf.Confidence
    sessions: tuple[tuple[str, str], ...]
    windows: tuple[str, ...]
    commits: tuple[str, ...]
    related: tuple[tuple[str, float], ...]
    readonly: bool
    quarantined: bool
    first_ts: str
    last_ts: str
    evidence: tuple[Evidence, ...]
    terms: tuple[tuple[str, int], ...]
    last_active: str = ""  # latest session activity or implementing commit
    observed: tuple[dict[str, Any], ...] = ()  # per-session observations (ledger/derive.py)
    corroborated: bool = False  # read-only work seen in >= 2 sessions or one long one


@dataclass(frozen=True)
class ClusterMemo:
    """What a pass derived from one cluster, and the inputs it was derived from: the next
    pass reuses it when the cluster's inputs are equal (a cluster's view, memories and link
    target are pure functions of them)."""

    key: tuple[Any, ...]  # the seed (canonical), window keys and related edges
    target: Target | None
    full: tuple[Any, ...]  # + linked commits, which of them link strongly, the override
    view: WorkItemView
    memories: Sequence[MemoryView]  # (a memo's: pipeline/packed.Packed, decoded when read)


@dataclass(frozen=True)
class RefineResult:
    """Everything one pass produced."""

    workitems: tuple[WorkItemView, ...]
    memories: Sequence[MemoryView]  # (a pass's: pipeline/packed.MemoryList)
    links: tuple[Link, ...]
    windows: tuple[WorkSignal, ...]
    stored: tuple[StoredWindow, ...] = ()  # what the next incremental pass starts from
    targets: tuple[Target, ...] = ()  # what the per-commit linker scores against
    rescored: int = 0  # windows scored (the rest were replayed)
    extracted: int = 0  # windows whose candidates were extracted in this pass
    own_authors: frozenset[str] | None = None  # authors with session evidence (None: unknown)
    memo: Any = None  # cluster id -> ClusterMemo (what the next incremental pass reuses)
    recomputed: frozenset[str] = frozenset()  # clusters whose memo was not reused
    state: Any = None  # the resolver state the next pass starts from (None: not kept)
    state_changed: frozenset[str] | None = None  # its clusters that changed (None: all)
    # `partial`: `windows` and `stored` hold only the windows this pass placed or changed
    # (the others keep their stored rows); `totals`: every session's and window's count.
    partial: bool = False
    totals: tuple[int, int] | None = None
    links_memo: Any = None  # the links and what they were judged with (resolve_links.py)
