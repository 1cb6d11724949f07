"""What a WorkItem's files say of its kind (pipeline/kinds.py): the type of a changelog
fragment among them, whether they are only the project's tooling, and the names of the
modules it changed (in its requests and subjects those name the thing worked on, no kind)."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Changelog fragments: towncrier (`changelog.d/123.bugfix.md`, `newsfragments/45.feature.rst`,
# `changes/+orphan.fix.md`) and changie (`.changes/unreleased/Fixed-20240101-120000.yaml`).
_TOWNCRIER = re.compile(
    r"(?:^|/)(?:changelog\.d|changelog|changes|news|newsfragments|changelog_fragments|"
    r"\.changelog)/(?:[^/]+/)*[^/]*?\.(?P<t>[A-Za-z]+)(?:\.\d+)?"
    r"(?:\.(?:md|rst|txt|markdown))?$")
_CHANGIE = re.compile(r"(?:^|/)\.changes/unreleased/(?P<t>[A-Za-z]+)[-_ ]")
_FRAGMENT_KIND = {"feature": "feature", "features": "feature", "feat": "feature",
                  "added": "feature", "enhancement": "feature", "bugfix": "bugfix",
                  "bugfixes": "bugfix", "bug": "bugfix", "fix": "bugfix", "fixes": "bugfix",
                  "fixed": "bugfix", "security": "bugfix", "refactor": "refactor",
                  "refactoring": "refactor", "perf": "refactor", "performance": "refactor"}


def fragment_kinds(files: Iterable[str]) -> set[str]:
    """Kinds named by changelog fragments among `files` (towncrier and changie types)."""
    out = set()
    for f in files:
        m = _TOWNCRIER.search(f) or _CHANGIE.search(f)
        if m and (kind := _FRAGMENT_KIND.get(m.group("t").lower())):
            out.add(kind)
    return out


# The project's tooling: how it is built, tested, linted and released, not what it does.
_TOOLING = re.compile(
    r"(?:^|/)(?:\.github/|\.gitlab-ci\.yml$|\.gitlab/|\.circleci/|\.azure-pipelines|"
    r"azure-pipelines\.yml$|\.travis\.yml$|appveyor\.yml$|\.buildkite/|Jenkinsfile$|"
    r"tox\.ini$|noxfile\.py$|\.pre-commit-config\.yaml$|\.pre-commit-hooks\.yaml$|"
    r"pyproject\.toml$|setup\.cfg$|setup\.py$|MANIFEST\.in$|requirements[\w.\-]*\.txt$|"
    r"constraints\.txt$|Pipfile(?:\.lock)?$|poetry\.lock$|uv\.lock$|package(?:-lock)?\.json$|"
    r"yarn\.lock$|pnpm-lock\.yaml$|\.gitignore$|\.gitattributes$|\.editorconfig$|"
    r"mypy\.ini$|\.flake8$|\.pylintrc$|ruff\.toml$|\.ruff\.toml$|\.coveragerc$|pytest\.ini$|"
    r"\.readthedocs\.ya?ml$|renovate\.json5?$|\.yamllint(?:\.ya?ml)?$|codecov\.ya?ml$)")
# Files that record the work (changelogs, authors, READMEs): neither tooling nor code.
_RECORD = re.compile(r"(?:^|/)(?:changelog|changes|history|news|authors|contributors|readme)"
                     r"(?:\.\w+)?$", re.I)


def tooling_only(files: Iterable[str]) -> bool:
    """The files changed are the project's tooling (and records of the work), no code,
    tests or docs: upkeep, whatever the request called it."""
    seen = False
    for f in files:
        if _TOOLING.search(f):
            seen = True
        elif not _RECORD.search(f):
            return False
    return seen


_WORD = re.compile(r"[A-Za-z]+")


def module_names(files: Iterable[str]) -> frozenset[str]:
    """The names of the modules the work changed (`rich/traceback.py`: "traceback"): in its
    requests and subjects such a word names the thing worked on, not the kind of work
    ("rich's traceback only highlights the line" reports no bug)."""
    names = set()
    for f in files:
        base = f.rsplit("/", 1)[-1]
        stem = base.rsplit(".", 1)[0].lower() if "." in base else ""
        if len(stem) >= 4 and stem.isalpha() and not _RECORD.search(base):
            names.add(stem)
    return frozenset(names)


def module_masked(text: str, names: frozenset[str]) -> str:
    """`text` with the words in `names` (or their plurals) replaced by a neutral one."""
    low = text.lower()
    if not any(n in low for n in names):
        return text  # (the common case, without a call per word)

    def one(m: re.Match[str]) -> str:
        w = m.group(0).lower()
        return "module" if w in names or (w.endswith("s") and w[:-1] in names) else m.group(0)
    return _WORD.sub(one, text)
