"""A WorkItem's kind (feature | bugfix | refactor | migration | investigation), judged from all
of its evidence: requests, linked commits, branch name and changelog fragments.

One regex on one sentence misreads untuned data ("Stream invoice CSV export" is no migration;
one "Fix ..." commit does not make a feature a bugfix). So each source of evidence votes with
a weight that says how deliberately somebody classified the work there:

| source | weight | why |
|---|---|---|
| a changelog fragment's type (`changelog.d/123.bugfix.md`) | 4 | the author's own classification, written for the release notes |
| the branch's type prefix (`fix/`, `feature/`, `migrate/`) | 3 | chosen on purpose when the work started |
| the opening request naming a kind ("... is broken") | 3 | what was asked for, in the asker's words |
| the creating commit's conventional type (`fix:`, `feat:`) | 2.5 | an explicit label on the commit that started the work |
| the opening request asking for something ("we need", "add ...") | 2 | a capability is asked for |
| the creating commit's subject ("Fix ...", "Add ...", "Replace X with Y") | 1.5 | how the work was first described in history |
| the work changed only the project's tooling (CI workflows, tox/nox, pre-commit, manifests, lint and type-checker configuration) | 2 | upkeep of the tooling rather than its code is a chore by definition |
| words of an untyped branch name (`fix-1-byte`) | 1.5 | a name, not a label |
| the opening request naming nothing | 1 | feature is the unmarked kind |
| later sessions' opening requests | 0.5 each, at most 1 per kind | follow-ups ("bug from QA: ...") rarely change what the work is |

Some words that look like cues name the work's topic instead: the name of a module the work
changed (`rich/traceback.py`: "rich's traceback only highlights the line"), errors as what the
work shows ("Show errors on multiple instances", "report fine grained error locations") and a
branch name's "errors" (`instance-errors`); they vote for no kind.

The kind with the highest total wins. Later commits (review fixes, tests, follow-ups) are not
in the total: they only break a tie of it (typed ones count 2, plain ones 1), so no ordinary
commit flips a kind. A tie left after that goes to the opening request's kind, then the
creating commit's, then the order of KINDS. Work that edited nothing and links no commit is an
investigation whatever was said about it. Every input is evidence every clone records in the
ledger (sessions' opening requests and branches, edited files, linked commits' subjects and
files), so clones holding the same ops judge the same kind (ledger/derive.py).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from looma_git.pipeline.kind_files import (
    fragment_kinds,
    module_masked,
    module_names,
    tooling_only,
)

KINDS = ("bugfix", "migration", "refactor", "investigation", "chore", "feature")

# Whole words only ("export" is not "port", "prefix" is not "fix"); within one text the cue
# that comes first decides.
KIND_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bugfix", re.compile(
        r"\b(?:fix(?:es|ed|ing)?|bugs?|broken|crash(?:es|ed|ing)?|errors?|regressions?|fails?|"
        r"failing|expires?|race|wrong|incorrect|hotfix|traceback|segfaults?|"
        r"hang(?:s|ing)?(?!\s+(?:on|tight|out|around))|"  # not "hang on, first ..."
        r"leak(?:s|ing)?|tim(?:es|ed|ing)\s+out|stopped\s+working|no\s+longer\s+works?|"
        r"(?:someone|users?|customers?|people)\s+reported|"
        # an arithmetic overflow, not a UI's "overflow menu"
        r"(?:over|under)flow(?:s|ed|ing|error)|(?:integer|buffer|stack|arithmetic|numeric)\s+"
        r"(?:over|under)flow|(?:over|under)flow\s+(?:error|warning|encountered))\b"
        # "doesn't work", "don't work", "is not working"
        r"|(?:n't|\bnot)\s+work(?:s|ing)?\b"
        # A bug report as people write one: what it gives, then what it should give
        # ("f(x) gives '1000.0 ZB', should be '1.0 YB'"). Not "X instead of Y", which as
        # often asks for a capability ("prints a point instead of the locale's comma").
        r"|\b(?:gives|returns|prints|shows|outputs|displays|produces|yields|renders)\b"
        r"(?:[^.!?\n]|[.!?](?!\s)){0,80}?(?:[,;]|\bbut)\s*(?:it\s+)?should\s+(?:be|give|"
        r"return|print|show|read)\b", re.I)),
    ("migration", re.compile(
        r"\b(?:migrat(?:e|es|ed|ing|ion|ions)|upgrad(?:e|es|ed|ing)|port(?:ed|ing)?\s+"
        r"(?:to|from|over)|move\s+\w+\s+(?:to|from)\s+\w+|"
        r"switch(?:es|ed|ing)?\s+(?:\w+\s+){0,3}from\s+\S+\s+to)\b", re.I)),
    ("refactor", re.compile(
        r"\b(?:refactor\w*|rename|clean(?:\s|-)?up|restructure|extract|simplify|split\s+up|"
        r"reorgani[sz]e\w*|decouple|dedup\w*|tidy(?:\s+up)?|dead\s+code|"
        # Fowler's "Replace X with Y" family of refactorings.
        r"replac(?:e|es|ed|ing)\b[^;:!?]{0,60}?\bwith|"
        # Performance work keeps behaviour: of the kinds it is a refactor.
        # ("a performance dashboard" is a feature: performance counts only when improved).
        r"faster|speed(?:s|ed|ing)?\s+up|speedup|optimi[sz]\w*|importtime|"
        r"(?:improv\w*|better|boost\w*)\s+(?:the\s+|its\s+)?performance|"
        r"(?:startup|start-up|import|load(?:ing)?)\s+(?:time|speed)|"
        # "defer the import", "Defer fractions.Fraction import": what is imported may sit between.
        r"lazy(?:-|\s)?(?:load|import)\w*|defer(?:s|red|ring)?\s+(?:[\w.]+\s+){0,3}?import\w*)\b",
        re.I)),
    ("investigation", re.compile(
        r"\b(?:investigate|investigating|why\s+(?:does|is|do|are)|figure\s+out|look\s+into|"
        r"profil(?:e|ing)|slow|diagnos\w+|root\s+cause|find\s+out\s+(?:why|what|whether|how)|"
        r"understand\s+(?:why|how)|what\s+causes)\b", re.I)),
    # Upkeep of the project's tooling rather than its code, asked for as such: the CI matrix,
    # packaging classifiers, version bumps, the bots that propose them.
    ("chore", re.compile(
        r"\b(?:bump(?:s|ed|ing)?|test\s+matrix|ci\s+matrix|classifiers?|pre-commit|dependabot|"
        r"renovate)\b", re.I)),
)

# Asking for a capability: counts only where no kind above is named ("we need to fix ..." is
# a bugfix, "add a regression test for the crash" too).
_FEATURE_LEAD = re.compile(
    r"^\W*(?:add(?:s|ed|ing)?|implement\w*|support|introduce\w*|allow\w*|enable\w*|build|"
    r"create|expose|provide|let\s+(?:users|people|customers))\b", re.I)
_FEATURE_ASK = re.compile(
    r"\b(?:feature\s+request|new\s+feature|add\s+support|we\s+need|i\s+(?:want|need)|"
    r"(?:would|'d)\s+like|wants?\s+to|should\s+be\s+able\s+to|would\s+be\s+nice)\b", re.I)

# What the request is for, not what it is: a purpose or reason clause ("... so bad values
# fail at startup", "... because it breaks") names no kind of work. After a comma, "so" says
# what follows from it ("it aborts instead of returning None, so the Optional is wrong"):
# that consequence is read.
_PURPOSE = re.compile(r"(?:[,;]?\s+\bso\s+that|(?<![,;])\s+\bso|[,;]?\s+\b(?:because|otherwise|"
                      r"or\s+else|in\s+case|since))\s+", re.I)

# An aside asked on the way ("..., and tidy the record tests while you're there") is not the
# work the request is for: it names no kind of it.
_ASIDE = re.compile(r"(?:[,;]|\band\b)[^,.;!?]*?\bwhile\s+you(?:'re|\s+are)\s+(?:there|at\s+it)"
                    r"\b|\bwhile\s+you(?:'re|\s+are)\s+(?:there|at\s+it)\b[^,.;!?]*", re.I)

# Quoted code (`pipx upgrade --install`, ``fix_rounding()``) names a command or an identifier,
# not the kind of work: "`pipx upgrade` ignores the version" is no migration.
_CODE_SPAN = re.compile(r"(`+)[^`\n]+?\1")

_LEAD = re.compile(
    r"^(?:hi|hey|hello|ok(?:ay)?|so|now|please|pls|thanks|can you|could you|would you|"
    r"i want you to|i'd like you to|i need you to|let's|lets|we need to|we should|help me|"
    r"go ahead and|next)\b[\s,:.!]*", re.I)

# Conventional-commit and numpy-style types: an explicit label; a neutral type (docs, test,
# chore, ci ...) says the commit implements none of the kinds.
_TYPED = re.compile(r"^\s*(?P<t>[A-Za-z]+)(?:\([^)]*\))?!?:\s*")
_TYPE_KIND = {"feat": "feature", "feature": "feature", "enh": "feature",
              "fix": "bugfix", "bugfix": "bugfix", "hotfix": "bugfix", "bug": "bugfix",
              "refactor": "refactor", "perf": "refactor", "maint": "refactor",
              "ref": "refactor"}
_NEUTRAL_TYPES = frozenset({"docs", "doc", "test", "tests", "chore", "build", "ci", "style",
                            "revert", "release", "deps", "tst", "sty", "rel", "dev"})

# Branch type prefixes (`fix/...`, `feature/...`).
_BRANCH_KIND = {"feat": "feature", "feature": "feature", "features": "feature",
                "enhancement": "feature", "fix": "bugfix", "bugfix": "bugfix", "bug": "bugfix",
                "hotfix": "bugfix", "fixes": "bugfix", "refactor": "refactor",
                "refactoring": "refactor", "cleanup": "refactor", "perf": "refactor",
                "migrate": "migration", "migration": "migration", "upgrade": "migration",
                "port": "migration", "spike": "investigation", "investigate": "investigation",
                "investigation": "investigation", "research": "investigation"}
TRUNK = frozenset({"main", "master", "trunk", "develop", "HEAD", ""})

W_FRAGMENT, W_BRANCH_TYPE, W_REQUEST = 4.0, 3.0, 3.0
W_FIRST_TYPED, W_REQUEST_ASK, W_FIRST_COMMIT, W_BRANCH_WORDS = 2.5, 2.0, 1.5, 1.5
W_REQUEST_PLAIN = 1.0
W_TOOLING = 2.0
W_LATER_SESSION, CAP_LATER_SESSIONS = 0.5, 1.0
W_LATER_TYPED, W_LATER_PLAIN = 2, 1  # tie-breaking votes only


# Errors as what the work shows ("Show errors on multiple instances", "report fine grained
# error locations", "a clearer error message"): the capability asked for, not a bug report.
_SHOWN_ERRORS = re.compile(
    r"\b(?:show(?:s|ing)?|report(?:s|ing)?|display(?:s|ing)?|clear(?:er)?|better|helpful|"
    r"friendl(?:y|ier)|nicer|meaningful|descriptive)\s+(?:[\w-]+\s+){0,2}?errors?\b", re.I)


_ERRORS = re.compile(r"\berrors?\b", re.I)


def _sentences(text: str) -> list[str]:
    """The request's sentences, quoted code removed and purpose clauses cut off."""
    text = _ASIDE.sub(" ", _CODE_SPAN.sub(" ", text or ""))
    if "rror" in text:
        text = _SHOWN_ERRORS.sub(" ", text)
    out = []
    for s in re.split(r"(?<=[.!?])\s|\n", text.strip()):
        cut = _PURPOSE.search(s)
        out.append(s[:cut.start()] if cut and len(s[:cut.start()].split()) >= 2 else s)
    return [s for s in out if s.strip()]


