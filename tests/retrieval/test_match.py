"""Goal matching and resume outcomes on hand-built records."""

from __future__ import annotations

from looma_git.retrieval import match
from looma_git.retrieval import terms as terms_mod
from looma_git.retrieval.bundle import build
from looma_git.retrieval.records import ItemRecord, MemoryRecord


def item(id: str, title: str, files: tuple[str, ...], conf: float = 0.8,
         memories: tuple[MemoryRecord, ...] = ()) -> ItemRecord:
    return ItemRecord(id=id, title=title, kind="feature", status="active", lifecycle="active",
                      confidence=conf, band="high", files=files, aliases=(), branch=None,
                      summary="", sessions=(), commits=(), memories=memories, updated="",
                      promoted=True)


ITEMS = [
    item("wi_a", "Implement OAuth Login", ("auth/oauth.py", "auth/routes.py")),
    item("wi_c", "Fix Session Timeout on Refresh", ("auth/session.py",)),
    item("wi_e1", "Search Indexing", ("search/index.py",)),
    item("wi_e2", "Search Ranking", ("search/rank.py",)),
]


def test_confident() -> None:
    state, chosen = match.outcome(match.rank("oauth login", ITEMS))
    assert state == "confident" and chosen[0].item.id == "wi_a"


def test_ambiguous_near_tie() -> None:
    state, chosen = match.outcome(match.rank("search", ITEMS))
    assert state == "ambiguous"
    assert {m.item.id for m in chosen} == {"wi_e1", "wi_e2"}


def test_cold() -> None:
    state, chosen = match.outcome(match.rank("kubernetes helm chart", ITEMS))
    assert state == "cold" and chosen == []


def test_stemming_meets_paths() -> None:
    ranked = match.rank("session timeouts", ITEMS)
    assert ranked[0].item.id == "wi_c"


def test_bundle_keeps_protected_items_and_reports_overflow() -> None:
    mems = tuple(MemoryRecord(id=f"m{i}", kind="todo", text="x" * 200, workitem="wi_a",
                              confidence=0.5, band="medium", lifecycle="active", promoted=True,
                              evidence=()) for i in range(10))
    it = item("wi_a", "Implement OAuth Login", tuple(f"f{i}.py" for i in range(50)),
              memories=mems)
    b = build(it, {"branch": "main"}, [{"sha": "abc", "subject": "s"}] * 5, [], budget=100)
    assert len(b.todos) == 10  # protected: never dropped
    assert b.protected_over_budget
    assert b.overflow.get("files") == 50


# Hand-built records whose words leave a goal between the cold and the confident line, and
# cosines that say what meaning adds: the outcome rules of `match.outcome` one by one.
PARA = [
    item("wi_mo", "Generate translation binaries during release", (".github/workflows/release.yml",)),
    item("wi_loc", "Allow i18n.activate(None)", ("src/humanize/i18n.py",)),
    item("wi_py", "Add Python 3.14 to the test matrix", ("tox.ini",)),
]


def _out(goal: str, cos: dict[str, float] | None) -> tuple[str, list[str]]:
    state, chosen = match.outcome(match.rank(goal, PARA, cos))
    return state, [m.item.id for m in chosen]


def test_meaning_confirms_a_moderate_words_match() -> None:
    goal = "binaries on every tag for the release"
    ranked = match.rank(goal, PARA)
    top = ranked[0]
    assert top.item.id == "wi_mo"
    assert match.LEX_WEAK <= top.lexical < match.CONFIDENT_AT  # words alone do not decide
    assert not match.lexical_decides(ranked)
    # Meaning agrees (or is merely close elsewhere): confident.
    assert _out(goal, {"wi_mo": 0.26, "wi_loc": 0.33, "wi_py": 0.1}) == ("confident", ["wi_mo"])
    # Meaning clearly prefers another WorkItem: both side by side, not a guess.
    state, got = _out(goal, {"wi_mo": 0.20, "wi_loc": 0.40, "wi_py": 0.1})
    assert state == "ambiguous" and set(got) == {"wi_mo", "wi_loc"}


