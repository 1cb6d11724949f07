"""Small text utilities shared by the refinery: tokens, stopwords, titles."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Generic, TypeVar

# Kind logic lives in pipeline/kinds.py; re-exported for callers of the old place.
from looma_git.pipeline.kinds import KIND_RULES as KIND_RULES
from looma_git.pipeline.kinds import kind_from_text as kind_from_text

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{2,}")

STOPWORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing done don down during each few for from
further get got had has have having he her here hers him his how i if in into is it its itself
just let lets like make me might more most must my need no nor not now of off on once only or
other our ours out over own please same she should so some such than that the their theirs them
then there these they this those through to too under until up us use used using very want was
we were what when where which while who whom why will with would you your yours yes okay ok
sure thanks thank great good file files code change changes update updated add added now new
run running test tests check looks look see think going also can't won't it's i'll we'll let's
implement implementing implemented fix fixed fixing work working task first next still then
should could would one two three via into onto within without able done way right maybe
""".split())


def tokens(text: str) -> list[str]:
    """Lower-cased content words (stopwords removed, trailing plural 's' folded)."""
    return [w for m in _WORD.findall(text) if (w := _content_word(m))]


@functools.lru_cache(maxsize=1 << 16)
def _content_word(raw: str) -> str:
    """One word as `tokens` keeps it ("" when dropped); words repeat a lot, so cached."""
    w = raw.lower().strip("-_")
    if len(w) < 3 or w in STOPWORDS:
        return ""
    if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w


T = TypeVar("T")


class TextMemo(Generic[T]):
    """`fn(text, *rest)` remembered for short texts: transcripts say the same things again and
    again (an agent's stock replies, a retried prompt; the benchmark history's 100k assistant
    messages have 2,300 texts), and what is derived from a text depends on it alone. Bounded:
    a text over `longest` characters is computed every time, and the memo is emptied once it
    holds `size` texts (each process, a forked worker too, has its own)."""

    def __init__(self, fn: Callable[..., T], size: int = 4096, longest: int = 2000) -> None:
        self.fn, self.size, self.longest = fn, size, longest
        self.memo: dict[tuple[object, ...], T] = {}

    def __call__(self, text: str, *rest: object) -> T:
        if len(text) > self.longest:
            return self.fn(text, *rest)
        key = (text, *rest)
        got = self.memo.get(key)
        if got is None:
            if len(self.memo) >= self.size:
                self.memo.clear()
            got = self.memo[key] = self.fn(text, *rest)
        return got


def path_terms(path: str) -> list[str]:
    """Topic terms from a file path: its directory names and stem."""
    parts = re.split(r"[/\\._\-]", path.lower())
    return [p for p in parts if len(p) >= 3 and p not in STOPWORDS
            and p not in {"py", "tests", "test", "src", "lib", "init", "main", "index"}]


_LEAD = re.compile(
    r"^(?:hi|hey|hello|ok(?:ay)?|so|now|please|pls|thanks|can you|could you|would you|"
    r"i want you to|i'd like you to|i need you to|let's|lets|we need to|we should|help me|"
    r"i want to|go ahead and|different thing|another thing|next)\b[\s,:.!]*", re.I)
_CONVENTIONAL = re.compile(r"^(?:feat|fix|chore|refactor|docs|test|perf|build|ci|style)"
                           r"(?:\([^)]*\))?!?:\s*", re.I)


# A lint or formatting pass, named as such and nothing else ("Lint", "Lint fixes", "Format code
# with ruff", "lint: fix warnings"): not "Lint and test with tox-uv" (how CI runs) nor "Format
# the invoice totals as currency" (a feature), which name work beyond the pass.
_PASS = (r"(?:(?:apply|run)\s+)?(?:lint(?:ing)?|format(?:ting)?|re-?format(?:ting|ted)?)"
         r"(?:\s+(?:and|&)\s+(?:lint(?:ing)?|format(?:ting)?|re-?format(?:ting|ted)?))?"
         r"(?:\s+(?:fix(?:es)?|errors?|warnings?|issues?|code|files?|everything|sources?|tests?|"
         r"all(?:\s+files)?|the\s+(?:code(?:base)?|files?|repo(?:sitory)?|sources?|tests?)))*"
         r"(?:\s+(?:with|using|via|by)\s+[\w.\-]+)?\s*(?:\(#\d+\))?\s*$|(?:lint|format)\s*:")