# Every fold and pass judges a WorkItem's texts again (a cold ingest's, 3-4 times): pure.
@functools.lru_cache(maxsize=8192)
def cue_of(text: str) -> str | None:
    """The kind the text names (its first sentence first, then the rest), None if none."""
    sentences = _sentences(text)
    for part in (sentences[0] if sentences else "", " ".join(sentences)):
        found = [(m.start(), i, kind) for i, (kind, rule) in enumerate(KIND_RULES)
                 if (m := rule.search(part))]
        if found:
            return min(found)[2]
    return None


# A request for an inquiry, not for a change: "find out why ...", "only investigate for now,
# change nothing", "only look, change nothing: what does X match".
_INQUIRY = re.compile(
    r"\b(?:investigat\w*|find\s+out|figure\s+out|work\s+out\s+(?:why|how|what|where)|"
    r"look\s+into|track\s+down|diagnos\w+|root\s+cause|understand\s+(?:why|how|what)|"
    r"what\s+causes|(?:only|just)\s+look|change\s+nothing|touch\s+nothing|"
    r"(?:don't|do\s+not)\s+(?:change|touch|edit)\s+anything|without\s+changing)\b", re.I)


def asks_inquiry(text: str) -> bool:
    """The request asks to investigate ("find out why", "change nothing"), not to change."""
    return bool(_INQUIRY.search(_CODE_SPAN.sub(" ", text or "")))


