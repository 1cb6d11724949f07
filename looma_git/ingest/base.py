"""The Adapter protocol and the small value types every adapter and the engine share."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from looma_git.index.event_writer import c_encoder
from looma_git.model import NormalizedEvent


@dataclass(frozen=True)
class DiscoveryEnv:
    """What discovery may look at: the user's home and the relevant environment variables.

    Built by the edge (CLI/hook) from os.environ; adapters never read os.environ themselves.
    `overrides` maps an agent name to explicit paths from `--source AGENT=PATH`; when an agent
    has overrides, only those paths are searched for it.
    """

    home: Path
    environ: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    platform: str = "linux"  # sys.platform of the edge: "linux", "darwin", "win32"

    def xdg(self, var: str, default_rel: str) -> Path:
        """An XDG base directory honouring the variable, else `~/<default_rel>`."""
        value = self.environ.get(var)
        return Path(value) if value else self.home / default_rel


@dataclass(frozen=True)
class Source:
    """One thing an adapter reads: a transcript file, a SQLite database or a directory tree."""

    agent: str
    path: Path
    kind: str  # "jsonl" | "json" | "sqlite" | "text" | "dir" | "meta"
    key: str = ""  # stable identity when `path` alone is not enough (e.g. a composer id)

    @property
    def source_id(self) -> str:
        return f"{self.agent}:{self.path}{'#' + self.key if self.key else ''}"


@dataclass(frozen=True)
class Cursor:
    """How far a source was read. Persisted by the engine, opaque except for these fields."""

    offset: int = 0  # bytes of complete lines consumed from an append-only file
    head_fp: str = ""  # fingerprint of the file head when `offset` was recorded
    content_hash: str = ""  # hash of a rewritten file / database snapshot already read
    state: str = ""  # adapter-private JSON (e.g. pending streaming-split merge state)


@dataclass(frozen=True)
class Skip:
    """A record that was not turned into an event, with a stable reason key and where it was."""

    reason: str  # e.g. "bad_json", "not_object", "truncated_line", "too_large", "too_deep",
    #              "invalid_utf8", "locked", "unreadable", "unknown_type", "encrypted"
    location: str  # "path:line" or "path#key"


# Tool kinds whose events' records the ingest keys (index/written.py): the ones an adapter
# carries in ReadResult.records.
KEYED_KINDS = frozenset({"edit", "write", "shell"})
# Bytes of transcript lines one read carries as records at most (memory stays bounded on a
# huge transcript; the lines past it are read back when keyed).
CARRY_BYTES = 32 * 1024 * 1024


@dataclass
class ReadResult:
    """What one `Adapter.read` call produced."""

    events: list[NormalizedEvent]
    cursor: Cursor
    skips: list[Skip] = field(default_factory=list)
    noise: dict[str, int] = field(default_factory=dict)  # dropped-as-noise counts by reason
    notes: list[str] = field(default_factory=list)  # plain-language facts (e.g. Windsurf)
    # The parsed record at the byte offset of a line an event keeps by reference (raw_spans),
    # as the adapter decoded it, for the readers that have it at hand: the ingest keys what
    # edit events wrote from these instead of reading the lines back (index/written.py). Only
    # records that reading back would parse alike (decoded from the bytes as read); one
    # missing is read back.
    records: dict[int, Any] = field(default_factory=dict)


@runtime_checkable
class Adapter(Protocol):
    """One agent's on-disk format. Parses and normalizes; nothing else (no store, no env)."""

    name: str  # the agent name, one of looma_git.ingest.registry.AGENTS

    def discover(self, env: DiscoveryEnv) -> list[Source]:
        """Every source this agent has under `env` (existing paths only; never raises)."""
        ...

    def read(self, source: Source, cursor: Cursor | None) -> ReadResult:
        """Events after `cursor` (None: from the start). Bad records become Skips, never raise."""
        ...


# json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
# without building an encoder on every call (one call per event).
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                              default=str)
_CANONICAL_C = c_encoder(_CANONICAL)  # its C encoder, made once


# The string encoder that encoder uses for every str (ensure_ascii=False): ids are mostly
# built from strings and None, whose JSON array is written directly (JSONEncoder.encode sets
# up a new C encoder per call, half of an id's cost).
_STR_JSON: Callable[[str], str] = json.encoder.encode_basestring


def event_id(*parts: object) -> str:
    """A content-addressed event id: sha256 over the canonical JSON of `parts`, 32 hex."""
    for part in parts:
        if part is not None and type(part) is not str:
            blob = "".join(_CANONICAL_C(parts, 0)) if _CANONICAL_C is not None \
                else _CANONICAL.encode(parts)
            break
    else:
        blob = "[" + ",".join(["null" if x is None else _STR_JSON(x)  # type: ignore[arg-type]
                               for x in parts]) + "]"
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_T = TypeVar("_T")


def builder(cls: type[_T]) -> Callable[[dict[str, Any]], _T]:
    """`build(values)` == `cls(**values)` for a frozen dataclass, without its __init__.

    A frozen dataclass's __init__ sets each field through object.__setattr__ (~3 us for
    NormalizedEvent, once per event read); this fills the instance's __dict__ in one step,
    defaults first, in field order, so the instance is the one __init__ would make. `values`
    must name every field without a default (only a count is checked: this runs per event,
    for callers that spell out every field). Classes
    it cannot stand in for (__post_init__, slots, default factories, init=False fields) get
    their own constructor.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if (hasattr(cls, "__post_init__") or hasattr(cls, "__slots__")
            or any(f.default_factory is not dataclasses.MISSING or not f.init for f in fields)):
        return lambda values: cls(**values)
    n_fields = len(fields)
    required = frozenset(f.name for f in fields if f.default is dataclasses.MISSING)
    defaults = {f.name: None if f.default is dataclasses.MISSING else f.default for f in fields}
    new, set_dict = object.__new__, object.__setattr__

    def build(values: dict[str, Any]) -> _T:
        d = defaults.copy()
        d.update(values)
        if len(d) != n_fields or len(values) < len(required):
            return cls(**values)  # an unknown or missing field: the TypeError __init__ raises
        obj = new(cls)
        set_dict(obj, "__dict__", d)
        return obj

    return build


HEAD_BYTES = 4096


def head_fingerprint(path: Path, offset: int) -> str:
    """sha256 of the first min(offset, 4 KiB) bytes: a file whose head changed under a cursor
    was truncated or replaced, and is rescanned (events dedupe by id)."""
    try:
        with path.open("rb") as fh:
            return hashlib.sha256(fh.read(min(offset, HEAD_BYTES))).hexdigest()[:16]
    except OSError:
        return ""


def resume_point(path: Path, cursor: Cursor | None) -> tuple[int, str, list[str]]:
    """Where an append-only file read continues: (byte offset, adapter state, notes).

    A file whose head no longer matches the cursor's fingerprint (or that shrank) was truncated
    or replaced: it is rescanned from the start (events dedupe by id) and a note says so.
    """
    if not cursor or not cursor.offset:
        return 0, "", []
    size = path.stat().st_size
    if size >= cursor.offset and head_fingerprint(path, cursor.offset) == cursor.head_fp:
        return cursor.offset, cursor.state, []
    return 0, "", [f"{path}: truncated or replaced since last read; rescanned"]
