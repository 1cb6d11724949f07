"""Checks behind `looma verify`: op ids, append-only history, projections and notes vs the fold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from looma_git.gitrepo import RepoPaths
from looma_git.ledger.fold import fold
from looma_git.ledger.projections import note_texts, projection_files
from looma_git.store.ledger_ref import LEDGER_REF, read_tree
from looma_git.store.merge import left_out_by_merge
from looma_git.store.notes import NOTES_REF, read_notes_map
from looma_git.store.refnames import TRACKING_PREFIX_B
from looma_git.store.repo import get_blob_data, get_tree, open_repo, ref_value

MAX_HISTORY_COMMITS = 100_000


@dataclass(frozen=True)
class Finding:
    """One problem found; `op_id` names the op when one is involved."""

    kind: str
    message: str
    op_id: str | None = None
    path: str | None = None


def _ops_entries(repo: Any, commit: bytes) -> dict[str, bytes]:
    """prefix -> subtree id of ops/ in a ledger commit."""
    root = get_tree(repo, commit)
    if b"ops" not in root:
        return {}
    return {i.path.decode("utf-8", "replace"): i.sha for i in get_tree(repo, root[b"ops"][1]).items()}


def _ledger_gone(paths: RepoPaths, repo: Any) -> str | None:
    """Why refs/looma/ledger is missing in a clone where looma has run (history rewritten,
    e.g. by `git filter-repo`, or deleted) and how to get it back; None for a clone where
    looma was never set up."""
    old = None
    ref_map = paths.common_dir / "filter-repo" / "ref-map"
    try:
        for line in ref_map.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2] == LEDGER_REF.decode() and set(parts[1]) == {"0"}:
                old = parts[0]
    except OSError:
        pass
    tracking = sorted(name.decode() for name in repo.refs.allkeys()
                      if name.startswith(TRACKING_PREFIX_B) and name.endswith(b"/ledger"))
    looma_ran = (old is not None or bool(tracking) or (paths.state_dir / "clone-id").exists()
                 or ref_value(repo, NOTES_REF) is not None)
    if not looma_ran:
        return None
    why = ("deleted by `git filter-repo` (ref-map: it was " + old[:12] + ")") if old else "deleted"
    fixes = []
    if tracking:
        fixes.append(f"`git update-ref refs/looma/ledger {tracking[0]}` (the last fetched copy)")
    if old and old.encode() in repo.object_store:
        fixes.append(f"`git update-ref refs/looma/ledger {old}` (the old commit is still here)")
    fixes.append("from a remote that has it: `git fetch <remote> "
                 "refs/looma/ledger:refs/looma/ledger` (or `looma sync <remote>`)")
    return (f"refs/looma/ledger is gone ({why}), so no WorkItem, correction or link is read; "
            "nothing is lost where it was pushed. Restore it: " + "; or ".join(fixes)
            + ", then `looma reindex`")


def _files(repo: Any, tree_sha: bytes) -> dict[str, bytes]:
    return {i.path.decode("utf-8", "replace"): i.sha for i in get_tree(repo, tree_sha).items()}


def audit(paths: RepoPaths) -> tuple[int, int, list[Finding], list[str]]:
    """(ops, commits checked, problems, warnings) for the ledger and notes refs."""
    problems: list[Finding] = []
    warnings: list[str] = []
    with open_repo(paths) as repo:
        head = ref_value(repo, LEDGER_REF)
        if head is None:
            gone = _ledger_gone(paths, repo)
            if gone is not None:
                return 0, 0, [Finding("ledger_ref_missing", gone)], []
            return 0, 0, [], ["refs/looma/ledger does not exist yet (run `looma init`)"]
        result = read_tree(repo, head)
        for rej in result.rejected:
            problems.append(Finding("rejected_op", rej.reason, rej.op_id, rej.path))
        for kept in result.kept:
            warnings.append(f"{kept.path}: unknown op version {kept.version!r}, kept and skipped")
        commits = _check_history(repo, head, problems)
        state = fold(result.ops)
        warnings += state.warnings
        # projections
        want = projection_files(state)
        root = get_tree(repo, head)
        have: dict[str, bytes] = {}
        for top in ("workitems", "memories"):
            if top.encode() in root:
                for name, blob_id in _files(repo, root[top.encode()][1]).items():
                    have[f"{top}/{name}"] = blob_id
        if b"format.yaml" in root:
            have["format.yaml"] = root[b"format.yaml"][1]
        from dulwich.objects import Blob

        for path in sorted(set(want) | set(have)):
            if path not in have:
                problems.append(Finding("projection_missing", f"{path} is missing", path=path))
            elif path not in want:
                problems.append(Finding("projection_extra", f"{path} matches no folded object",
                                        path=path))
            elif Blob.from_string(want[path]).id != have[path]:
                problems.append(Finding("projection_drift", f"{path} differs from the fold",
                                        path=path))
        # notes
        notes = read_notes_map(repo, ref_value(repo, NOTES_REF))
        for sha, text in sorted(note_texts(state).items()):
            if sha.encode() not in repo.object_store:
                warnings.append(f"link to missing commit {sha} (no note written)")
                continue
            if sha not in notes:
                problems.append(Finding("note_missing", f"commit {sha} has links but no note",
                                        path=sha))
            elif get_blob_data(repo, notes[sha]) != text:
                problems.append(Finding("note_drift", f"note on {sha} differs from the fold",
                                        path=sha))
        live = note_texts(state)
        for sha in sorted(set(notes) - set(live)):
            problems.append(Finding("note_extra", f"note on {sha} matches no live link", path=sha))
        warnings += [f"conflict on {c.target}: {c.kind} between "
                     f"{', '.join(o[:10] for o in c.ops)}; {c.winner[:10]} won"
                     for c in state.conflicts]
    return len(result.ops), commits, problems, warnings


def _check_history(repo: Any, head: bytes, problems: list[Finding]) -> int:
    """Append-only: every op file in a parent commit is in each child with the same blob."""
    seen: set[bytes] = set()
    stack = [head]
    while stack and len(seen) < MAX_HISTORY_COMMITS:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        commit = repo[sha]
        child = _ops_entries(repo, sha)
        for parent in commit.parents:
            stack.append(parent)
            for prefix, sub in _ops_entries(repo, parent).items():
                if child.get(prefix) == sub:
                    continue
                before = _files(repo, sub)
                after = _files(repo, child[prefix]) if prefix in child else {}
                for name, blob in before.items():
                    if after.get(name) != blob:
                        what = "removed" if name not in after else "changed"
                        if what == "removed" and left_out_by_merge(
                                repo, sha, f"ops/{prefix}/{name}", blob):
                            continue  # a rejected file a sync merge did not take in
                        problems.append(Finding(
                            "history", f"op file ops/{prefix}/{name} was {what} in commit "
                            f"{sha.decode()[:10]}", name.removesuffix(".yaml"),
                            f"ops/{prefix}/{name}"))
    return len(seen)