@functools.lru_cache(maxsize=8192)
def asks_for_feature(text: str) -> bool:
    """The text asks for a capability ("Add ...", "we need ...") - read where cue_of is None."""
    sentences = _sentences(text)
    if not sentences:
        return False
    first = sentences[0]
    prev = None
    while prev != first:
        prev, first = first, _LEAD.sub("", first).strip()
    return bool(_FEATURE_LEAD.match(first) or any(_FEATURE_ASK.search(s) for s in sentences))


def kind_from_text(text: str) -> str:
    """feature | bugfix | refactor | migration | investigation named by one text: the cue that
    comes first decides ("Refactor config: migrate settings ..." is a refactor), a purpose or
    reason clause is cut off first, quoted code never counts. No cue: feature."""
    return cue_of(text) or "feature"


def commit_kind(subject: str) -> tuple[str | None, bool]:
    """(kind, typed) a commit subject says: an explicit conventional type, else its words
    ("Add ..." asks for a feature only where no other kind is named)."""
    m = _TYPED.match(subject or "")
    if m:
        t = m.group("t").lower()
        if t in _TYPE_KIND:
            return _TYPE_KIND[t], True
        if t in _NEUTRAL_TYPES:
            return None, True
    kind = cue_of(subject)
    if kind is None and _FEATURE_LEAD.match(_CODE_SPAN.sub(" ", subject or "")):
        kind = "feature"
    return kind, False


