"""Shell-command helpers for every adapter: is this a test run, and did it pass."""

from __future__ import annotations

import re

# Programs/subcommands that run a test suite. Matched against each `&&`/`;`/`|` segment.
_TEST_RE = re.compile(
    r"""(?x)(?:^|\s|/)(
        pytest | py\.test | tox | nox | unittest | nosetests
      | (?:python\d?(?:\.\d+)?\s+-m\s+(?:pytest|unittest))
      | (?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test(?::\S+)?
      | (?:npx\s+)?(?:jest|vitest|mocha|ava|karma|playwright\s+test|cypress\s+run)
      | go\s+test | cargo\s+(?:test|nextest) | mvn\s+(?:\S+\s+)*test | gradlew?\s+(?:\S+\s+)*test
      | dotnet\s+test | rspec | (?:bundle\s+exec\s+)?rake\s+test | phpunit | mix\s+test
      | ctest | make\s+(?:check|test) | deno\s+test | swift\s+test | zig\s+build\s+test
    )(?:\s|$)""")

_FAIL_RE = re.compile(
    r"(?m)(\b\d+\s+failed\b|^FAILED\b|^FAIL\b|\bFAILURES?\b|test result: FAILED|"
    r"Tests:\s+\d+\s+failed|\b\d+\s+errors?\b(?=.*\bin\s+[\d.]+s)|^--- FAIL|"
    r"\bAssertionError\b)")
_PASS_RE = re.compile(
    r"(?m)(\b\d+\s+passed\b|test result: ok\.|^ok\s+\S+|^PASS\b|Tests:\s+\d+\s+passed|"
    r"\bAll tests passed\b|^OK(?:\s|$))")
_EXIT_RE = re.compile(r"(?:^|\n)\s*(?:Exit code|exit code|exit status|Exit status)[:\s]+(-?\d+)")


def is_test_command(command: str | None) -> bool:
    """True when a shell command line runs a test suite (pytest, npm test, go test, ...)."""
    if not command:
        return False
    for segment in re.split(r"&&|\|\||;|\|", command):
        if _TEST_RE.search(" " + segment.strip()):
            return True
    return False


def exit_code_from_output(output: str | None) -> int | None:
    """An exit code stated in tool output ("Exit code 2"), else None."""
    if not output:
        return None
    m = _EXIT_RE.search(output[:2000])
    return int(m.group(1)) if m else None


def test_outcome(command: str | None, exit_code: int | None, output: str | None) -> str | None:
    """"passed" / "failed" for a test command, from its exit code, else from its output.

    None when the command is not a test run or the outcome cannot be told.
    """
    if not is_test_command(command):
        return None
    if exit_code is not None:
        return "passed" if exit_code == 0 else "failed"
    if output:
        tail = output[-20000:]  # summaries are at the end; bound the regex work
        if _FAIL_RE.search(tail):
            return "failed"
        if _PASS_RE.search(tail):
            return "passed"
    return None
