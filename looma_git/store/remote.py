"""Talking to a remote through dulwich's clients: fetch looma's two refs, push them by CAS."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from looma_git.errors import RemoteError
from looma_git.store import git
from looma_git.store.refnames import LEDGER_REF_B, NOTES_REF_B

if TYPE_CHECKING:
    from dulwich.repo import Repo

LEDGER = LEDGER_REF_B
NOTES = NOTES_REF_B
WANTED = (LEDGER, NOTES)
ZERO = b"0" * 40


@dataclass(frozen=True)
class RemoteRefs:
    """The remote's values of looma's refs (None: the remote has no such ref)."""

    ledger: bytes | None = None
    notes: bytes | None = None

    def get(self, ref: bytes) -> bytes | None:
        return self.ledger if ref == LEDGER else self.notes


@dataclass
class PushOutcome:
    """`ok` when every update landed; `raced` names refs the remote had moved meanwhile."""

    ok: bool
    raced: list[bytes] = field(default_factory=list)
    errors: dict[bytes, str] = field(default_factory=dict)


def _network_errors() -> tuple[type[BaseException], ...]:
    from dulwich.client import (
        HTTPProxyUnauthorized,
        HTTPUnauthorized,
        InvalidWants,
        StrangeHostname,
        TransportNotAllowed,
    )
    from dulwich.errors import GitProtocolError, NotGitRepository, ObjectMissing

    return (OSError, GitProtocolError, NotGitRepository, ObjectMissing, HTTPUnauthorized,
            HTTPProxyUnauthorized, InvalidWants, StrangeHostname, TransportNotAllowed,
            ValueError, KeyError)


def _client(repo: Repo, url: str) -> tuple[Any, str]:
    from dulwich.client import LocalGitClient, SubprocessGitClient, get_transport_and_path

    try:
        client, path = get_transport_and_path(url, config=repo.get_config_stack(), quiet=True)
    except _network_errors() as exc:
        raise RemoteError(f"cannot use remote URL {url!r}: {exc}") from exc
    if isinstance(client, LocalGitClient):
        # A path remote is served by git's own upload-pack/receive-pack, as over ssh: the same
        # protocol code path, CAS enforced by receive-pack, and packs built in C (dulwich's
        # in-process local client re-packs every object in Python, ~3x slower here).
        client = SubprocessGitClient(quiet=True)
    return client, path


class _FetchTarget:
    """The local repo as a fetch target that offers looma's own commits as 'haves'.

    dulwich's default graph walker only advertises refs/heads/*, so without this every sync
    would download the remote's whole ledger history again.
    """

    def __init__(self, repo: Repo, haves: list[bytes]) -> None:
        self._repo = repo
        self._haves = haves

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)

    def get_graph_walker(self, heads: list[bytes] | None = None) -> Any:
        return self._repo.get_graph_walker(heads=self._haves)  # type: ignore[arg-type]


def fetch(repo: Repo, url: str, haves: list[bytes]) -> RemoteRefs:
    """Download the objects behind the remote's refs/looma/ledger and refs/notes/looma.

    No local ref is touched here; the caller validates what arrived before moving anything.
    """
    client, path = _client(repo, url)
    seen: dict[bytes, bytes] = {}
    store: Any = repo.object_store

    def determine_wants(refs: dict[bytes, bytes], depth: int | None = None) -> list[bytes]:
        for name in WANTED:
            sha = refs.get(name)
            if sha and sha != ZERO:
                seen[name] = sha
        return sorted({s for s in seen.values() if s not in store})

    present = [h for h in dict.fromkeys(haves) if h in store]
    try:
        if _native(client):
            _fetch_native(repo, client, path, present, determine_wants)
        else:
            client.fetch(path, _FetchTarget(repo, present), determine_wants=determine_wants)
    except _network_errors() as exc:
        raise RemoteError(f"cannot fetch from {url}: {_why(exc)}",
                          hint="check the remote URL and your network; nothing was changed "
                               "locally") from exc
    for name, sha in seen.items():
        if sha not in store:
            raise RemoteError(f"{url} advertised {name.decode()} = {sha.decode()} but did not "
                              "send it", hint="nothing was changed locally")
    return RemoteRefs(seen.get(LEDGER), seen.get(NOTES))


def push(repo: Repo, url: str, updates: dict[bytes, tuple[bytes | None, bytes]]) -> PushOutcome:
    """Move each remote ref from `old` to `new` by compare-and-swap, never forced.

    If the remote's current value is not `old` the update is not sent at all (`raced`); the
    server (or dulwich's local client) also re-checks `old` while holding its ref lock.
    """
    client, path = _client(repo, url)
    outcome = PushOutcome(ok=False)

    def update_refs(refs: dict[bytes, bytes]) -> dict[bytes, bytes]:
        new = dict(refs)
        for name, (old, _sha) in updates.items():
            current = refs.get(name)
            if current == ZERO:
                current = None
            if current != old:
                outcome.raced.append(name)
        if outcome.raced:
            return dict(refs)  # unchanged: nothing is sent
        for name, (_old, sha) in updates.items():
            new[name] = sha
        return new

    # Only the remote's old looma values count as "have": nothing on a branch is reachable
    # from looma's refs, and dulwich walks every ancestor of every have (a whole main branch).
    ours = {old for old, _ in updates.values() if old is not None}

    def generate_pack_data(have: Any, want: Any, *, ofs_delta: bool = False,
                           progress: Any = None) -> Any:
        return repo.generate_pack_data({h for h in have if h in ours}, set(want),
                                       progress=progress, ofs_delta=ofs_delta)

    bpath = path.encode() if isinstance(path, str) else path
    try:
        if _native(client):
            statuses = _push_native(repo, client, bpath, updates, outcome)
        else:
            result = client.send_pack(bpath, update_refs, generate_pack_data=generate_pack_data)
            statuses = result.ref_status or {}
    except _network_errors() as exc:
        raise RemoteError(f"cannot push to {url}: {_why(exc)}",
                          hint="nothing was changed locally; run `looma sync` again") from exc
    for name, err in statuses.items():
        if err is not None:
            outcome.errors[name] = err
    outcome.ok = not outcome.raced and not outcome.errors
    return outcome


# ---------------------------------------------------------------- packs built and indexed by git
# Over a pipe to git's own upload-pack/receive-pack (path, ssh and git:// remotes) dulwich
# speaks the protocol, but packs in Python: a push decompressed every object of the pushed
# history and recompressed it, and a fetch indexed the received pack in Python (together
# ~0.6 s of a 1,000-ops-each-way sync). Here dulwich still negotiates, and git builds the
# push pack (`pack-objects`, reusing the compressed data in our packs) and indexes the
# fetched one (`index-pack`). Same protocol, same old-value CAS in every ref command; HTTP
# remotes keep dulwich's own path.

def _native(client: Any) -> bool:
    from dulwich.client import TraditionalGitClient

    return isinstance(client, TraditionalGitClient)


def _git_dir(repo: Repo) -> str:
    return str(repo.controldir())


def _fetch_native(repo: Repo, client: Any, path: str, haves: list[bytes],
                  determine_wants: Any) -> None:
    """Negotiate with dulwich; the pack streams into `git index-pack --stdin --fix-thin`."""
    import subprocess

    proc: subprocess.Popen[bytes] | None = None

    def pack_data(chunk: bytes) -> int:
        nonlocal proc
        if proc is None:
            proc = git.popen("index-pack", "--stdin", "--fix-thin", git_dir=_git_dir(repo),
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        assert proc.stdin is not None
        proc.stdin.write(chunk)
        return len(chunk)

    try:
        walker = repo.get_graph_walker(heads=haves)  # type: ignore[arg-type]
        client.fetch_pack(path, determine_wants, walker, pack_data)
    finally:
        if proc is not None:
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise OSError(f"git index-pack failed: {err.decode('utf-8', 'replace').strip()}")


def _push_native(repo: Repo, client: Any, path: bytes,
                 updates: dict[bytes, tuple[bytes | None, bytes]],
                 outcome: PushOutcome) -> dict[bytes, str | None]:
    """send-pack: CAS commands `old new ref` (nothing sent if any ref moved), then git's pack."""
    import subprocess

    from dulwich.client import ReportStatusParser, read_pkt_refs_v1

    proto, _can_read, _stderr = client._connect(b"receive-pack", path)
    with proto:
        refs, caps = read_pkt_refs_v1(proto.read_pkt_seq())
        for name, (old, _sha) in updates.items():
            current = refs.get(name)  # type: ignore[call-overload]
            if (None if current == ZERO else current) != old:
                outcome.raced.append(name)
        if outcome.raced:
            proto.write_pkt_line(None)  # unchanged: nothing is sent
            return {}
        names = {c.split(b"=", 1)[0] for c in caps}
        send = [c for c in (b"report-status", b"ofs-delta") if c in names]
        for i, (name, (old, sha)) in enumerate(sorted(updates.items())):
            line = (old or ZERO) + b" " + sha + b" " + name
            proto.write_pkt_line(line + (b"\0" + b" ".join(send) if i == 0 else b"") + b"\n")
        proto.write_pkt_line(None)
        # Only the remote's old looma values are "have": nothing on a branch is reachable
        # from looma's refs, so the pack holds exactly the new ledger and notes objects.
        store: Any = repo.object_store
        revs = [sha for _old, sha in updates.values()]
        revs += [b"^" + old for old, _ in updates.values() if old is not None and old in store]
        args = ["pack-objects", "--stdout", "--revs", "-q"]
        if b"ofs-delta" in send:
            args.append("--delta-base-offset")
        with git.popen(*args, git_dir=_git_dir(repo), stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE) as pack:
            assert pack.stdin is not None and pack.stdout is not None
            pack.stdin.write(b"\n".join(revs) + b"\n")
            pack.stdin.close()
            while chunk := pack.stdout.read(65536):
                proto.write(chunk)
            err = pack.stderr.read() if pack.stderr is not None else b""
        if pack.returncode != 0:
            raise OSError(f"git pack-objects failed: {err.decode('utf-8', 'replace').strip()}")
        if b"report-status" not in send:
            return {name: None for name in updates}
        parser = ReportStatusParser()
        for pkt in proto.read_pkt_seq():
            parser.handle_packet(pkt)
        parser.handle_packet(None)
        return dict(parser.check())


def _why(exc: BaseException) -> str:
    """A network failure in words (no exception class names: `HangupException:` means the
    other side closed the connection, usually because the repository is not there)."""
    name = type(exc).__name__
    if name == "HangupException":
        text = " ".join(str(exc).split())
        return ("the remote hung up (no such repository, or access denied)"
                + (f": {text}" if text and text != "The remote server unexpectedly closed the "
                   "connection." else ""))
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    text = str(exc).strip()
    return text or name