def branch_kind(branch: str) -> tuple[str | None, bool]:
    """(kind, typed) a branch name says: its `type/` prefix, else its words."""
    name = branch.strip().removeprefix("refs/heads/")
    if "/" in name:
        head = name.split("/", 1)[0].lower()
        if head in _BRANCH_KIND:
            return _BRANCH_KIND[head], True
    words = re.sub(r"[/_\-]+", " ", name)
    first = words.split()[0].lower() if words.split() else ""
    # A name is a noun phrase of the topic: its "errors" are what the work is about
    # (`instance-errors`, `fine-grained-errors`: error messages, error locations), not a bug.
    return (_BRANCH_KIND.get(first) or cue_of(_ERRORS.sub(" ", words))), False


def main_branch(branches: Iterable[str | None]) -> str:
    """The branch most of the evidence is on (ties: the smallest name); trunk never counts."""
    counts = Counter(b for b in branches if b and b not in TRUNK)
    return min(counts, key=lambda b: (-counts[b], b)) if counts else ""


def kind_scores(*, prompts: Sequence[str] = (), subjects: Sequence[str] = (),
                branches: Iterable[str | None] = (), files: Iterable[str] = ()
                ) -> tuple[dict[str, float], dict[str, int], list[str]]:
    """Each kind's weight of evidence, the later commits' tie-breaking votes, and the last
    tie order (the opening request's kind first).

    `prompts`: the sessions' opening requests, earliest first; `subjects`: the implementing
    commits' subjects (no chores), the commit that created the work first."""
    score = dict.fromkeys(KINDS, 0.0)
    prefer: list[str] = []
    files = list(files)
    if modules := module_names(files):
        prompts = [module_masked(p, modules) for p in prompts]
        subjects = [module_masked(x, modules) for x in subjects]
    for frag in fragment_kinds(files):
        score[frag] += W_FRAGMENT
    if tooling_only(files):
        score["chore"] += W_TOOLING
    branch = main_branch(branches)
    if branch:
        named, typed = branch_kind(branch)
        if named:
            score[named] += W_BRANCH_TYPE if typed else W_BRANCH_WORDS
    if prompts:
        asked = cue_of(prompts[0])
        if asked:
            score[asked] += W_REQUEST
        else:
            asked = "feature"
            score[asked] += W_REQUEST_ASK if asks_for_feature(prompts[0]) else W_REQUEST_PLAIN
        prefer.append(asked)
        later: dict[str, float] = {}
        for p in prompts[1:]:
            if k := cue_of(p) or ("feature" if asks_for_feature(p) else None):
                later[k] = later.get(k, 0.0) + W_LATER_SESSION
        for k, v in later.items():
            score[k] += min(v, CAP_LATER_SESSIONS)
    if subjects:
        first, typed = commit_kind(subjects[0])
        if first:
            score[first] += W_FIRST_TYPED if typed else W_FIRST_COMMIT
            prefer.append(first)
    votes = dict.fromkeys(KINDS, 0)
    for s in subjects[1:]:
        k2, typed = commit_kind(s)
        if k2:
            votes[k2] += W_LATER_TYPED if typed else W_LATER_PLAIN
    return score, votes, prefer + [k for k in KINDS if k not in prefer]