# Subjects that name no effort: a title is never taken from them, and a commit carrying one is
# never linked on file overlap alone (DESIGN §4.1; docs/quality.md "Titles and chores").
# A release, as maintainers name one: "Release 3.1.0", "release version 3.0.5 (#1228)",
# "Prepare release v2.4", "Start version 3.2.0", "Bump version to 1.2", "Version bump", "Back to
# development": the version number is what it names, so none of it names an effort.
_RELEASE = (r"(?:(?:prepare|preparing|cut|cutting|tag|tagging)\s+(?:for\s+|the\s+)?)?"
            r"(?:release|releasing|version|start\s+version|begin\s+version)\s+"
            r"(?:version\s+|for\s+)?v?\d+(?:\.\d+)*(?:[.\-+]?[A-Za-z0-9]+)*\s*"
            r"(?:\((?:#|!)\d+\))?\s*$|"
            r"(?:bump|bumped|bumping|set|update|updated|increment)\s+(?:the\s+)?(?:package\s+)?"
            r"version\b|version\s+bump\b|back\s+to\s+(?:development|dev)\b|post-?release\b|"
            r"v?\d+\.\d+(?:\.\d+)*\s+(?:release|released)\s*(?:\((?:#|!)\d+\))?\s*$|"
            r"(?:release|version)\s+v?\d")
_NO_TITLE = re.compile(
    r"^\s*(?:fixup!|squash!|amend!|merge\b|squashed commit\b|revert\b|wip\b|bump\s|"
    r"update\s+dependenc|(?:chore|build|ci|style|release|deps)(?:\([^)]*\))?!?:|"
    + _RELEASE + r"|v?\d+\.\d+(?:\.\d+)?\s*$|"
    r"(?:apply\s+|run\s+)?(?:ruff|black|prettier|isort|gofmt|rustfmt|clang-format)\b|"
    + _PASS + r"|fix\s+(?:lint(?:ing)?|typos?|formatting)\b)", re.I)
_BOT_AUTHOR = re.compile(r"\[bot\]|dependabot|renovate|github-actions|pre-commit-ci", re.I)
MANIFESTS = re.compile(
    r"(?:^|/)(?:requirements[\w.\-]*\.(?:txt|in)|requirements/[\w.\-]+\.(?:txt|in)|"
    r"constraints\.txt|pyproject\.toml|setup\.cfg|"
    r"setup\.py|Pipfile(?:\.lock)?|poetry\.lock|uv\.lock|package(?:-lock)?\.json|"
    r"yarn\.lock|pnpm-lock\.yaml|Cargo\.(?:toml|lock)|go\.(?:mod|sum)|Gemfile(?:\.lock)?|"
    r"CHANGELOG(?:\.\w+)?|CHANGES(?:\.\w+)?|HISTORY(?:\.\w+)?|VERSION|\.pre-commit-config"
    r"\.yaml|\.github/dependabot\.yml)$", re.I)


# Housekeeping: commits that implement no effort whatever their content says (dependency
# bots and bumps, formatter/lint passes, releases and version tags). A pass is the subject's
# only work: "Lint and test with tox-uv" (a CI change) names more, "Lint and format" does not.
_HOUSEKEEPING = re.compile(
    r"^\s*(?:bump\s|update\s+dependenc|(?:chore|build|ci|style|release|deps)(?:\([^)]*\))?!?:|"
    + _RELEASE + r"|v?\d+\.\d+(?:\.\d+)?\s*$|"
    r"(?:apply\s+|run\s+)?(?:ruff|black|prettier|isort|gofmt|rustfmt|clang-format)\b|"
    + _PASS + r"|fix\s+(?:lint(?:ing)?|typos?|formatting)\b)", re.I)


# The project's running record of changes (not a towncrier fragment, which an effort adds with
# its work): a commit touching only these records a release, or what was merged, after the fact.
CHANGELOGS = re.compile(r"(?:^|/)(?:changelog|changes|history|news|releasing|release[-_]notes)"
                        r"(?:\.\w+)?$", re.I)


def changelog_only(files: tuple[str, ...] | list[str]) -> bool:
    """Only the changelog (CHANGES.rst, CHANGELOG.md, HISTORY, NEWS) changed."""
    return bool(files) and all(CHANGELOGS.search(f) for f in files)


def is_housekeeping(subject: str, author: str = "",
                    files: tuple[str, ...] | list[str] = ()) -> bool:
    """A bot's commit, a dependency bump, a formatting/lint pass, a release or version bump:
    never linked, whatever it touches or whoever wrote its lines. A commit of the changelog
    alone is a chore, not housekeeping (`is_chore`): on the effort's own branch it is the
    effort's entry, written in its session; elsewhere it records a release after the fact and
    file overlap cannot link it (a fixup, squash, wip or other manifest-only commit likewise
    needs content or branch evidence)."""
    del files  # kept in the signature: callers pass what the commit touched
    return bool(_HOUSEKEEPING.match(subject or "")) or bool(_BOT_AUTHOR.search(author or ""))