def test_a_near_tie_is_two_real_matches_never_padding() -> None:
    # One weak words match (one common word) and noise-level meaning elsewhere: no WorkItem to
    # offer side by side with it, and nothing to be confident about: cold.
    goal = "unity physics matrix jitter"
    ranked = match.rank(goal, PARA)
    assert ranked[0].item.id == "wi_py" and match.COLD_BELOW <= ranked[0].lexical < match.LEX_WEAK
    state, got = _out(goal, {"wi_py": 0.31, "wi_mo": 0.29, "wi_loc": 0.05})
    assert (state, got) == ("cold", [])
    # Without meaning (no model installed) the same: a lone weak words match is no choice.
    assert _out(goal, None) == ("cold", [])
    # Two WorkItems that both match, neither clearly: ambiguous with exactly those two.
    state, got = _out("localisation build artefacts", {"wi_mo": 0.45, "wi_loc": 0.44,
                                                       "wi_py": 0.05})
    assert state == "ambiguous" and set(got) == {"wi_mo", "wi_loc"}, got


def test_every_ambiguous_candidate_matches() -> None:
    """Whatever the cosines, an ambiguous outcome lists two or more WorkItems and each one
    matches the goal in words (COLD_BELOW) or in meaning (SEM_COLD_BELOW)."""
    import itertools

    goals = ("release translations", "activate none", "test matrix", "python release",
             "i18n binaries", "translation matrix")
    levels = (None, 0.1, 0.29, 0.31, 0.4, 0.5)
    for goal, cs in itertools.product(goals, itertools.product(levels, repeat=3)):
        cos = {it.id: c for it, c in zip(PARA, cs, strict=True) if c is not None}
        state, chosen = match.outcome(match.rank(goal, PARA, cos or None))
        if state == "ambiguous":
            assert len(chosen) >= 2, (goal, cs)
            for m in chosen:
                assert m.lexical >= match.COLD_BELOW or (m.semantic or 0) >= \
                    match.SEM_COLD_BELOW, (goal, cs, m)


