"""An appending pass's links (pipeline/resolve_links.py) are exactly `link_commits` over every
commit, whatever targets the new sessions changed or founded, and the memo is refused when
an input every link shares differs."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from looma_git.pipeline.link_content import Content
from looma_git.pipeline.linking import Target, link_commits
from looma_git.pipeline.refine import RefineInput, refine
from looma_git.pipeline.resolve_links import LinkMemo, append_links, links_key
from looma_git.pipeline.resolve_state import commits_fingerprint
from looma_git.pipeline.signals import parse_ts
from tests.pipeline.test_incremental import COMMITS, KNOWN, POOL, _chain, _content

FILES = sorted(KNOWN)
LATER = max(parse_ts(c.ts) for c in COMMITS) + 3 * 86400  # new windows: after every commit


def _restricted(content: Content, shas: list[str]) -> Content:
    """What index/written returns for just these commits."""
    added = {s: v for s, v in content.added.items() if s in shas}
    keys = {k for v in added.values() for _, k in v}
    return Content(added=added, writes={k: v for k, v in content.writes.items() if k in keys},
                   capable=content.capable)


def _world(refs: list[str], authors: list[str], mute: frozenset[str] = frozenset()
           ) -> tuple[list, list[Target], Content]:
    """The pool's commits on these refs by these authors, the full pass's targets, and the
    content evidence (none for the commits in `mute`: they link on files, branch, time)."""
    commits = [replace(c, ref=r, author=a) for c, r, a in zip(_chain(list(COMMITS)), refs,
                                                               authors, strict=True)]
    content = _content(list(POOL), commits)
    content = replace(content, added={s: v for s, v in content.added.items() if s not in mute})
    full = refine(RefineInput(sessions=POOL, commits=tuple(commits), known_paths=KNOWN,
                              sha_lookup={}, content=content))
    return commits, list(full.targets), content


@st.composite
def changes(draw: st.DrawFn):
    refs = [draw(st.sampled_from(["refs/heads/main", "refs/heads/feat-csv",
                                  "refs/heads/feat-auth"])) for _ in COMMITS]
    authors = [draw(st.sampled_from(["a", "a", "b"])) for _ in COMMITS]
    own = draw(st.sampled_from([None, frozenset({"a"}), frozenset({"a", "b"})]))
    grow = draw(st.lists(st.tuples(st.integers(0, 10), st.lists(st.sampled_from(FILES),
                                                                max_size=3),
                                   st.sampled_from([None, "feat-csv", "feat-auth"]),
                                   st.booleans()), max_size=3))
    found = draw(st.lists(st.tuples(st.lists(st.sampled_from(FILES), min_size=1, max_size=3),
                                    st.sampled_from([None, "feat-csv", "feat-auth"])),
                          max_size=2))
    capable = draw(st.booleans())
    mute = frozenset(c.sha for c in COMMITS if draw(st.booleans()))
    return refs, authors, own, grow, found, capable, mute


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes())
def test_an_appending_pass_links_as_linking_every_commit(change) -> None:
    refs, authors, own, grow, found, capable, mute = change
    commits, before, content = _world(refs, authors, mute)
    key = links_key(commits_fingerprint(commits), frozenset(), frozenset(), own)
    memo = LinkMemo(key, tuple(sorted(t.id for t in before)),
                    tuple(link_commits(commits, before, frozenset(), own, content)))
    after = {t.id: t for t in before}
    changed: dict[str, tuple[Target | None, Target | None]] = {}
    new_sessions = set()
    for i, (which, files, branch, with_window) in enumerate(grow):
        old = before[which % len(before)]
        t = after[old.id]
        session = f"claude-code:new{i}"
        t = replace(t, files=t.files | set(files),
                    branches=t.branches | ({branch} if branch else set()),
                    spans=t.spans + (((LATER + i, LATER + i + 600),) if with_window else ()),
                    terms=(*t.terms, ("invoice", 3)),
                    windows=t.windows + (((session, LATER + i, LATER + i + 600),)
                                         if with_window else ()))
        new_sessions.add(session)
        after[old.id] = t
        changed[old.id] = (old, t)
    for i, (files, branch) in enumerate(found):
        session = f"codex:found{i}"
        t = Target(id=f"cand_new{i}", title="", files=frozenset(files),
                   branches=frozenset({branch} if branch else ()),
                   spans=((LATER + 9000 + i, LATER + 9600 + i),), terms=(("header", 2),),
                   windows=((session, LATER + 9000 + i, LATER + 9600 + i),))
        new_sessions.add(session)
        after[t.id] = t
        changed[t.id] = (None, t)
    now_content = replace(content, capable=content.capable | (new_sessions if capable
                                                             else frozenset()))
    targets = sorted(after.values(), key=lambda t: t.id)
    want = link_commits(commits, targets, frozenset(), own, now_content)
    asked: list[list[str]] = []

    def content_of(shas: list[str]) -> Content:
        asked.append(shas)
        return _restricted(now_content, shas)

    got = append_links(commits, targets, changed, {t for t in after if t.startswith("cand_")},
                       memo, key, frozenset(), own, frozenset(), content_of)
    assert got == want
    if not changed:  # nothing to judge again: no content read at all
        assert asked == []


def test_the_memo_is_refused_when_what_every_link_shares_differs() -> None:
    commits, targets, content = _world(["refs/heads/main"] * len(COMMITS), ["a"] * len(COMMITS))
    key = links_key(commits_fingerprint(commits), frozenset(), frozenset(), None)
    memo = LinkMemo(key, tuple(sorted(t.id for t in targets)),
                    tuple(link_commits(commits, targets, frozenset(), None, content)))

    def run(memo_: LinkMemo, key_: str, targets_: list[Target], founded: set[str]):
        changed = {t.id: (None, t) for t in targets_ if t.id in founded}
        return append_links(commits, targets_, changed, founded, memo_, key_, frozenset(),
                            None, frozenset(), lambda shas: _restricted(content, shas))

    assert run(memo, key, targets, set()) == list(memo.links)
    unlinked = links_key(commits_fingerprint(commits), frozenset({(commits[0].sha, "x")}),
                         frozenset(), None)
    assert run(memo, unlinked, targets, set()) is None  # a user's unlink since
    assert links_key(commits_fingerprint(commits[:-1]), (), (), None) != key
    assert links_key(commits_fingerprint(commits), (), (), frozenset({"a"})) != key
    assert run(memo, key, targets[1:], set()) is None  # a target vanished
    extra = replace(targets[0], id="wi_other")
    assert run(memo, key, [*targets, extra], set()) is None  # appeared for a kept cluster
    assert run(memo, key, [*targets, extra], {"wi_other"}) == link_commits(
        commits, [*targets, extra], frozenset(), None, content)


def test_new_writes_are_every_write_of_the_committed_lines_a_new_session_wrote(tmp_path) -> None:
    """What an appending pass checks its new sessions against, read from their own writes:
    the same writes the content evidence of every commit holds for those lines."""
    from looma_git.gitrepo import find_repo
    from looma_git.index import storedb, workmodel_state, written
    from tests.helpers import cli
    from tests.pipeline.repo_sessions import Project, Turn, at

    body = ["def exchange_code(code, verifier):", "    token = client.fetch_token(code=code)"]
    p = Project(tmp_path)
    p.session("s1", at(0), [Turn("add the token exchange",
                                 [("Write", "auth.py", "\n".join(body) + "\n")])])
    sha = p.commit(at(1), "Add the token exchange", {"auth.py": "\n".join(body) + "\n"})
    p.session("s2", at(30), [Turn("rename the verifier", [
        ("Edit", "auth.py", "x = 1", body[0] + "\n    keep_the_verifier_secret(verifier)")])])
    cli(p.repo, "init", env=p.env)
    cli(p.repo, "ingest", "--no-refine", env=p.env)
    conn = storedb.connect(find_repo(p.repo))
    try:
        # (the last pass read the commit's lines: an appending pass has the same commits)
        written.update_written(conn)
        every = written.content_for(conn, p.repo, [(sha, parse_ts(at(1).isoformat()))]).writes
        got = workmodel_state.new_writes(conn, {"claude-code:s2"})
    finally:
        conn.close()
    from looma_git.pipeline.content import line_key

    shared = line_key(body[0])
    assert set(got) == {shared}  # the line s2 wrote that no commit adds is not asked about
    assert got[shared] == every[shared]
    assert {w.session for w in got[shared]} == {"claude-code:s1", "claude-code:s2"}
    # s1 wrote before every other session: commits before s2's first write would be looked
    # at anew, so an appending pass cannot check s1 from the lines already read
    conn = storedb.connect(find_repo(p.repo))
    try:
        assert workmodel_state.new_writes(conn, {"claude-code:s1"}) is None
    finally:
        conn.close()