def is_chore_subject(subject: str) -> bool:
    """A subject that names no effort: fixup/squash/merge/revert, dependency bumps,
    formatting/lint passes, releases and version tags."""
    return bool(_NO_TITLE.match(subject or ""))


def is_chore(subject: str, author: str = "", files: tuple[str, ...] | list[str] = ()) -> bool:
    """A commit that does not implement an effort by itself: a chore subject, a bot author,
    or only manifests, lock files and changelogs touched."""
    if is_chore_subject(subject) or _BOT_AUTHOR.search(author or ""):
        return True
    return bool(files) and all(MANIFESTS.search(f) for f in files)


def strong_link(why: object, user: bool = False) -> bool:
    """A link that rests on more than files and time: the commit's content was written by the
    WorkItem's sessions, or it is on the WorkItem's branch, or a user made it."""
    if user:
        return True
    if not isinstance(why, dict):
        return False
    return bool(why.get("user") or why.get("content") or (why.get("branch") or 0) >= 1)


def title_from_commit(subject: str, max_words: int = 8) -> str:
    """A title from a commit subject ("feat(auth): add OAuth login" -> "Add OAuth login");
    "" for a subject that names no effort (fixup, squash, merge, bump, format, release)."""
    if is_chore_subject(subject):
        return ""
    text = _CONVENTIONAL.sub("", subject.strip()).rstrip(".")
    text = re.sub(r"\s*\((?:#|!)\d+\)\s*$", "", text)
    words = text.split()[:max_words]
    while len(words) > 2 and words[-1].lower() in _DANGLING:
        words.pop()
    if not words:
        return ""
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])


def own_words(prompt: str, branch: str | None = None) -> frozenset[str]:
    """The effort's own words: its opening request's and its branch name's content words
    (`version-at-build` -> version, build)."""
    words = set(tokens(prompt or ""))
    if branch:
        words.update(tokens(re.sub(r"[/_\-.]+", " ", branch.removeprefix("refs/heads/"))))
    return frozenset(words)


def speaks_for(subject: str, own: frozenset[str]) -> bool:
    """Whether a commit subject shares a content word with the effort's own words: a
    subject that shares none ("Yamllint", "Add passing test cases", a tooling move made on
    the way) describes a step, not the work, and titles it only when no subject speaks."""
    return bool(own) and any(t in own for t in tokens(_CONVENTIONAL.sub("", subject or "")))


def creating_first(subjects: list[str], strong: list[bool], own: frozenset[str]) -> list[int]:
    """The order in which an effort's implementing commits (earliest first) are taken as the
    commit that created the work: strongly linked ones first, among them those whose subject
    speaks for the effort's own words first, else the earliest (a stable sort)."""
    return sorted(range(len(subjects)),
                  key=lambda i: (not strong[i], not speaks_for(subjects[i], own)))


_DANGLING = frozenset({"a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with",
                       "from", "by", "at", "so", "that", "this", "our", "my", "your", "its"})


def title_from_prompt(prompt: str, max_words: int = 7) -> str:
    """A short Title Case title from the first user prompt of a window."""
    text = re.sub(r"```.*?```", " ", prompt, flags=re.S)
    text = re.sub(r"\s+", " ", text).strip()
    first = re.split(r"(?<=[.!?])\s|\n", text, maxsplit=1)[0]
    prev = None
    while prev != first:
        prev = first
        first = _LEAD.sub("", first).strip()
    words = [w.strip(".,;:!?\"'()[]") for w in first.split()]
    words = [w for w in words if w][:max_words]
    # Never end on a dangling connective ("... with PKCE for the").
    while len(words) > 2 and words[-1].lower() in _DANGLING:
        words.pop()
    if not words:
        return "Untitled work"
    small = {"a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with", "from", "by"}
    titled = [w if (w.isupper() and len(w) > 1) or any(c.isupper() for c in w[1:])
              else (w if (i and w.lower() in small) else w[:1].upper() + w[1:])
              for i, w in enumerate(words)]
    return " ".join(titled)


def cosine(a: Counter[str], b: Counter[str]) -> float:
    """Cosine similarity of two term-count vectors (0 when either is empty)."""
    if not a or not b:
        return 0.0
    dot = sum(v * b.get(k, 0) for k, v in a.items())
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0