def test_token_set_ratio_is_rapidfuzz_s() -> None:
    """The pure-Python title similarity gives rapidfuzz's numbers (the thresholds were chosen
    on them), without importing rapidfuzz on the read path."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from rapidfuzz import fuzz

    from looma_git.retrieval.fuzzy import token_set_ratio

    words = st.sampled_from("oauth login google sign in via authlib rate limiter per a ab".split())
    text = st.one_of(st.lists(words, max_size=7).map(" ".join),
                     st.text(alphabet="abc xyz", max_size=90))

    @settings(max_examples=400, deadline=None)
    @given(a=text, b=text)
    def check(a: str, b: str) -> None:
        assert abs(token_set_ratio(a, b) - fuzz.token_set_ratio(a, b)) < 1e-9

    check()


def test_ranking_uses_the_snapshot_terms_and_stays_the_same(tmp_path) -> None:
    """A fresh process ranks from the term sets saved with the records snapshot, with the
    same result as tokenising the items itself."""
    from looma_git.retrieval import snapshot

    goals = ("oauth login", "session timeouts", "search", "auth", "kubernetes helm chart",
             "auth/session.py", "index rank")
    want = {g: [(m.item.id, m.score, m.matched_terms) for m in match.rank(g, ITEMS)]
            for g in goals}
    snapshot.save(tmp_path, "h1", ITEMS)
    terms_mod._TERMS.clear()
    terms_mod._BY_ITEM.clear()
    match._INDEX.clear()
    items = snapshot.load(tmp_path, "h1")
    assert items == ITEMS
    assert all(terms_mod._BY_ITEM[id(it)][0] is it for it in items)  # primed per record
    for g in goals:
        assert [(m.item.id, m.score, m.matched_terms) for m in match.rank(g, items)] == want[g]
    assert terms_mod._TERMS == {}  # no item text was tokenised


def test_snapshot_terms_of_another_tokeniser_are_not_used(tmp_path, monkeypatch) -> None:
    from looma_git.retrieval import snapshot

    snapshot.save(tmp_path, "h1", ITEMS)
    terms_mod._TERMS.clear()
    terms_mod._BY_ITEM.clear()
    monkeypatch.setattr(snapshot, "TERMS_PROBE", snapshot.TERMS_PROBE + " changed")
    assert snapshot.load(tmp_path, "h1") == ITEMS
    # re-tokenised on the next rank, never mis-ranked
    assert terms_mod._TERMS == {} and terms_mod._BY_ITEM == {}


def test_a_file_goal_is_about_the_workitems_that_have_the_file() -> None:
    """Every WorkItem of a package shares the words of a path (src, the package, py, i18n from
    tests/test_i18n.py); the one that touched the named file is the match."""
    pkg = [item("wi_fnf", "Replace Exception with FileNotFoundError",
                ("src/humanize/i18n.py", "tests/test_i18n.py")),
           item("wi_size", "Add i18n support for naturalsize",
                ("src/humanize/filesize.py", "tests/test_i18n.py")),
           item("wi_dec", "Locale decimal separator for intword",
                ("src/humanize/number.py", "tests/test_i18n.py"))]
    ranked = match.rank("src/humanize/i18n.py", pkg)
    assert ranked[0].item.id == "wi_fnf" and ranked[0].via == "file"
    assert match.outcome(ranked) == ("confident", [ranked[0]])
    # A directory they all have is a near-tie of the three.
    state, chosen = match.outcome(match.rank("src/humanize", pkg))
    assert state == "ambiguous" and len(chosen) == 3


def test_a_list_changed_after_ranking_is_indexed_again() -> None:
    items = list(ITEMS[:2])
    assert [m.item.id for m in match.rank("search", items) if m.score > 0] == []
    items.append(ITEMS[2])  # the same list object, new contents
    assert match.rank("search", items)[0].item.id == "wi_e1"


LISTS = [
    item("wi_list", "Add natural_list", ("src/humanize/lists.py", "docs/lists.md")),
    item("wi_roll", "naturalsize rollover", ("src/humanize/filesize.py",)),
    item("wi_loc", "Default locale path", ("src/humanize/i18n.py",)),
]


def test_words_and_meaning_that_agree_make_a_match() -> None:
    """One shared word (under LEX_WEAK) and the clearly closest meaning, on the same WorkItem:
    two independent weak signals that agree are confident; either alone is cold."""
    goal = "join a list in words"
    top = match.rank(goal, LISTS)[0]
    assert top.item.id == "wi_list" and match.COLD_BELOW <= top.lexical < match.LEX_WEAK
    agree = {"wi_list": 0.37, "wi_roll": 0.05, "wi_loc": 0.07}
    state, chosen = match.outcome(match.rank(goal, LISTS, agree))
    assert (state, [m.item.id for m in chosen]) == ("confident", ["wi_list"])
    # Words alone (no model): a lone weak match is no choice to offer.
    assert match.outcome(match.rank(goal, LISTS))[0] == "cold"
    # A cosine barely over the cold line is the same word seen again, not agreement.
    echo = {"wi_list": match.SEM_COLD_BELOW + 0.01, "wi_roll": 0.05, "wi_loc": 0.07}
    assert match.outcome(match.rank(goal, LISTS, echo))[0] == "cold"
    # Meaning close to a second WorkItem too: no clear agreement.
    near = {"wi_list": 0.37, "wi_roll": 0.33, "wi_loc": 0.07}
    assert match.outcome(match.rank(goal, LISTS, near))[0] != "confident"


def test_meaning_that_would_pick_another_workitem_blocks_the_words() -> None:
    """A moderate words match is confirmed by meaning only when meaning does not itself pick
    another WorkItem (closer, at SEM_CONFIDENT_AT): then both are shown."""
    goal = "binaries on every tag for the release"
    assert match.rank(goal, PARA)[0].item.id == "wi_mo"
    rival = {"wi_mo": 0.36, "wi_loc": match.SEM_CONFIDENT_AT + 0.02, "wi_py": 0.1}
    state, got = _out(goal, rival)
    assert state == "ambiguous" and set(got) == {"wi_mo", "wi_loc"}
    weak_rival = {"wi_mo": 0.30, "wi_loc": 0.38, "wi_py": 0.1}  # closer, but not by much
    assert _out(goal, weak_rival) == ("confident", ["wi_mo"])


def test_function_words_are_no_topic() -> None:
    """'their' or 'who' in a goal must not match WorkItems whose texts happen to use them."""
    items = [item("wi_reset", "Forgot password: reset emails", ("app/auth/reset.py",)),
             item("wi_sso", "Google sign-in: their accounts, who may keep a password",
                  ("app/auth/google.py",))]
    assert terms_mod.goal_terms("users who forgot their password") == ["user", "forgot", "password"]
    ranked = match.rank("users who forgot their password", items)
    assert ranked[0].item.id == "wi_reset"
    assert "their" not in ranked[1].matched_terms


def test_a_word_many_workitems_share_is_no_agreement() -> None:
    """'job' in four WorkItems puts none of them ahead in words, so a close meaning on one of
    them is not words and meaning agreeing (an off-topic goal stays unconfident)."""
    jobs = [item("wi_q", "Background job queue", ("app/jobs/queue.py",)),
            item("wi_o", "Orders job", ("app/orders/report.py",)),
            item("wi_u", "Usage job for billing", ("app/billing/usage.py",))]
    goal = "elasticsearch reindex job"
    ranked = match.rank(goal, jobs, {"wi_o": 0.43, "wi_q": 0.29, "wi_u": 0.05})
    assert match.outcome(ranked)[0] != "confident"


# --- stop 24: goals of the kinds users type that looma was not tuned on

WORK = [
    item("wi_rl", "Per-client rate limiting", ("app/api/ratelimit.py", "app/config.py")),
    item("wi_exp", "Invoice CSV export: the download thing", ("app/billing/export.py",
                                                              "app/config.py")),
    item("wi_jobs", "Background jobs on RQ with retries on failed jobs", ("app/jobs/queue.py",)),
    item("wi_wh", "Webhook delivery retries when an endpoint failed", ("app/webhooks/retry.py",)),
    item("wi_py", "Drop Python 3.8 from the CI matrix", ("pyproject.toml", "tox.ini")),
]


def test_generic_words_make_no_match() -> None:
    """'config' and 'thing' say a goal is about work, not which: a WorkItem that happens to
    contain them is no match, confident or side by side."""
    for goal in ("the thing with the config", "fix the config", "continue the work"):
        assert match.outcome(match.rank(goal, WORK)) == ("cold", []), goal
    # Beside a topic word they still rank: the topic decides.
    state, chosen = match.outcome(match.rank("the rate limit config", WORK))
    assert (state, chosen[0].item.id) == ("confident", "wi_rl")


def test_a_goal_naming_a_version_the_workitem_lacks_is_not_confident() -> None:
    ranked = match.rank("python 3.14 in the CI matrix", WORK)
    assert ranked[0].item.id == "wi_py" and ranked[0].lexical >= match.CONFIDENT_AT
    assert not ranked[0].names_specific and not match.lexical_decides(ranked)
    assert match.outcome(ranked)[0] != "confident"
    # The version it has: confident.
    assert match.outcome(match.rank("python 3.8 in the CI matrix", WORK))[0] == "confident"
    assert terms_mod.terms("python 3.14 src/app.py") == ["python", "3.14", "src", "app", "py"]


def test_a_goal_mostly_unknown_to_the_project_is_no_near_tie() -> None:
    """'retry failed card payments': 'retry' and 'fail' are in two WorkItems alike, 'card' and
    'payments' in none. The shared words are noise unless meaning clearly confirms one."""
    goal = "retry failed card payments"
    ranked = match.rank(goal, WORK)
    assert ranked[0].unknown >= match.UNKNOWN_AT
    assert match.outcome(ranked) == ("cold", [])
    vague = {"wi_jobs": 0.29, "wi_wh": 0.33, "wi_rl": 0.36}
    assert match.outcome(match.rank(goal, WORK, vague)) == ("cold", [])
    # Meaning close to one WorkItem at its confident line still carries the goal.
    clear = {"wi_jobs": 0.22, "wi_wh": 0.50, "wi_rl": 0.2}
    state, chosen = match.outcome(match.rank(goal, WORK, clear))
    assert (state, [m.item.id for m in chosen]) == ("confident", ["wi_wh"])


def test_workitems_sharing_the_named_file_are_side_by_side() -> None:
    """Two WorkItems changed app/config.py: both are the goal's matches, whatever the cosine
    of a path string says."""
    cos = {"wi_rl": 0.72, "wi_exp": 0.41, "wi_jobs": 0.2}
    state, chosen = match.outcome(match.rank("app/config.py", WORK, cos))
    assert state == "ambiguous" and {m.item.id for m in chosen} == {"wi_rl", "wi_exp"}


def test_the_stemmer_keeps_words_that_only_look_inflected() -> None:
    assert [terms_mod.stem(w) for w in ("speed", "need", "class", "process", "classes")] == \
        ["speed", "need", "class", "process", "class"]
    assert terms_mod.goal_terms("continue where I left off on the french stuff") == ["french"]
    assert terms_mod.goal_terms("where was I with the download thing") == ["download"]


# --- stop 28: holdout3 (flask-sqlalchemy)

def test_a_word_in_capitals_names_a_thing_not_work_in_general() -> None:
    """'update' says a goal is about work; 'UPDATE' is the SQL statement. With it a topic word,
    the one WorkItem whose request ran an update against the wrong database leads by words,
    and meaning (near it alone) confirms; in lower case the goal stays cold. A two-letter
    abbreviation ('PR') is how people write it anyway: still generic."""
    from dataclasses import replace

    items = [replace(item("wi_bind", "Statements miss the bind key", ("src/session.py",)),
                     prompts=("db.session.execute(update(Audit)) runs against the default "
                              "database",)),
             item("wi_ex", "Update examples to the new style", ("examples/app.py",)),
             item("wi_ver", "Update the sqlalchemy version", ("pyproject.toml",)),
             item("wi_pg", "Pagination gets the wrong page size", ("src/pagination.py",))]
    cos = {"wi_bind": 0.37, "wi_ex": 0.22, "wi_ver": 0.28, "wi_pg": 0.2}
    state, chosen = match.outcome(match.rank("bulk UPDATE goes to the wrong database", items,
                                             cos))
    assert (state, [m.item.id for m in chosen]) == ("confident", ["wi_bind"])
    assert match.outcome(match.rank("bulk update goes to the wrong database", items, cos)) \
        == ("cold", [])
    assert match.rank("the PR for the examples", items)[0].unknown == \
        match.rank("the pr for the examples", items)[0].unknown


def test_of_workitems_sharing_the_named_file_the_one_named_after_it_is_the_match() -> None:
    """A typing sweep touched pagination.py among a dozen modules; the pagination fix is named
    after it: that one is the goal's, without loading a model. Neither named after the file:
    side by side, as before."""
    items = [item("wi_hints", "Fix a test that cannot run on windows",
                  ("src/pkg/pagination.py", "src/pkg/query.py", "src/pkg/model.py")),
             item("wi_page", "Pagination per_page gets the wrong value after next()",
                  ("src/pkg/pagination.py", "tests/test_pagination.py")),
             item("wi_other", "Update examples", ("examples/app.py",))]
    ranked = match.rank("src/pkg/pagination.py", items)
    assert match.lexical_decides(ranked)
    state, chosen = match.outcome(ranked)
    assert (state, [m.item.id for m in chosen]) == ("confident", ["wi_page"])
    more = [*items, item("wi_m", "Table names from the class name", ("src/pkg/model.py",))]
    state, chosen = match.outcome(match.rank("src/pkg/model.py", more))
    assert state == "ambiguous" and {m.item.id for m in chosen} == {"wi_hints", "wi_m"}


def test_meaning_near_none_of_them_does_not_break_a_words_near_tie() -> None:
    """'version' is in one WorkItem, 'attribute' in three, 'deprecate' in none; meaning is
    under its cold line for all. Discounting the 'attribute' matches because meaning does not
    support them would leave the 'version' one confidently ahead on a word it is no closer
    to: cold. Once meaning supports the lead, it confirms it."""
    from dataclasses import replace

    def it(id: str, title: str, prompt: str) -> ItemRecord:
        return replace(item(id, title, (f"src/{id}.py",)), prompts=(prompt,))

    items = [it("wi_hints", "Pyright fails on the lowest version", "pyright on the lowest"),
             it("wi_404", "Typed get_or_404", "the model attribute is missing"),
             it("wi_base", "Class attribute of the declarative base", "a class attribute"),
             it("wi_ex", "Update examples", "set the attribute in the app")]
    goal = "deprecate the __version__ attribute"
    cos = {"wi_hints": 0.25, "wi_404": 0.24, "wi_base": 0.29, "wi_ex": 0.2}
    assert match.outcome(match.rank(goal, items, cos)) == ("cold", [])
    state, chosen = match.outcome(match.rank(goal, items, dict(cos, wi_hints=0.33)))
    assert (state, [m.item.id for m in chosen]) == ("confident", ["wi_hints"])
