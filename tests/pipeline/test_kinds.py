"""A WorkItem's kind judged over all its evidence (pipeline/kinds.py), and in the ledger fold."""

from __future__ import annotations

import itertools

import pytest

from looma_git.ledger.fold import fold
from looma_git.ledger.ops import Actor, Op, OpDraft, build_op
from looma_git.pipeline.kinds import (
    branch_kind,
    commit_kind,
    cue_of,
    fragment_kinds,
    judge_kind,
    kind_from_text,
)

SYSTEM = Actor(kind="system", name="looma", email="looma@localhost")


@pytest.mark.parametrize(("text", "kind"), [
    # Requests as people type them (none of these from a benchmark).
    ("uploads over 10MB don't work behind the nginx proxy, they just spin", "bugfix"),
    ("since yesterday the nightly sync is not working at all", "bugfix"),
    ("the worker hangs forever when redis restarts", "bugfix"),
    ("a customer reported that the PDF invoices show last month's address", "bugfix"),
    ("the search endpoint times out for tenants with more than 50k rows", "bugfix"),
    ("cold start of the CLI is 800ms. make it faster, most of it is imports", "refactor"),
    ("replace the hand-rolled retry loop in sync.py with tenacity", "refactor"),
    ("extract the pricing rules out of checkout.py into their own module", "refactor"),
    ("switch the task queue from celery to rq, ops wants something simpler", "migration"),
    ("upgrade us to SQLAlchemy 2 and fix whatever breaks", "migration"),
    ("find out why the nightly job hangs on sundays, don't change anything", "investigation"),
    ("what causes the memory growth in the api pods?", "investigation"),
    ("we need a dark mode toggle in the settings page", "feature"),
    ("let users export their saved searches as CSV", "feature"),
    # A bug report without a bug word: what it does, then what it should do.
    ("parse_duration('90m') gives '1 hour', should be '1.5 hours'", "bugfix"),
    ("`status` prints nothing but should print the current branch", "bugfix"),
    ("the counter overflows at 2**31 and shows negative ids", "bugfix"),
    ("defer the yaml import until a config file is read", "refactor"),
    # Words that only look like a cue.
    ("hang on, first add a --verbose flag to the sync command", "feature"),
    ("add a performance dashboard for the API team", "feature"),
    ("add a time out option to the HTTP client", "feature"),
    ("export the report as CSV too", "feature"),
    ("add an overflow menu to the toolbar", "feature"),  # a UI's overflow, no arithmetic
    ("show the expected delivery date on the order page", "feature"),
    ("add a flag so that the export returns JSON instead of CSV", "feature"),
    ("under de_DE the total prints 1.5 with a point instead of a comma", "feature"),
    # Errors as what the work shows: the capability asked for.
    ("show a clear error when the config file is missing", "feature"),
    ("report fine grained error locations in the log view", "feature"),
    ("the import fails with an error on python 3.8", "bugfix"),
    # A consequence after ", so" is what the bug does; a purpose clause names no kind.
    ("the helper aborts instead of returning None, so its Optional annotation is wrong",
     "bugfix"),
    ("add a --strict flag so bad config values fail at startup", "feature"),
    # A purpose clause and quoted code name no kind.
    ("Add a --strict flag so that bad config values fail at startup", "feature"),
    ("`migrate_db` should print what it would do with --dry-run", "feature"),
])
def test_a_request_names_its_kind(text: str, kind: str) -> None:
    assert kind_from_text(text) == kind


def test_the_first_cue_decides_within_one_text() -> None:
    assert cue_of("Refactor config: migrate settings to pydantic") == "refactor"
    assert cue_of("migrate settings to pydantic, then refactor the loader") == "migration"
    assert cue_of("make the settings page prettier") is None


@pytest.mark.parametrize(("subject", "kind", "typed"), [
    ("fix(cli): honour --quiet in `tool list`", "bugfix", True),
    ("feat: add a --json flag to status", "feature", True),
    ("perf(db): cache the parsed schema", "refactor", True),
    ("refactor!: drop the legacy loader", "refactor", True),
    ("docs: fix typo in README", None, True),  # a neutral type: no kind, whatever it says
    ("test: reproduce the crash on empty input", None, True),
    ("BUG: handle NaN in the rolling mean", "bugfix", True),
    ("ENH: accept a list of axes", "feature", True),
    ("Add dark mode toggle", "feature", False),
    ("Add a regression test for the crash on empty input", "bugfix", False),  # named wins
    ("Fix off-by-one in pagination cursor", "bugfix", False),
    ("Replace bare Exception with ValueError in parse()", "refactor", False),
    ("Defer yaml.safe_load import", "refactor", False),  # what is deferred sits between
    ("Make the burst size configurable per plan", None, False),  # an ordinary commit
])
def test_a_commit_subject(subject: str, kind: str | None, typed: bool) -> None:
    assert commit_kind(subject) == (kind, typed)


