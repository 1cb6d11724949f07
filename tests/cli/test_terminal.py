"""On an 80-column terminal lines fit; long listings go through the pager as git's do."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.cli.ptyrun import PtyRun
from tests.cli.test_interrupt_tty import _screen_lines


def test_lines_fit_80_columns(scenario) -> None:
    repo, env, _ = scenario
    env = dict(env, PAGER="cat")
    for args in (("work",), ("resume", "search"), ("resume", "oauth login"),
                 ("ask", "why postgres instead of redis"), ("log", "-n", "30")):
        run = PtyRun(repo, *args, env=env, cols=80)
        assert run.wait(120) == 0, run.text
        lines = _screen_lines(run.text)
        assert lines, args
        too_long = [ln for ln in lines if len(ln) > 80]
        assert not too_long, (args, too_long)


def test_long_listings_use_the_pager_on_a_tty(scenario, tmp_path: Path) -> None:
    repo, env, _ = scenario
    pager = tmp_path / "pager.sh"
    pager.write_text(f"#!/bin/sh\necho PAGED >> {tmp_path / 'paged'}\ncat\n")
    pager.chmod(pager.stat().st_mode | stat.S_IEXEC)
    env = dict(env, PAGER=str(pager))
    run = PtyRun(repo, "log", env=env, cols=80)  # the scenario's log is longer than 24 lines
    assert run.wait(120) == 0
    assert (tmp_path / "paged").read_text().count("PAGED") == 1
    run = PtyRun(repo, "--no-pager", "log", env=env, cols=80)
    assert run.wait(120) == 0
    assert (tmp_path / "paged").read_text().count("PAGED") == 1  # not paged again
    # core.pager wins over PAGER, as in git
    from tests.helpers import git

    git(repo, "config", "core.pager", "cat")
    run = PtyRun(repo, "log", env=env, cols=80)
    assert run.wait(120) == 0 and (tmp_path / "paged").read_text().count("PAGED") == 1