def judge_kind(*, prompts: Sequence[str] = (), subjects: Sequence[str] = (),
               branches: Iterable[str | None] = (), files: Iterable[str] = (),
               changed: bool = True) -> str | None:
    """The WorkItem's kind from all its evidence (module docstring); None when there is none
    at all (then the caller keeps what it has). `changed`: it edited files or links commits."""
    key = (tuple(prompts), tuple(subjects), tuple(branches), tuple(files), changed)
    try:
        hash(key)
    except TypeError:  # (a malformed op's field: judged, not remembered)
        return _judged.__wrapped__(*key)
    return _judged(*key)


@functools.lru_cache(maxsize=4096)
def _judged(prompts: tuple[str, ...], subjects: tuple[str, ...],
            branches: tuple[str | None, ...], files: tuple[str, ...],
            changed: bool) -> str | None:
    score, votes, order = kind_scores(prompts=prompts, subjects=subjects, branches=branches,
                                      files=files)
    if not changed and (prompts or subjects):
        return "investigation"  # work that changed nothing is an inquiry, whatever it says
    if score["investigation"] > 0:
        # ...and an inquiry that led to a change ("find out why X says no", then commits)
        # diagnosed what the change fixes: its weight is the bugfix's.
        score["bugfix"] += score["investigation"]
        score["investigation"] = 0.0
        if order.index("investigation") < order.index("bugfix"):
            order.remove("bugfix")
            order.insert(order.index("investigation"), "bugfix")
    if max(score.values()) <= 0:
        return None
    return min(order, key=lambda k: (-score[k], -votes[k], order.index(k)))