@pytest.mark.parametrize(("branch", "kind", "typed"), [
    ("fix/login-redirect-loop", "bugfix", True),
    ("feature/dark-mode", "feature", True),
    ("migrate/sqlalchemy-2", "migration", True),
    ("refactor/split-checkout", "refactor", True),
    ("spike/grpc-transport", "investigation", True),
    ("hotfix-2.3.1", "bugfix", False),
    ("fix-empty-cart-crash", "bugfix", False),
    ("jane/dark-mode", None, False),
    ("dark-mode", None, False),
    ("export-csv", None, False),  # "export" is not "port"
    ("instance-errors", None, False),  # a name's "errors" is its topic (error messages)
    ("fix-instance-errors", "bugfix", False),
])
def test_a_branch_name(branch: str, kind: str | None, typed: bool) -> None:
    assert branch_kind(branch) == (kind, typed)


def test_changelog_fragments_name_their_type() -> None:
    assert fragment_kinds(["changelog.d/1234.bugfix.md", "src/app.py"]) == {"bugfix"}
    assert fragment_kinds(["newsfragments/77.feature.rst"]) == {"feature"}
    assert fragment_kinds(["changes/+orphan.fix.1.md"]) == {"bugfix"}
    assert fragment_kinds([".changes/unreleased/Fixed-20240105-101010.yaml"]) == {"bugfix"}
    assert fragment_kinds([".changes/unreleased/Added-20240105-101010.yaml"]) == {"feature"}
    # A doc/misc fragment, a changelog itself and ordinary files name no kind.
    assert fragment_kinds(["changelog.d/9.doc.md", "CHANGELOG.md", "docs/changes.md",
                           "src/fix.py", "news/README.txt"]) == set()


PLAIN = "make `list --short` print one package per line"  # names no kind


def test_explicit_classifications_outweigh_an_unmarked_request() -> None:
    assert judge_kind(prompts=[PLAIN]) == "feature"
    assert judge_kind(prompts=[PLAIN], files=["changelog.d/812.bugfix.md"]) == "bugfix"
    assert judge_kind(prompts=[PLAIN], branches=["fix/short-list", None]) == "bugfix"
    assert judge_kind(prompts=[PLAIN], subjects=["fix: one package per line in --short"]
                      ) == "bugfix"
    # ... but an untyped branch word or a plain "Fix ..." is weaker than a request that
    # names its kind.
    asked = "the --short listing is broken since 1.4, it prints everything on one line"
    assert judge_kind(prompts=[asked], subjects=["Add a --short layout test"],
                      branches=["short-list-layout"]) == "bugfix"
    # A fragment is the author's own word and beats a request cue.
    assert judge_kind(prompts=[asked], files=["changelog.d/812.feature.md"]) == "feature"


def test_follow_up_sessions_do_not_turn_a_feature_into_a_bugfix() -> None:
    prompts = ["we need google sign-in on the login page",
               "bug from QA: the google button shows twice on mobile",
               "google login crashes for users without a verified email",
               "the callback fails when the state cookie is missing"]
    assert judge_kind(prompts=prompts, subjects=["Add Google sign-in"]) == "feature"
    # Without its creating commit and with a request that asks for nothing, follow-ups still
    # cannot outvote it.
    assert judge_kind(prompts=[PLAIN, *prompts[1:]]) == "feature"


LATER = ["fix: guard against an empty header", "Fix the CSV header", "feat: add a --since flag",
         "Add progress output", "refactor: split the writer", "Rename the helper",
         "Migrate the settings to pydantic", "perf: stream rows", "Address review comments",
         "Make the burst size configurable"]


@pytest.mark.parametrize("evidence", [
    {"prompts": [PLAIN]},
    {"prompts": [PLAIN], "subjects": ["Stream invoice CSV export"]},
    {"prompts": ["the webhook retries are broken"], "subjects": ["Back off webhook retries"]},
    {"prompts": ["Refactor config: migrate settings to pydantic"],
     "subjects": ["Migrate settings to pydantic BaseSettings"]},
    {"prompts": [PLAIN], "subjects": ["Replace the retry loop with tenacity"]},
    {"prompts": ["I want background jobs on a real queue"],
     "subjects": ["Add a broker and worker entrypoint"], "branches": ["migrate/jobs"]},
])
def test_no_single_later_commit_flips_a_kind(evidence: dict) -> None:
    before = judge_kind(**evidence)
    subjects = evidence.get("subjects", ["Initial work"])
    for later in LATER:
        after = judge_kind(**{**evidence, "subjects": [*subjects, later]})
        assert after == before, (later, before, after)


