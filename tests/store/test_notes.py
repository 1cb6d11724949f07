"""refs/notes/looma: readable by git, git's fanout, cat_sort_uniq merges, missing commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from looma_git.api import ledger as api
from looma_git.ledger.ops import OpDraft
from looma_git.ledger.projections import parse_note
from looma_git.store.notes import fanout_level, read_note
from tests.helpers import git
from tests.store.ledger_helpers import create, init


def fast_commits(repo: Path, n: int) -> list[str]:
    """n commits on refs/heads/many via git fast-import; returns their shas."""
    lines = []
    for i in range(n):
        msg = f"c{i}"
        lines += ["commit refs/heads/many", f"mark :{i + 1}",
                  f"committer T <t@e.com> {1700000000 + i} +0000", f"data {len(msg)}", msg]
        if i:
            lines.append(f"from :{i}")
        lines += [f"M 644 inline f{i}.txt", "data 2", "x", ""]
    git(repo, "fast-import", "--quiet", input="\n".join(lines) + "\n")
    return git(repo, "rev-list", "--reverse", "many").split("\n")


def link(paths, shas: list[str], wi: str, **extra: object) -> None:
    api.append(paths, [OpDraft("commit.link", {"type": "commit", "id": s},
                               {"workitem": wi, "confidence": 0.82, "by": "hook", **extra})
                       for s in shas], actor="system")


def test_note_visible_to_git_and_merge_safe(repo: Path) -> None:
    paths = init(repo)
    head = git(repo, "rev-parse", "HEAD")
    a = create(paths, "Implement OAuth Login")
    b = create(paths, "Refactor: db, cache")
    link(paths, [head], a, files=["auth/oauth.py"], branch="feat/oauth")
    text = git(repo, "notes", "--ref=looma", "show", head)
    assert text.startswith("# looma-note v1\n- {workitem: " + a)
    assert "title: Implement OAuth Login" in text and "branch: feat/oauth" in text
    assert read_note(paths, head) == text + "\n"
    assert "# looma-note v1" in git(repo, "log", "--notes=looma", "-1")
    # another clone's note on the same commit, merged by git's cat_sort_uniq
    git(repo, "update-ref", "refs/notes/mine", "refs/notes/looma")
    link(paths, [head], b)
    git(repo, "notes", "--ref=mine", "merge", "-s", "cat_sort_uniq", "refs/notes/looma")
    merged = git(repo, "notes", "--ref=mine", "show", head) + "\n"
    items = parse_note(merged.encode())
    assert sorted(i["workitem"] for i in items) == sorted([a, b])
    assert {i["title"] for i in items} == {"Implement OAuth Login", "Refactor: db, cache"}
    assert api.verify(paths).ok


def test_unlink_and_rename_rewrite_notes(repo: Path) -> None:
    paths = init(repo)
    head = git(repo, "rev-parse", "HEAD")
    a = create(paths, "old")
    link(paths, [head], a)
    api.append(paths, [OpDraft("workitem.rename", {"type": "workitem", "id": a}, {"title": "new"})])
    assert "title: new" in git(repo, "notes", "--ref=looma", "show", head)
    api.append(paths, [OpDraft("commit.unlink", {"type": "commit", "id": head}, {"workitem": a})])
    assert git(repo, "notes", "--ref=looma", "list") == ""
    assert api.verify(paths).ok
    git(repo, "fsck", "--strict")


def test_missing_commit_skipped_with_warning(repo: Path) -> None:
    paths = init(repo)
    a = create(paths, "x")
    link(paths, ["d" * 40, git(repo, "rev-parse", "HEAD")], a)
    assert git(repo, "notes", "--ref=looma", "list").count("\n") == 0  # exactly one note
    report = api.verify(paths)
    assert report.ok and any("missing commit" in w for w in report.warnings)


@pytest.mark.parametrize("count", [5, 300])
def test_fanout_matches_git_notes_add(repo: Path, count: int) -> None:
    paths = init(repo)
    shas = fast_commits(repo, count)
    a = create(paths, "x")
    link(paths, shas[:-1], a)
    assert fanout_level(count - 1) == (1 if count > 256 else 0)
    ours_before = git(repo, "ls-tree", "refs/notes/looma")
    assert (len(ours_before.split("\n")[0].split("\t")[1]) == 2) == (count > 256)
    # git adds the last note to our tree; we add the same note to ours: identical trees
    git(repo, "update-ref", "refs/notes/gitcopy", "refs/notes/looma")
    link(paths, [shas[-1]], a)
    note = read_note(paths, shas[-1])
    assert note is not None
    git(repo, "notes", "--ref=gitcopy", "add", "-f", "-F", "-", shas[-1], input=note)
    assert git(repo, "rev-parse", "refs/notes/gitcopy^{tree}") == \
        git(repo, "rev-parse", "refs/notes/looma^{tree}")
    assert len(git(repo, "notes", "--ref=looma", "list").split("\n")) == count
    git(repo, "fsck", "--strict")


def test_an_append_rewrites_only_the_notes_it_touched(repo: Path, monkeypatch) -> None:
    """After an append whose parent's projection the notes ref is (notes-synced), only the
    notes of the commits it touched are rendered and patched in; the tree is the one a full
    sync builds, across a fanout change, a retitle of a WorkItem with many commits, a commit
    this clone lacks and a notes ref moved by someone else (which makes it sync in full)."""
    from looma_git.ledger.projections import note_texts
    from looma_git.store import notes, notes_delta

    full_syncs: list[int] = []
    real_full = notes._full
    monkeypatch.setattr(notes, "_full", lambda *a: full_syncs.append(1) or real_full(*a))

    def agrees() -> None:  # the notes ref is the projection of the fold, as a full sync says
        want = {s: t.decode() for s, t in note_texts(api.load_state(paths)).items()
                if s != "d" * 40}
        assert notes.notes_map(paths) == want

    paths = init(repo)
    shas = fast_commits(repo, 258)
    a, b = create(paths, "Retry uploads"), create(paths, "Resize images")
    link(paths, shas[:250], a)
    link(paths, [shas[250], "d" * 40], b)  # a commit this clone lacks: retried, never written
    full_syncs.clear()
    link(paths, [shas[251]], b)
    assert full_syncs == [] and notes_delta.read_marker(paths.state_dir).missing == ("d" * 40,)
    agrees()
    link(paths, shas[252:257], b)  # 257 notes: the fanout level changes, a full sync decides
    assert full_syncs == [1]
    agrees()
    api.append(paths, [OpDraft("workitem.rename", {"type": "workitem", "id": a},
                               {"title": "Resumable uploads"})], actor="user")
    assert full_syncs == [1]  # 250 notes retitled in place
    agrees()
    # someone else's notes commit: the marker no longer names the ref, the next sync is full
    git(repo, "notes", "--ref=looma", "add", "-m", "stray", shas[257])
    link(paths, [shas[0]], b)
    assert full_syncs == [1, 1]
    agrees()
    before = git(repo, "rev-parse", "refs/notes/looma")
    (paths.state_dir / notes_delta.FILE_NAME).unlink()
    notes.sync_notes(paths, api.load_state(paths))  # a full sync finds nothing to change
    assert git(repo, "rev-parse", "refs/notes/looma") == before
    assert api.verify(paths).ok