def test_work_that_changed_nothing_is_an_investigation() -> None:
    assert judge_kind(prompts=["the webhook retries are broken, why?"], changed=False
                      ) == "investigation"
    assert judge_kind(prompts=["walk me through how auth works"], changed=False
                      ) == "investigation"
    assert judge_kind() is None  # no evidence at all: the caller keeps what it has


# --- in the ledger fold: every clone derives the same kind from the same ops -----------------

def _op(draft: OpDraft, lamport: int, clone: str = "c_a") -> Op:
    return build_op(draft, lamport=lamport, ts="2026-04-01T00:00:00Z", actor=SYSTEM, clone=clone)


def _obs(sid: str, first: str, files: dict[str, int], prompt: str, branch: str | None = None,
         agent: str = "claude-code") -> dict:
    return {"agent": agent, "id": sid, "first": first, "last": first, "days": [first[:10]],
            "files": files, "windows": 1, "branch": branch, "prompt": prompt, "readonly": False}


def _link(sha: str, wid: str, subject: str, ts: str, files: list[str]) -> OpDraft:
    return OpDraft("commit.link", {"type": "commit", "id": sha},
                   {"workitem": wid, "confidence": 0.8, "by": "hook", "subject": subject,
                    "ts": ts, "files": files})


def test_the_fold_reads_branch_fragment_and_commits_in_any_order() -> None:
    create = _op(OpDraft("workitem.create", {"type": "workitem"}, {
        "title": "x", "kind": "feature", "confidence": 0.9, "observe": {"sessions": [
            _obs("s1", "2026-04-01T09:00:00Z", {"src/cli/list.py": 2}, PLAIN,
                 branch="fix/short-list")]}}), 1)
    wid = "wi_" + create.id[:10]
    ops = [create,
           _op(OpDraft("workitem.update", {"type": "workitem", "id": wid}, {"observe": {
               "sessions": [_obs("s2", "2026-04-02T09:00:00Z", {"src/cli/list.py": 1},
                                 "add a test for the short listing", agent="codex")]}}),
               2, clone="c_b"),
           _op(_link("a" * 40, wid, "One package per line in --short",
                     "2026-04-01T10:00:00Z", ["src/cli/list.py", "changelog.d/812.bugfix.md"]),
               3),
           _op(_link("b" * 40, wid, "feat: add --short to list --help",
                     "2026-04-02T10:00:00Z", ["src/cli/list.py"]), 4, clone="c_b")]
    kinds = {fold(list(perm)).workitems[wid].kind for perm in itertools.permutations(ops)}
    assert kinds == {"bugfix"}  # branch + fragment; the later feat: commit does not flip it


def test_work_that_changed_only_the_tooling_is_a_chore_unless_asked_as_another_kind() -> None:
    ci = [".github/workflows/test.yml", "tox.ini", ".pre-commit-config.yaml", "CHANGELOG.md"]
    plain = "CI spends most of its time creating virtualenvs. switch tox to tox-uv"
    assert judge_kind(prompts=[plain], files=ci) == "chore"
    # Code, tests or docs among the files: not upkeep of the tooling alone.
    assert judge_kind(prompts=[plain], files=[*ci, "src/pkg/core.py"]) == "feature"
    assert judge_kind(prompts=[plain], files=[*ci, "docs/install.md"]) == "feature"
    # A request that names its kind outweighs the files ("the release build is broken").
    assert judge_kind(prompts=["the wheel has no translations, the release build is broken"],
                      files=[".github/workflows/release.yml"]) == "bugfix"
    assert judge_kind(prompts=["migrate the packaging from setup.py to pyproject.toml"],
                      files=["setup.py", "pyproject.toml", "setup.cfg"]) == "migration"


def test_a_changed_modules_name_is_the_topic_not_a_cue() -> None:
    """In a project with `rich/traceback.py`, "rich's traceback only highlights the line" is
    about that module: no bug report. The same words elsewhere still name a bug."""
    prompt = ("python's own tracebacks underline the exact sub-expression that failed. rich's "
              "traceback only highlights the line. work out how to get the positions")
    files = ["rich/traceback.py", "rich/syntax.py", "CHANGELOG.md"]
    assert judge_kind(prompts=[prompt], files=files) == "feature"
    assert judge_kind(prompts=[prompt], files=["rich/console.py"]) == "bugfix"
